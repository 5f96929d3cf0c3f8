# The `mysql:` section and the engine's tool surface (no server needed).
mcpdb_test(mysql_config_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/config_test.cpp
  DEPS mcpdb_engine_mysql LABELS unit)
