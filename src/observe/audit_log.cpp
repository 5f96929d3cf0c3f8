#include "observe/audit_log.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>

#include "common/json.hpp"
#include "protocol/jsonrpc.hpp"

namespace mcpdb::observe {
namespace {

std::string isoTime(AuditLog::SystemClock::time_point at) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(ms % 1000));
  return out;
}

// Tool names of unknown tools are agent text: they never reach the log.
std::string toolLabel(const protocol::CallRecord& r) {
  return r.outcome == "unknown_tool" ? "<unknown>" : r.tool;
}

}  // namespace

void parseAuditSettings(const config::Node& section, AuditSettings& out) {
  if (!section.present()) return;
  if (!section.expectMap({"enabled", "path"})) return;
  if (auto v = section.boolean("enabled")) out.enabled = *v;
  if (auto v = section.string("path")) {
    if (v->empty()) {
      section.child("path").error("must be \"stderr\" or a file path");
    } else {
      out.path = *v;
    }
  }
}

Result<std::shared_ptr<AuditLog>> AuditLog::open(const AuditSettings& settings) {
  std::shared_ptr<AuditLog> log(new AuditLog());
  if (settings.path == "stderr" || settings.path == "-") return log;
  log->path_ = settings.path;
  log->file_ = std::fopen(settings.path.c_str(), "ae");
  if (log->file_ == nullptr) {
    return makeError(Code::FailedPrecondition,
                     "cannot open the audit log '" + settings.path + "': " + std::strerror(errno));
  }
  return log;
}

AuditLog::~AuditLog() {
  if (file_ != nullptr) std::fclose(file_);
}

void AuditLog::reopen() {
  std::lock_guard<std::mutex> lock(mu_);
  if (path_.empty()) return;
  if (std::FILE* f = std::fopen(path_.c_str(), "ae")) {
    if (file_ != nullptr) std::fclose(file_);
    file_ = f;
  }
}

std::string AuditLog::formatCall(const protocol::CallRecord& r, SystemClock::time_point at) {
  Json line = {
      {"time", isoTime(at)},
      {"event", "tool_call"},
      {"client", r.client_id},
      {"tool", toolLabel(r)},
      {"engine", r.engine},
      {"outcome", r.outcome},
      {"duration_ms", static_cast<double>(r.duration.count()) / 1000.0},
      {"rows", r.rows},
      {"bytes", r.bytes},
      {"request_id", r.request_id},
  };
  return protocol::serialize(line);
}

std::string AuditLog::formatRefusal(const Refusal& r, SystemClock::time_point at) {
  Json line = {
      {"time", isoTime(at)},
      {"event", "refused"},
      {"client", r.client_id.empty() ? "-" : r.client_id},
      {"outcome", r.reason},
      {"status", r.status},
      {"method", r.method},
      {"request_id", r.request_id},
  };
  return protocol::serialize(line);
}

void AuditLog::onCall(const protocol::CallRecord& record) {
  write(formatCall(record, SystemClock::now()));
}

void AuditLog::onRefused(const Refusal& refusal) {
  write(formatRefusal(refusal, SystemClock::now()));
}

void AuditLog::write(const std::string& line) {
  std::lock_guard<std::mutex> lock(mu_);
  if (sink_) {
    sink_(line);
    return;
  }
  std::FILE* f = file_ != nullptr ? file_ : stderr;
  std::fwrite(line.data(), 1, line.size(), f);
  std::fputc('\n', f);
  std::fflush(f);
}

}  // namespace mcpdb::observe
