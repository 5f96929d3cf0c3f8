#include "common/result.hpp"

namespace mcpdb {

std::string_view codeName(Code code) {
  switch (code) {
    case Code::InvalidArgument: return "invalid_argument";
    case Code::NotFound: return "not_found";
    case Code::PermissionDenied: return "permission_denied";
    case Code::TimedOut: return "timed_out";
    case Code::Unavailable: return "unavailable";
    case Code::ResourceExhausted: return "resource_exhausted";
    case Code::Cancelled: return "cancelled";
    case Code::FailedPrecondition: return "failed_precondition";
    case Code::Internal: return "internal";
  }
  return "internal";
}

}  // namespace mcpdb
