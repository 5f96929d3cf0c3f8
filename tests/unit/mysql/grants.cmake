# The SHOW GRANTS reader and the least-privilege classifier of `doctor` (pure, no server).
if(TARGET mcpdb_mysql_grants)
  mcpdb_test(mysql_grants_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/grants_test.cpp ${CMAKE_CURRENT_LIST_DIR}/grant_line_test.cpp
    DEPS mcpdb_mysql_grants
    LABELS unit)
endif()
