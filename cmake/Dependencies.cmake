# Every dependency comes from a Debian bookworm package (see scripts/install.sh).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(PostgreSQL REQUIRED)
find_package(CURL REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(nlohmann_json 3.11 REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(CLI11 REQUIRED)
find_package(spdlog REQUIRED)
# Boost.Context (libboost-context-dev): the fibers of common/fiber.hpp.
find_package(Boost 1.74 REQUIRED COMPONENTS context)
find_package(BLAS REQUIRED)
pkg_check_modules(MONGOC REQUIRED IMPORTED_TARGET libmongoc-1.0)
pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)
# RE2 (Debian libre2-dev): argument patterns and message redaction, linear in the input.
pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2)
# libmariadb (Debian libmariadb-dev): the MySQL/MariaDB client library of the MySQL engine.
pkg_check_modules(MARIADB REQUIRED IMPORTED_TARGET libmariadb)
# hiredis (Debian libhiredis-dev 0.14): the client of the shared limits store (Redis or Valkey).
pkg_check_modules(HIREDIS REQUIRED IMPORTED_TARGET hiredis)
# libpg_query (Debian libpg-query-dev): PostgreSQL 15's own parser as a library. Linked statically
# so the server binary needs no extra runtime package.
find_path(PG_QUERY_INCLUDE_DIR pg_query.h REQUIRED)
find_library(PG_QUERY_LIBRARY NAMES libpg_query.a pg_query REQUIRED)
add_library(PgQuery::PgQuery UNKNOWN IMPORTED)
set_target_properties(PgQuery::PgQuery PROPERTIES IMPORTED_LOCATION ${PG_QUERY_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${PG_QUERY_INCLUDE_DIR})
# jemalloc (Debian libjemalloc-dev): the server's allocator outside sanitizer and fuzz builds (the
# sanitizers bring their own). A call makes a few hundred small allocations (JSON values, libpq
# results): with glibc's allocator they were about a third of the server's instructions per call,
# with jemalloc about a tenth (bench/instructions_per_call.sh). Its metadata lives apart from the
# blocks it hands out, so an overflow cannot rewrite the allocator's own bookkeeping.
if(MCPDB_JEMALLOC AND NOT MCPDB_SANITIZE AND NOT MCPDB_FUZZ)
  pkg_check_modules(JEMALLOC REQUIRED IMPORTED_TARGET jemalloc)
endif()
if(MCPDB_TESTS)
  find_package(GTest REQUIRED)
endif()
