add_library(audiod_test_stepped_sink STATIC unit/server/stepped_sink.cpp)
target_compile_definitions(audiod_test_stepped_sink PRIVATE BOOST_TEST_DYN_LINK)
target_link_libraries(audiod_test_stepped_sink PUBLIC audiod_server audiod PRIVATE Boost::unit_test_framework)

audiod_add_test(test_server
  SOURCES unit/server/test_main.cpp unit/server/test_config.cpp unit/server/test_mix_kernels.cpp
          unit/server/test_sink_cycle.cpp unit/server/test_spsc_queue.cpp
          unit/server/test_timer_clock.cpp unit/server/test_ring_stress.cpp
          unit/server/test_engine_routing.cpp unit/server/test_app_state.cpp
          unit/server/test_state_file_writer.cpp
          unit/server/test_toml_guard.cpp unit/server/test_keep_clock.cpp
          unit/server/test_conversion.cpp unit/server/test_thread_realtime.cpp
          unit/server/test_self_timing.cpp
          unit/server/test_source_relay.cpp unit/server/test_abandoned_thread.cpp
          unit/server/engine_rig.cpp unit/server/test_rt_watchdog.cpp
  LIBS audiod_client_objects audiod_server audiod_test_stepped_sink audiod_module_support
  LABELS unit threads)
# Started among the long integration suites (integration.cmake's COST
# order), not after them: without a COST it started last and ended the TSan
# step alone.
set_tests_properties(test_server PROPERTIES COST 95)

# Replaces malloc and pthread_mutex_lock, which the sanitizers also replace.
if(NOT AUDIOD_SANITIZE)
  audiod_add_test(test_rt_safety
    SOURCES unit/server/test_rt_safety.cpp unit/server/rt_hooks.cpp
    LIBS audiod_server audiod_test_stepped_sink)
endif()
