#pragma once
// doctor's proof that a MySQL tool can run as the configured account: its statement prepared on
// the live server exactly as a call prepares it (Connection::describe: the call's text, in START
// TRANSACTION READ ONLY), never executed. Preparing resolves every table, view, column and stored
// function the statement names and checks the account's privileges on each (MariaDB 10.11 and
// MySQL 8 both do this at prepare time), and opens every view it reads, so a view over a table
// since dropped fails here too. No parameter is bound and no row is read: a finding quotes the
// server's message, which names objects and accounts only (errors.hpp keeps no other).

#include <string>
#include <string_view>

#include "common/result.hpp"
#include "engines/engine.hpp"

namespace mcpdb::mysql {

// The finding for `tool` from the error of preparing `statement` (unqualified names are in
// `default_schema`, the source's database): Unusable with the fix for a missing table, column,
// view or function or a missing privilege (MariaDB reports an object the account may not see as
// denied, not as missing: the fix says both); Inconclusive when the server could not be asked.
engines::Finding preparedToolFinding(const std::string& tool, const Error& prepare_error,
                                     std::string_view statement, std::string_view default_schema);

// The finding for a tool whose statement prepared.
engines::Finding preparedToolOk(const std::string& tool);

// The check id of a tool's findings: "mysql.tool.<name>" (doctor counts the ".tool." ones).
std::string toolCheckId(const std::string& tool);

}  // namespace mcpdb::mysql
