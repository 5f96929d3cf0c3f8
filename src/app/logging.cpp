#include "app/logging.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>

#include "app/app.hpp"
#include "common/json_text.hpp"
#include "observe/audit_log.hpp"

namespace mcpdb::app {
namespace {

// One JSON object per line. Written here: spdlog formats text patterns only, and its %v does not
// escape the message.
class JsonLineFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    std::string line = R"({"time":")";
    observe::appendIsoTime(line, msg.time);
    line += R"(","level":")";
    const auto level = spdlog::level::to_string_view(msg.level);
    line.append(level.data(), level.size());
    line += R"(","message":)";
    appendJsonString(line, std::string_view(msg.payload.data(), msg.payload.size()));
    line += "}\n";
    dest.append(line.data(), line.data() + line.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonLineFormatter>();
  }
};

}  // namespace

std::optional<LogFormat> parseLogFormat(std::string_view text) {
  if (text == "text") return LogFormat::Text;
  if (text == "json") return LogFormat::Json;
  return std::nullopt;
}

std::unique_ptr<spdlog::formatter> makeLogFormatter(LogFormat format) {
  if (format == LogFormat::Json) return std::make_unique<JsonLineFormatter>();
  return std::make_unique<spdlog::pattern_formatter>("%Y-%m-%dT%H:%M:%S.%eZ %l %v",
                                                     spdlog::pattern_time_type::utc);
}

void setupLogging(const Env& env, LogFormat format) {
  auto logger = std::make_shared<spdlog::logger>(
      "mcp-dbserver",
      std::make_shared<spdlog::sinks::stderr_color_sink_mt>(spdlog::color_mode::never));
  logger->set_formatter(makeLogFormatter(format));
  const auto level = parseLogLevel(env.get("MCPDB_LOG_LEVEL").value_or("info"));
  logger->set_level(level ? static_cast<spdlog::level::level_enum>(*level) : spdlog::level::info);
  spdlog::set_default_logger(logger);
}

std::optional<int> parseLogLevel(std::string_view text) {
  std::string s;
  for (char c : text) s += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (s == "trace") return spdlog::level::trace;
  if (s == "debug") return spdlog::level::debug;
  if (s == "info") return spdlog::level::info;
  if (s == "warn" || s == "warning") return spdlog::level::warn;
  if (s == "error" || s == "err") return spdlog::level::err;
  if (s == "critical") return spdlog::level::critical;
  if (s == "off") return spdlog::level::off;
  return std::nullopt;
}

}  // namespace mcpdb::app
