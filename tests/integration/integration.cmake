audiod_add_test(test_integration
  SOURCES integration/test_main.cpp integration/process.cpp integration/helpers.cpp
          integration/test_playback.cpp integration/test_lifecycle.cpp
          integration/test_audioctl.cpp integration/test_routing.cpp
          integration/test_app_state.cpp integration/test_events.cpp
          integration/test_watchdog.cpp integration/test_no_hang.cpp
  LIBS audiod_protocol audiod_common audiod)
# The programs it runs must be built first.
add_dependencies(test_integration audiod_bin audioplay audioctl audiod-test-client
  audiod-evil-client audiod-event-client audiod_module_null audiod_module_file
  audiod_module_faulty)
set_tests_properties(test_integration PROPERTIES LABELS "integration" TIMEOUT 600)

add_test(NAME install_tree
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/install_tree.sh ${PROJECT_BINARY_DIR}
          "${AUDIOD_SANITIZE}")
set_tests_properties(install_tree PROPERTIES LABELS "integration" TIMEOUT 300)
