#include "engines/mysql/tool_check.hpp"

#include <optional>
#include <vector>

#include "engines/mysql/errors.hpp"
#include "engines/mysql/lexer.hpp"
#include "engines/mysql/names.hpp"

namespace mcpdb::mysql {
namespace {

using engines::Finding;
using Sev = Finding::Severity;
using guard::quoteName;

// The text after `marker` in `message` up to `end` (or the end), or nullopt.
std::optional<std::string> after(std::string_view message, std::string_view marker,
                                 std::string_view end = {}) {
  const auto at = message.find(marker);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = message.substr(at + marker.size());
  if (!end.empty()) rest = rest.substr(0, rest.find(end));
  return std::string(rest);
}

// 'name' (the server's quoting of a bare name) without its quotes; other text as it is.
std::string unquoted(std::string text) {
  if (text.size() >= 2 && text.front() == '\'' && text.back() == '\'') {
    return text.substr(1, text.size() - 2);
  }
  return text;
}

// The first quoted name after `marker`: "for column 'c' in" -> c.
std::optional<std::string> quotedAfter(std::string_view message, std::string_view marker) {
  auto rest = after(message, std::string(marker) + "'");
  if (!rest) return std::nullopt;
  return rest->substr(0, rest->find('\''));
}

// A table the server named bare ('t'), schema-qualified as the statement reads it. Every name of
// the statement is a candidate in the default schema too (names.hpp), so a schema the statement
// writes (s.t) is preferred when there is exactly one; else the source's database.
std::string qualifiedTable(const std::string& table, std::string_view statement,
                           std::string_view default_schema) {
  std::vector<std::string> written;
  bool in_default = false;
  for (const auto& name : guard::collectNames(statement, default_schema).names) {
    if (name.size() != 2 || name[1] != table) continue;
    if (name[0] == default_schema) {
      in_default = true;
    } else {
      written.push_back(name[0]);
    }
  }
  std::string schema;
  if (written.size() == 1) {
    schema = written[0];
  } else if (in_default) {
    schema = std::string(default_schema);
  }
  return schema.empty() ? quoteName(table) : quoteName(schema) + "." + quoteName(table);
}

// A table as the server named it: `db`.`t` kept, 't' qualified (qualifiedTable).
std::string tableAsNamed(const std::string& named, std::string_view statement,
                         std::string_view default_schema) {
  if (!named.empty() && named.front() == '`') return named;
  return qualifiedTable(unquoted(named), statement, default_schema);
}

constexpr std::string_view kHiddenNote =
    "\nor, if it does not exist, correct the statement in the config (the server reports an "
    "object this account may not see as denied, not as missing)";

// `reason` is what the finding shows, `server` the server's own message the fix is read from.
Finding privilegeFinding(const std::string& tool, unsigned number, const std::string& reason,
                         const std::string& server, std::string_view statement,
                         std::string_view default_schema) {
  const std::string account = after(server, "to user ", " for ").value_or("<the account>");
  std::string fix;
  if (number == 1142) {
    const auto table = after(server, " for table ");
    fix = "GRANT SELECT ON " +
          (table ? tableAsNamed(*table, statement, default_schema) : std::string("<table>")) +
          " TO " + account + ";" + std::string(kHiddenNote);
  } else if (number == 1143) {
    const auto column = quotedAfter(server, " for column ");
    const auto table = quotedAfter(server, " in table ");
    fix = "GRANT SELECT (" + quoteName(column.value_or("<column>")) + ") ON " +
          (table ? qualifiedTable(*table, statement, default_schema) : std::string("<table>")) +
          " TO " + account + ";" + std::string(kHiddenNote);
  } else if (number == 1370) {
    const auto routine = quotedAfter(server, " for routine ");
    fix = "GRANT EXECUTE ON FUNCTION " + routine.value_or("<function>") + " TO " + account + ";" +
          std::string(kHiddenNote);
  } else {
    const std::string who = after(server, "for user ", " to ").value_or("<the account>");
    fix = "grant " + who + " SELECT on the objects the statement reads" + std::string(kHiddenNote);
  }
  return {Sev::Unusable, toolCheckId(tool),
          "tool '" + tool + "' cannot run as the configured account: " + reason, fix};
}

}  // namespace

std::string toolCheckId(const std::string& tool) {
  return "mysql.tool." + tool;
}

Finding preparedToolOk(const std::string& tool) {
  return {Sev::Ok, toolCheckId(tool),
          "tool '" + tool +
              "': prepared on the server as the configured account (every table, column and "
              "privilege it names resolved) and every stored function and view it reaches was "
              "checked"};
}

Finding preparedToolFinding(const std::string& tool, const Error& prepare_error,
                            std::string_view statement, std::string_view default_schema) {
  const unsigned number = errorNumberOf(prepare_error);
  const std::string reason = prepare_error.detail.empty()
                                 ? prepare_error.message
                                 : prepare_error.detail + " (error " + std::to_string(number) + ")";
  switch (prepare_error.code) {
    case Code::Unavailable:
    case Code::TimedOut:
    case Code::Cancelled:
    case Code::ResourceExhausted:
      return {Sev::Inconclusive, toolCheckId(tool),
              "tool '" + tool + "' could not be checked: " + operatorText(prepare_error)};
    default: break;
  }
  const std::string what = "tool '" + tool + "' cannot run: ";
  switch (number) {
    case 1044:
    case 1142:
    case 1143:
    case 1370:
      return privilegeFinding(tool, number, reason, prepare_error.detail, statement,
                              default_schema);
    case 1049:
    case 1146:
      return {Sev::Unusable, toolCheckId(tool), what + reason,
              "create it, or correct the statement in the config (an unqualified table is looked "
              "up in the source's database" +
                  (default_schema.empty() ? std::string() : ", " + std::string(default_schema)) +
                  ")"};
    case 1054:
    case 1052:
    case 1109:
      return {Sev::Unusable, toolCheckId(tool), what + reason,
              "correct the statement in the config: name a column of the tables it reads (SHOW "
              "COLUMNS FROM <table> lists them)"};
    case 1305:
      return {Sev::Unusable, toolCheckId(tool), what + reason,
              "create the function, or correct the statement in the config"};
    case 1356:
    case 1449: {
      const auto view = quotedAfter(prepare_error.detail, "View ");
      return {Sev::Unusable, toolCheckId(tool), what + reason,
              "recreate " + (view ? "view " + *view : std::string("the view")) +
                  " so that every table, column and function it names exists and its definer "
                  "(SQL SECURITY DEFINER) or this account (SQL SECURITY INVOKER) may read them; "
                  "SHOW CREATE VIEW shows what it names"};
    }
    case errnum::kReadOnlyTransaction:
      // Preparing opens the tables a stored function writes: it cannot run in a READ ONLY call.
      return {Sev::Unusable, toolCheckId(tool), what + reason,
              "the statement reaches a stored function that writes: take it out of the statement "
              "(and out of mysql.allowed_functions)"};
    default:
      return {Sev::Unusable, toolCheckId(tool),
              what + "the server refused to prepare it: " + reason,
              "correct the statement in the config"};
  }
}

}  // namespace mcpdb::mysql
