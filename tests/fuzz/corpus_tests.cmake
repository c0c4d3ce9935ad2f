# Each fuzz target, linked with a plain driver, runs over its seed corpus
# and deterministic mutations of it as a ctest test.
function(audiod_add_corpus_test name)
  cmake_parse_arguments(F "" "" "LIBS" ${ARGN})
  add_executable(corpus_${name} fuzz/fuzz_${name}.cpp fuzz/corpus_driver.cpp)
  target_link_libraries(corpus_${name} PRIVATE ${F_LIBS})
  add_test(NAME corpus_${name}
    COMMAND corpus_${name} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${name})
  set_tests_properties(corpus_${name} PROPERTIES TIMEOUT 300)
  audiod_label_test(corpus_${name} corpus_${name} unit fuzz)
endfunction()

audiod_add_corpus_test(messages LIBS audiod_protocol)
audiod_add_corpus_test(config LIBS audiod_server_files)
audiod_add_corpus_test(state LIBS audiod_server_files)
audiod_add_corpus_test(rtp LIBS audiod_rtp)
audiod_add_corpus_test(sap LIBS audiod_rtp)
audiod_add_corpus_test(pulse LIBS audiod_pulse_wire)
