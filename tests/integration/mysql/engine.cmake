# The MySQL engine end to end on the live MariaDB: the module configured from YAML, its tools
# called through the registry, stored functions and views vetted before a tool runs, doctor, and
# the pool's reset of every connection between calls (pool_test.cpp), and doctor's proof that every
# tool can run (tool_check_test.cpp).
# Needs MYSQL_DSN, MYSQL_ADMIN_DSN and MYSQL_DOCTOR_DSN_ROUTINES (scripts/servers.sh env); without
# them every test fails and says so.
mcpdb_test(mysql_engine_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/fixture.cpp ${CMAKE_CURRENT_LIST_DIR}/engine_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/pool_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/definer_test.cpp ${CMAKE_CURRENT_LIST_DIR}/wide_value_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/tool_check_test.cpp
  DEPS mcpdb_engine_mysql
  LABELS integration)
