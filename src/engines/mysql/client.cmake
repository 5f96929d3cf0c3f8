# The MySQL/MariaDB client layer over libmariadb (included by CMakeLists.txt).
#
# libmariadb comes through mcpdb_mariadb: linked directly into tests and the loader, except into a
# target with the property MCPDB_LAZY_MARIADB (the server binary, set in the top-level
# CMakeLists.txt), which gets lazy_mariadb.cpp instead: the same functions, loaded with dlopen on
# first use, so that a server that never serves MySQL never loads libmariadb (and its TLS stack).
mcpdb_lazy_library(mcpdb_mariadb SOURCE ${CMAKE_CURRENT_LIST_DIR}/lazy_mariadb.cpp
  PROPERTY MCPDB_LAZY_MARIADB DIRECT PkgConfig::MARIADB INCLUDES ${MARIADB_INCLUDE_DIRS})

# mcpdb_mysql_dsn: the connection string (no libmariadb: parsed and fuzzed alone).
mcpdb_library(mcpdb_mysql_dsn SOURCES dsn.cpp time_limit.cpp DEPS mcpdb_common)

# mcpdb_mysql_client: connection, session set-up, prepared statements, caps (the byte cap's
# wrapper, source_cap.cpp, reads the statement with the guard's lexer), cancellation.
mcpdb_library(mcpdb_mysql_client
  SOURCES errors.cpp raw_client.cpp params.cpp row_reader.cpp cancel.cpp connection.cpp
    source_cap.cpp
  DEPS mcpdb_mysql_dsn mcpdb_mysql_guard mcpdb_mariadb mcpdb_common)

# mcpdb_mysql_iam: the RDS IAM token source of a source's DSN (the AWS credential chain and the
# RDS token of src/aws, shared with PostgreSQL).
mcpdb_library(mcpdb_mysql_iam SOURCES iam.cpp DEPS mcpdb_mysql_dsn mcpdb_aws mcpdb_common)
