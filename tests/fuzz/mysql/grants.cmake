# mysql_grants_fuzzer: SHOW GRANTS lines (the account's and its roles') through the line reader
# and the least-privilege classifier of `doctor`. Seeds: grants_corpus/ (lines; a line "--"
# starts the grants every role is given). Its replay is registered here, not via REPLAY: the
# folder is shared by several fuzzers, each with its own corpus.
if(TARGET mcpdb_mysql_grants)
  mcpdb_fuzzer(mysql_grants_fuzzer SOURCES ${CMAKE_CURRENT_LIST_DIR}/grants_fuzzer.cpp
    DEPS mcpdb_mysql_grants)
  if(MCPDB_FUZZ)
    add_test(NAME mysql_grants_fuzzer_corpus
      COMMAND mysql_grants_fuzzer -runs=0 ${CMAKE_CURRENT_LIST_DIR}/grants_corpus)
    set_tests_properties(mysql_grants_fuzzer_corpus PROPERTIES LABELS fuzz)
  endif()
endif()
