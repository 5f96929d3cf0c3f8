#pragma once
// The views and stored routines a set of candidate names (names.hpp) denotes, read from
// information_schema as the agent's principal in one round trip, and the fingerprint of the same
// objects: what their verdict depends on (definition, SQL SECURITY, definer, and for a routine
// its type and LAST_ALTERED), hashed by the server, so that a call can learn in one short answer
// whether anything it reaches changed since it was vetted.

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "engines/mysql/connection.hpp"
#include "engines/mysql/guard.hpp"

namespace mcpdb::mysql {

struct CatalogObject {
  enum class Kind { View, Function, Procedure, Other };
  Kind kind = Kind::Other;
  guard::Name name;                       // {schema, name} as stored
  bool definer_rights = false;            // SQL SECURITY DEFINER
  std::string definer;                    // "user@host" (a role: its name)
  std::optional<std::string> definition;  // nullopt or empty when hidden from the principal
  std::string fingerprint;                // the server's digest of what decides the verdict
};

// At most this many objects are read for one set of candidates (more is refused).
inline constexpr std::size_t kMaxCatalogRows = 4096;

// The views and routines among `candidates` that the principal can see (none: no query sent).
Result<std::vector<CatalogObject>> lookUpObjects(Connection& conn,
                                                 const std::vector<guard::Name>& candidates);
// The fingerprints of the same objects, without their definitions (the per-call check).
Result<std::set<std::string>> fingerprintObjects(Connection& conn,
                                                 const std::vector<guard::Name>& candidates);

// The server's counters of the statements that can change what a verdict depends on, as two
// texts ("name=value;..."): `definitions` (CREATE/ALTER/DROP of views, functions, tables and
// databases, RENAME TABLE) and `privileges` (GRANT, REVOKE, users and roles, FLUSH). One short
// SHOW GLOBAL STATUS: when neither text moved since a verdict, no view, routine or grant changed
// anywhere on the server (replicated DDL counts too), so the verdict holds without reading
// information_schema, whose views table costs milliseconds per query.
struct CatalogEpoch {
  std::string definitions;
  std::string privileges;
  bool operator==(const CatalogEpoch&) const = default;
};
Result<CatalogEpoch> readCatalogEpoch(Connection& conn);

// A string literal for the session's fixed sql_mode (backslash escapes on): 'it''s' form.
std::string quoteLiteral(std::string_view text);

}  // namespace mcpdb::mysql
