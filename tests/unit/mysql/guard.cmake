# The MySQL statement guard: API and lexer tests, the verdict files in guard_cases/, and the name
# collector of the view and routine vetting (names_test.cpp).
if(TARGET mcpdb_mysql_guard)
  mcpdb_test(mysql_guard_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/guard_test.cpp ${CMAKE_CURRENT_LIST_DIR}/guard_golden_test.cpp
      ${CMAKE_CURRENT_LIST_DIR}/names_test.cpp
    DEPS mcpdb_mysql_guard
    LABELS unit)
endif()
