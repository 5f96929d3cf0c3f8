# mysql_dsn_fuzzer: the MySQL connection-string parser (src/engines/mysql/dsn.hpp). Invariants: no
# crash; an error or the redacted form never depends on (so never contains) the password; the
# redacted form parses back to the same target. Seeds: dsn_corpus/ (replayed as a ctest).
mcpdb_fuzzer(mysql_dsn_fuzzer SOURCES ${CMAKE_CURRENT_LIST_DIR}/dsn_fuzzer.cpp DEPS mcpdb_mysql_dsn)
if(MCPDB_FUZZ)
  add_test(NAME mysql_dsn_fuzzer_corpus
    COMMAND mysql_dsn_fuzzer -runs=0 ${CMAKE_CURRENT_LIST_DIR}/dsn_corpus)
  set_tests_properties(mysql_dsn_fuzzer_corpus PROPERTIES LABELS fuzz)
endif()
