# Schema resources of the MySQL engine on the live MariaDB: the demo tools described by preparing
# their statements (never executing them), vetting before describing, and scoping. Needs MYSQL_DSN
# and MYSQL_DOCTOR_DSN_ROUTINES (scripts/servers.sh env); without them the tests fail and say so.
mcpdb_test(mysql_resources_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/fixture.cpp ${CMAKE_CURRENT_LIST_DIR}/resources_test.cpp
  DEPS mcpdb_engine_mysql
  LABELS integration)
