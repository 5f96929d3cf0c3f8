# Schema resources of the MySQL engine: the description built from a statement's shape, the URIs,
# and registration (no server needed).
mcpdb_test(mysql_resources_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/resources_test.cpp
  DEPS mcpdb_engine_mysql LABELS unit)
