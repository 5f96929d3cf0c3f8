#pragma once
// The operator's log (stderr): text or JSON lines, timestamps in UTC.

#include <spdlog/formatter.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/env.hpp"

namespace mcpdb::app {

enum class LogFormat { Text, Json };

// "text" or "json" (exactly), else nullopt.
std::optional<LogFormat> parseLogFormat(std::string_view text);

// The formatter of one log line: text is "2026-12-05T14:59:18.123Z info message"; JSON is one
// object per line, {"time":"2026-12-05T14:59:18.123Z","level":"info","message":"..."}, the
// message escaped (bytes that are not UTF-8 replaced), so a log collector parses every line.
std::unique_ptr<spdlog::formatter> makeLogFormatter(LogFormat format);

// The logger; MCPDB_LOG_LEVEL was validated by assemble() (an invalid one logs at info until
// assemble() refuses it, so that refusal is seen).
//
// The operator's log goes to stderr only, never to an MCP client as notifications/message: its
// lines name hosts, ports, roles, databases, objects and fixes (self-check findings, connection
// errors), which the MCP specification says log messages to a client must not carry.
void setupLogging(const Env& env, LogFormat format = LogFormat::Text);

}  // namespace mcpdb::app
