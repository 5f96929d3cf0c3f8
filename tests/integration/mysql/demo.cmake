# The demo loader (src/engines/mysql/demo_loader.cpp) against the local MariaDB. Needs its
# environment (eval "$(bash scripts/servers.sh env)"); without MYSQL_ADMIN_DSN and MYSQL_DSN every
# test fails and says so. Leaves demo.documents loaded with data/demo_documents.jsonl.
if(TARGET mcpdb_engine_mysql_demo)
  mcpdb_test(mysql_demo_loader_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/fixture.cpp ${CMAKE_CURRENT_LIST_DIR}/demo_loader_test.cpp
    DEPS mcpdb_engine_mysql_demo mcpdb_mysql_client
    LABELS integration)
endif()
