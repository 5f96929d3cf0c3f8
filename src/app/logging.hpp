#pragma once
// The operator's log (stderr).

#include "common/env.hpp"

namespace mcpdb::app {

// The logger; MCPDB_LOG_LEVEL was validated by assemble() (an invalid one logs at info until
// assemble() refuses it, so that refusal is seen).
//
// The operator's log goes to stderr only, never to an MCP client as notifications/message: its
// lines name hosts, ports, roles, databases, objects and fixes (self-check findings, connection
// errors), which the MCP specification says log messages to a client must not carry.
void setupLogging(const Env& env);

}  // namespace mcpdb::app
