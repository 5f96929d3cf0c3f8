# Run: mysql_guard_fuzzer -dict=<src>/tests/fuzz/mysql/guard.dict <work dir seeded from guard_corpus/>
if(TARGET mcpdb_mysql_guard)
  mcpdb_fuzzer(mysql_guard_fuzzer
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/guard_fuzzer.cpp
    DEPS mcpdb_mysql_guard
    CORPUS guard_corpus
    REPLAY REPLAY_ARGS -dict=${CMAKE_CURRENT_LIST_DIR}/guard.dict)
endif()
