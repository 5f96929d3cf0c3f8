# The client layer's pieces that need no server: DSN, time-limit text, cancel statements, error
# classes, cell encodings.
mcpdb_test(mysql_client_unit_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/dsn_test.cpp ${CMAKE_CURRENT_LIST_DIR}/client_text_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/source_cap_test.cpp
  DEPS mcpdb_mysql_client
  LABELS unit)

# The server binary's libmariadb forwarders with libmariadb missing: lazy_mariadb.cpp is compiled
# into this test against a library name that does not exist (like postgres_lazy_pq_test).
mcpdb_test(mysql_lazy_mariadb_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/lazy_mariadb_test.cpp
    ${PROJECT_SOURCE_DIR}/src/engines/mysql/lazy_mariadb.cpp
  DEPS mcpdb_mysql_client
  LABELS unit)
set_property(TARGET mysql_lazy_mariadb_test PROPERTY MCPDB_LAZY_MARIADB ON)
target_compile_definitions(mysql_lazy_mariadb_test PRIVATE
  MCPDB_LAZY_MARIADB_SONAME="libmariadb-missing-for-test.so.0")
