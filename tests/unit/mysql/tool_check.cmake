# doctor's tool check: a prepare error of the server -> the finding and its fix (no server needed;
# the live shapes are in tests/integration/mysql/tool_check_test.cpp).
mcpdb_test(mysql_tool_check_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/tool_check_test.cpp
  DEPS mcpdb_engine_mysql LABELS unit)
