#include "observe/audit_log.hpp"

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <ctime>

#include "common/json.hpp"
#include "common/json_text.hpp"
#include "protocol/jsonrpc.hpp"

namespace mcpdb::observe {

// Appends "YYYY-MM-DDTHH:MM:SS.mmmZ". The part up to the seconds is formatted once per second
// per thread.
void appendIsoTime(std::string& out, AuditLog::SystemClock::time_point at) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  thread_local std::time_t cached_secs = -1;
  thread_local char cached[24] = {};
  if (secs != cached_secs) {
    std::tm tm{};
    gmtime_r(&secs, &tm);
    if (std::strftime(cached, sizeof cached, "%Y-%m-%dT%H:%M:%S", &tm) == 0) cached[0] = '\0';
    cached_secs = secs;
  }
  out.append(cached);
  const int frac = static_cast<int>(ms % 1000);
  const char tail[5] = {'.', static_cast<char>('0' + frac / 100),
                        static_cast<char>('0' + frac / 10 % 10), static_cast<char>('0' + frac % 10),
                        'Z'};
  out.append(tail, sizeof tail);
}

namespace {

void appendUnsigned(std::string& out, std::uint64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// Microseconds as milliseconds, written as serialize() writes the double us / 1000.0 (shortest
// form: "1.5", "12.0", "0.004"), without going through a double.
void appendMillis(std::string& out, std::int64_t us) {
  if (us < 0) {
    out.append(protocol::serialize(Json(static_cast<double>(us) / 1000.0)));
    return;
  }
  appendUnsigned(out, static_cast<std::uint64_t>(us / 1000));
  int frac = static_cast<int>(us % 1000);
  char digits[4] = {'.', static_cast<char>('0' + frac / 100),
                    static_cast<char>('0' + frac / 10 % 10), static_cast<char>('0' + frac % 10)};
  std::size_t n = 4;
  while (n > 2 && digits[n - 1] == '0') --n;
  out.append(digits, n);
}

void appendField(std::string& out, std::string_view key, std::string_view value) {
  out.push_back('"');
  out.append(key);
  out.append("\":");
  appendJsonString(out, value);
}

// Tool names of unknown tools are agent text: they never reach the log.
std::string toolLabel(const protocol::CallRecord& r) {
  return r.outcome == "unknown_tool" ? "<unknown>" : r.tool;
}

}  // namespace

const config::Section<AuditSettings>& auditSection() {
  static const auto s =
      config::Section<AuditSettings>(
          "the audit log: one JSON line per tool call and per refused request, without "
          "argument values, rows or keys")
          .boolean("enabled", &AuditSettings::enabled, "write the audit log")
          .string("path", &AuditSettings::path,
                  "`stderr` (beside the operator's log: each audit line is a JSON object with an "
                  "\"event\" member), or a file of its own, opened for append (reopened on "
                  "SIGHUP under `serve --http`, for log rotation)",
                  config::kOptional,
                  [](std::string_view p) {
                    return p.empty() ? "must be \"stderr\" or a file path" : "";
                  })
          .example("/var/log/mcp-dbserver/audit.jsonl")
          .exampleYaml("audit:\n  path: /var/log/mcp-dbserver/audit.jsonl\n");
  return s;
}

void parseAuditSettings(const config::Node& section, AuditSettings& out) {
  if (section.present()) (void)auditSection().parse(section, out);
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

// Lines are written directly, keys in the order serialize() writes a Json object (sorted), so
// the bytes are what the Json form would give without building one per call.
std::string AuditLog::formatCall(const protocol::CallRecord& r, SystemClock::time_point at) {
  std::string line;
  line.reserve(224 + r.client_id.size() + r.tool.size() + r.request_id.size() + r.source.size());
  line.append(R"({"bytes":)");
  appendUnsigned(line, r.bytes);
  line.push_back(',');
  appendField(line, "client", r.client_id);
  line.append(R"(,"duration_ms":)");
  appendMillis(line, r.duration.count());
  line.push_back(',');
  appendField(line, "engine", r.engine);
  line.append(R"(,"event":"tool_call",)");
  appendField(line, "outcome", r.outcome);
  line.push_back(',');
  appendField(line, "request_id", r.request_id);
  line.append(R"(,"rows":)");
  appendUnsigned(line, r.rows);
  if (!r.source.empty()) {
    line.push_back(',');
    appendField(line, "source", r.source);
  }
  line.append(R"(,"time":")");
  appendIsoTime(line, at);
  line.append(R"(",)");
  appendField(line, "tool", toolLabel(r));
  if (r.truncated) line.append(R"(,"truncated":true)");
  line.push_back('}');
  return line;
}

std::string AuditLog::formatRefusal(const Refusal& r, SystemClock::time_point at) {
  std::string line;
  line.reserve(160 + r.client_id.size() + r.reason.size() + r.method.size());
  line.push_back('{');
  appendField(line, "client", r.client_id.empty() ? "-" : r.client_id);
  line.append(R"(,"event":"refused",)");
  if (r.failures > 0) {
    line.append(R"("failures":)");
    line.append(std::to_string(r.failures));
    line.push_back(',');
  }
  appendField(line, "method", r.method);
  line.push_back(',');
  appendField(line, "outcome", r.reason);
  line.push_back(',');
  appendField(line, "request_id", r.request_id);
  if (!r.source.empty()) {
    line.push_back(',');
    appendField(line, "source", r.source);
  }
  line.append(R"(,"status":)");
  line.append(std::to_string(r.status));
  line.append(R"(,"time":")");
  appendIsoTime(line, at);
  line.append(R"("})");
  return line;
}

void AuditLog::onCall(const protocol::CallRecord& record) {
  write(formatCall(record, SystemClock::now()));
}

void AuditLog::onRefused(const Refusal& refusal) {
  write(formatRefusal(refusal, SystemClock::now()));
}

void AuditLog::write(std::string line) {
  line.push_back('\n');
  std::lock_guard<std::mutex> lock(mu_);
  if (sink_) {
    sink_(std::string_view(line).substr(0, line.size() - 1));
    return;
  }
  // One fwrite of the whole line: a single write(2) on unbuffered stderr, whole lines in a file.
  std::FILE* f = file_ != nullptr ? file_ : stderr;
  std::fwrite(line.data(), 1, line.size(), f);
  std::fflush(f);
}

}  // namespace mcpdb::observe
