# Run: mysql_names_fuzzer <work dir seeded from names_corpus/>
# Statements generated from the input with a view name planted in random positions; the name
# collector must list it every time.
if(TARGET mcpdb_mysql_guard)
  mcpdb_fuzzer(mysql_names_fuzzer
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/names_fuzzer.cpp
    DEPS mcpdb_mysql_guard
    CORPUS names_corpus
    REPLAY)
endif()
