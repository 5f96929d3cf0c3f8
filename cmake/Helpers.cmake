# mcpdb_library(NAME SOURCES ... DEPS ...): one static library per subsystem.
function(mcpdb_library name)
  cmake_parse_arguments(A "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${A_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC ${A_DEPS} PRIVATE mcpdb_warnings)
endfunction()

# mcpdb_test(NAME SOURCES ... DEPS ... [LABELS ...]): a GoogleTest binary registered with ctest.
function(mcpdb_test name)
  cmake_parse_arguments(A "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${A_SOURCES})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(${name} PRIVATE ${A_DEPS} GTest::gtest GTest::gtest_main GTest::gmock mcpdb_warnings)
  target_compile_definitions(${name} PRIVATE MCPDB_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  include(GoogleTest)
  gtest_discover_tests(${name} PROPERTIES LABELS "${A_LABELS}" DISCOVERY_TIMEOUT 60)
endfunction()

# mcpdb_fuzzer(NAME SOURCES ... DEPS ... [CORPUS dir]): a libFuzzer target (only with
# MCPDB_FUZZ). CORPUS names the seed folder beside the CMakeLists.txt (default corpus), for
# folders shared by several fuzzers.
function(mcpdb_fuzzer name)
  cmake_parse_arguments(A "REPLAY" "CORPUS" "SOURCES;DEPS;REPLAY_ARGS" ${ARGN})
  if(NOT A_CORPUS)
    set(A_CORPUS corpus)
  endif()
  if(NOT MCPDB_FUZZ)
    return()
  endif()
  add_executable(${name} ${A_SOURCES})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PRIVATE ${A_DEPS} mcpdb_warnings)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  # REPLAY: replaying the seed corpus (CORPUS beside the CMakeLists.txt) is a quick regression
  # test of the fuzz build; REPLAY_ARGS are extra libFuzzer flags for it (e.g. -dict=...).
  if(A_REPLAY)
    add_test(NAME ${name}_corpus
      COMMAND ${name} -runs=0 ${A_REPLAY_ARGS} ${CMAKE_CURRENT_SOURCE_DIR}/${A_CORPUS})
    set_tests_properties(${name}_corpus PROPERTIES LABELS fuzz)
  endif()
endfunction()

# mcpdb_prebuilt_yaml(TARGET FILE f.yaml NAMESPACE ns TEXT fn NODE fn HEADER h): compiles f.yaml
# into TARGET as two functions declared in header h: ns::TEXT() returns its text and ns::NODE()
# its document, built without parsing (src/config/prebuilt.hpp).
function(mcpdb_prebuilt_yaml target)
  cmake_parse_arguments(A "" "FILE;NAMESPACE;TEXT;NODE;HEADER" "" ${ARGN})
  set(in ${CMAKE_CURRENT_SOURCE_DIR}/${A_FILE})
  get_filename_component(name ${A_FILE} NAME)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${name}.cpp)
  add_custom_command(OUTPUT ${out}
    COMMAND mcpdb-prebuild-yaml ${in} ${out} ${A_NAMESPACE} ${A_TEXT} ${A_NODE} ${A_HEADER}
    DEPENDS mcpdb-prebuild-yaml ${in}
    COMMENT "Prebuilding ${A_FILE}"
    VERBATIM)
  target_sources(${target} PRIVATE ${out})
endfunction()

# mcpdb_lazy_library(NAME SOURCE forwarders.cpp PROPERTY P DIRECT target INCLUDES dirs...
#                    [LIBS libs...]): an INTERFACE target NAME that links the library DIRECT,
# except into a target with the property P set (the server binary), which gets NAME_lazy instead:
# the same functions as forwarders that load the library with dlopen on first use
# (src/common/lazy_library.hpp).
function(mcpdb_lazy_library name)
  cmake_parse_arguments(A "" "SOURCE;PROPERTY;DIRECT" "INCLUDES;LIBS" ${ARGN})
  add_library(${name}_lazy STATIC ${A_SOURCE})
  target_include_directories(${name}_lazy SYSTEM PUBLIC ${A_INCLUDES})
  target_include_directories(${name}_lazy PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name}_lazy PUBLIC ${A_LIBS} ${CMAKE_DL_LIBS} PRIVATE mcpdb_warnings)
  add_library(${name} INTERFACE)
  target_link_libraries(${name} INTERFACE
    "$<IF:$<BOOL:$<TARGET_PROPERTY:${A_PROPERTY}>>,${name}_lazy,${A_DIRECT}>")
endfunction()
