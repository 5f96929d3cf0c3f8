#pragma once
// What every command that runs calls (serve, invoke) builds from the assembly: the server's
// options and the audit log.

#include <memory>

#include "app/app.hpp"
#include "observe/audit_log.hpp"
#include "protocol/session.hpp"

namespace mcpdb::app {

protocol::ServerOptions serverOptionsFor(const Assembly& a, const AppOptions& options);

// The audit log of the config's `audit:` section, as a call observer; nullptr when it is off or
// cannot be opened (logged).
std::shared_ptr<observe::AuditLog> openAudit(const Assembly& a);

}  // namespace mcpdb::app
