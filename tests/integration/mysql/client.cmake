# The client layer against a real MariaDB. Needs the local server and its environment:
#   bash scripts/servers.sh start mariadb && eval "$(bash scripts/servers.sh env)" && ctest -L integration
# Without MYSQL_DSN and MYSQL_ADMIN_DSN every test fails and says so.
mcpdb_test(mysql_client_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/fixture.cpp ${CMAKE_CURRENT_LIST_DIR}/connection_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/statement_test.cpp ${CMAKE_CURRENT_LIST_DIR}/cancel_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/reset_cost_test.cpp
  DEPS mcpdb_mysql_client
  LABELS integration)
