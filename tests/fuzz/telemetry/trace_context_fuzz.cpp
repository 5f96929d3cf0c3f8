// libFuzzer target: the W3C trace context parser (telemetry/trace_context.hpp), which reads what
// any caller sends in the traceparent/tracestate headers or params._meta. The input is split at
// the first '\n' into a traceparent and a tracestate. Invariants: a traceparent that passes is
// exactly 55 bytes of version 00 with non-zero ids and formats back to the same text (flags
// aside, which are kept as sent); a tracestate that passes is at most 512 bytes, holds at most
// 32 members, and reads back unchanged (its normal form is a fixed point).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "telemetry/trace_context.hpp"

using namespace mcpdb::telemetry;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const auto nl = in.find('\n');
  const std::string_view parent = in.substr(0, nl);
  const std::string_view state =
      nl == std::string_view::npos ? std::string_view() : in.substr(nl + 1);

  if (auto ctx = parseTraceparent(parent)) {
    if (parent.size() != kTraceparentBytes || allZero(ctx->trace_id) || allZero(ctx->span_id))
      std::abort();
    if (formatTraceparent(ctx->trace_id, ctx->span_id, ctx->flags) != parent) std::abort();
  }
  if (auto normal = parseTracestate(state)) {
    if (normal->size() > kMaxTracestateBytes) std::abort();
    std::size_t members = normal->empty() ? 0 : 1;
    for (char c : *normal) members += c == ',' ? 1 : 0;
    if (members > kMaxTracestateMembers) std::abort();
    auto again = parseTracestate(*normal);
    if (!again || *again != *normal) std::abort();
  }
  if (auto both = extractContext(parent, state)) {
    if (!parseTraceparent(parent)) std::abort();
    if (both->trace_state.size() > kMaxTracestateBytes) std::abort();
  }
  return 0;
}
