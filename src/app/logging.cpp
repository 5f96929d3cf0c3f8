#include "app/logging.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <memory>

#include "app/app.hpp"

namespace mcpdb::app {

void setupLogging(const Env& env) {
  auto logger = std::make_shared<spdlog::logger>(
      "mcp-dbserver",
      std::make_shared<spdlog::sinks::stderr_color_sink_mt>(spdlog::color_mode::never));
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
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
