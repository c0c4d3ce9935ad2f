add_library(audiod_test_stepped_sink STATIC unit/server/stepped_sink.cpp)
target_compile_definitions(audiod_test_stepped_sink PRIVATE BOOST_TEST_DYN_LINK)
target_link_libraries(audiod_test_stepped_sink PUBLIC audiod_server audiod PRIVATE Boost::unit_test_framework)

# The server's parts, by folder (config/, dsp/, device/, engine/), most of
# them on stepped sinks (stepped_sink.h) or the real engine (engine_rig.h).
audiod_add_test(test_server
  SOURCES unit/server/test_main.cpp unit/server/engine_rig.cpp
          unit/server/config/test_config.cpp unit/server/config/test_toml_guard.cpp
          unit/server/config/test_manual.cpp unit/manual_page.cpp
          unit/server/dsp/test_mix_kernels.cpp unit/server/dsp/test_conversion.cpp
          unit/server/device/test_device_cycle.cpp unit/server/device/test_abandoned_thread.cpp
          unit/server/device/test_placement.cpp
          unit/server/engine/test_app_state.cpp unit/server/engine/test_state_file_writer.cpp
          unit/server/engine/test_device_registry.cpp unit/server/engine/test_stream_table.cpp
          unit/server/engine/test_router.cpp unit/server/engine/test_gains.cpp
          unit/server/engine/test_rt_command_queue.cpp unit/server/engine/test_reload_plan.cpp
          unit/server/engine/test_rt_watchdog.cpp unit/server/engine/test_source_relay.cpp
          unit/server/pulse/test_tagstruct.cpp unit/server/pulse/test_frame.cpp
          unit/server/pulse/test_session.cpp unit/server/pulse/test_buffer_attributes.cpp
          unit/server/pulse/test_stream_request.cpp unit/server/pulse/test_playback_stream.cpp
          unit/server/pulse/test_introspection.cpp unit/server/pulse/test_record_stream.cpp
          unit/server/pulse/test_subscription.cpp unit/server/pulse/test_engine_gateway.cpp
          unit/server/pulse/test_pulse_modules.cpp unit/server/pulse/test_stream_restore.cpp
          unit/server/pulse/test_sample_cache.cpp unit/server/pulse/test_shared_memory.cpp
          unit/server/pulse/test_channel_order.cpp
  LIBS audiod_client_objects audiod_server audiod_test_stepped_sink audiod_module_support
       audiod_tone_analysis audiod_pulse_wire
  LABELS unit threads)
# Started among the long integration suites (integration.cmake's COST
# order), not after them: without a COST it started last and ended the TSan
# step alone.
set_tests_properties(test_server PROPERTIES COST 95)

# Replaces malloc and pthread_mutex_lock, which the sanitizers also replace.
if(NOT AUDIOD_SANITIZE)
  audiod_add_test(test_rt_safety
    SOURCES unit/server/test_rt_safety.cpp unit/server/rt_hooks.cpp
    LIBS audiod_server audiod_test_stepped_sink audiod_pulse_wire)
endif()
