# The MySQL statement guard: API and lexer tests, and the verdict files in guard_cases/.
if(TARGET mcpdb_mysql_guard)
  mcpdb_test(mysql_guard_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/guard_test.cpp ${CMAKE_CURRENT_LIST_DIR}/guard_golden_test.cpp
    DEPS mcpdb_mysql_guard
    LABELS unit)
endif()
