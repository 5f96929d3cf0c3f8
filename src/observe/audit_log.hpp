#pragma once
// The audit log: one JSON line per tool call and per refused request. A line holds who, what
// tool/engine, the outcome, duration, sizes and a request id; never argument values, rows or keys
// (CallRecord carries none, and refusals carry only a reason code).

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "config/section.hpp"
#include "protocol/session.hpp"

namespace mcpdb::observe {

// Appends "YYYY-MM-DDTHH:MM:SS.mmmZ" (UTC): the time of every audit line and log line.
void appendIsoTime(std::string& out, std::chrono::system_clock::time_point at);

struct AuditSettings {
  bool enabled = true;
  std::string path = "stderr";  // "stderr" or a file (opened for append)
};

// The top-level `audit:` section's declaration, and reading it.
const config::Section<AuditSettings>& auditSection();
void parseAuditSettings(const config::Node& section, AuditSettings& out);

// A request refused before it reached a tool (HTTP layer).
struct Refusal {
  std::string client_id;  // "-" when no client was identified
  std::string
      reason;      // short code: unauthorized, forbidden_host, forbidden_origin, rate_limited, ...
  int status = 0;  // HTTP status sent
  std::string method;        // HTTP method
  std::string request_id;    // the server's id of the HTTP request (16 hex digits), also sent to
                             // the client as X-Request-Id
  std::string source;        // the peer (or trusted-proxy-forwarded) address; omitted when empty
  std::size_t failures = 0;  // consecutive wrong keys of the source (auth_throttled); 0: omitted
};

class AuditLog : public protocol::CallObserver {
 public:
  using Sink = std::function<void(std::string_view line)>;
  using SystemClock = std::chrono::system_clock;

  // Opens the configured destination; an error when the file cannot be opened.
  static Result<std::shared_ptr<AuditLog>> open(const AuditSettings& settings);
  // Writes lines to `sink` (tests).
  explicit AuditLog(Sink sink) : sink_(std::move(sink)) {}
  ~AuditLog() override;
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  void onCall(const protocol::CallRecord& record) override;
  void onRefused(const Refusal& refusal);
  // Reopens the file (log rotation on SIGHUP); no-op for stderr.
  void reopen();

  static std::string formatCall(const protocol::CallRecord& record, SystemClock::time_point at);
  static std::string formatRefusal(const Refusal& refusal, SystemClock::time_point at);

 private:
  AuditLog() = default;
  void write(std::string line);

  std::mutex mu_;
  Sink sink_;
  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace mcpdb::observe
