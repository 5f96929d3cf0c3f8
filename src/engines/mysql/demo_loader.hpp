#pragma once
// The MySQL/MariaDB demo loader (demo_loader.cpp, library mcpdb_engine_mysql_demo): linked only
// into mcp-dbserver-load and its tests, never into the server.

#include <string>
#include <string_view>
#include <vector>

#include "engines/demo.hpp"

namespace mcpdb::mysql {

// {"mysql", "MYSQL_ADMIN_DSN", ...}: loads into `documents` of MYSQL_ADMIN_DSN's database.
engines::DemoLoader demoLoader();

namespace demo_detail {

// The table the loader writes, in the admin DSN's database.
inline constexpr std::string_view kDemoTable = "documents";

// The loader's whole work with the table named: create it if missing, upsert `docs` and remove
// rows no longer among them in one transaction as MYSQL_ADMIN_DSN, then verify as MYSQL_DSN (the
// serving user) when it is set. `table` is [a-z0-9_]{1,64}; tests pass their own so that the
// shared demo table is never half-loaded while other tests read it.
Result<std::string> loadInto(const std::vector<engines::DemoDocument>& docs, const Env& env,
                             std::string_view table);

}  // namespace demo_detail

}  // namespace mcpdb::mysql
