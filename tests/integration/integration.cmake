audiod_add_test(test_integration
  SOURCES integration/test_main.cpp integration/process.cpp integration/helpers.cpp
          integration/feed.cpp integration/server_state.cpp
          integration/test_playback.cpp integration/test_lifecycle.cpp
          integration/test_audioctl.cpp integration/test_routing.cpp
          integration/test_app_state.cpp integration/test_events.cpp
          integration/test_watchdog.cpp integration/test_no_hang.cpp
          integration/test_alsa.cpp integration/test_alsa_plugin.cpp
          integration/test_conversion.cpp integration/test_capture.cpp
          integration/test_alsa_source.cpp integration/test_modules.cpp
          integration/test_files.cpp integration/test_rtp.cpp
          integration/test_rtp_receive.cpp integration/test_relay.cpp
          integration/test_portaudio.cpp integration/test_jack.cpp integration/dummy_jack.cpp
          integration/test_service.cpp
          integration/test_reload.cpp integration/test_system.cpp integration/test_harness.cpp
          integration/test_pulse.cpp integration/house.cpp integration/test_rooms.cpp
          integration/test_groups.cpp integration/test_rooms_interop.cpp
  LIBS audiod_protocol audiod_common audiod audiod_rtp audiod_ctl_output audiod_tone_analysis
       audiod_pulse_wire audiod_jack_leftovers
  NO_CTEST)
# The programs it runs must be built first.
add_dependencies(test_integration audiod_bin audioplay audiorec audioctl audiod-test-client
  audiod-socket-launcher audiod-pulse-client
  audiod-evil-client audiod-event-client audiod_module_null audiod_module_file
  audiod_module_faulty audiod_module_alsa audiod_fake_card audiod_alsa_pcm audiod_alsa_ctl audiod-alsa-player
  audiod-portaudio-player audiod-udp-relay audiod-sync-probe audiod-unit-sandbox audiod_module_rtp audiod_module_portaudio audiod_module_jack
  ${AUDIOD_BROKEN_MODULES})
find_package(ALSA REQUIRED)
target_link_libraries(test_integration PRIVATE ALSA::ALSA)
# The harness's own code (processes, files, waits) is checked by
# AddressSanitizer but not UBSan: UBSan's checks at -O0 doubled its compile
# time (one batch of 8 files: 28.7 s, 14.6 s without), on the ASan build's
# critical path. The code under test keeps both: the programs the harness
# runs, and the libraries it links.
if(AUDIOD_SANITIZE MATCHES undefined)
  target_compile_options(test_integration PRIVATE -fno-sanitize=undefined)
endif()
# Uninstrumented programs (aplay, mpv...) that load our instrumented ALSA
# plugin need the sanitizer runtime preloaded.
if(AUDIOD_SANITIZE)
  set(runtimes "")
  foreach(sanitizer address undefined thread)
    if(AUDIOD_SANITIZE MATCHES ${sanitizer})
      set(lib ${sanitizer})
      if(sanitizer STREQUAL address)
        set(lib asan)
      elseif(sanitizer STREQUAL undefined)
        set(lib ubsan)
      elseif(sanitizer STREQUAL thread)
        set(lib tsan)
      endif()
      execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=lib${lib}.so
        OUTPUT_VARIABLE path OUTPUT_STRIP_TRAILING_WHITESPACE)
      list(APPEND runtimes ${path})
    endif()
  endforeach()
  list(JOIN runtimes ":" runtimes)
  target_compile_definitions(test_integration PRIVATE AUDIOD_SANITIZER_RUNTIME="${runtimes}")
endif()
# One ctest entry per suite (and per fault-injection case), so that ctest -j
# overlaps their real-time waits instead of running them one after another.
# The longest first: on a clean clone ctest has no timings of its own, so
# a falling COST starts them in this order (before the short unit tests),
# and a step lasts as long as the last test it started.
set(cost 100)
foreach(suite rtp relay rooms groups rooms_interop pulse rtp_receive alsa_plugin capture watchdog portaudio jack portaudio_jack alsa_source
        playback lifecycle service reload system_wide audioctl routing app_state events alsa alsa_mixer conversion modules files harness
        no_hang/a_client_killed_mid_write_disturbs_no_one
        no_hang/server_stopped_for_8_s_players_keep_their_clock_and_sound_returns
        no_hang/server_killed_and_replaced_players_carry_on
        no_hang/without_keep_clock_a_lost_server_is_a_clear_quick_error)
  string(REGEX REPLACE "/.*" "" group ${suite})
  string(REGEX REPLACE "^no_hang/(.*)" "no_hang.\\1" entry ${suite})
  add_test(NAME integration.${entry} COMMAND test_integration --run_test=${suite} --report_level=short)
  set_tests_properties(integration.${entry} PROPERTIES TIMEOUT 600 COST ${cost})
  set(labels integration)
  # 20 s or more in a Debug build on an idle 2-core machine.
  if(group MATCHES "^(rtp|relay|rooms|groups|rooms_interop|rtp_receive|alsa_plugin|capture|watchdog|portaudio|jack|portaudio_jack)$")
    list(APPEND labels slow)
  endif()
  if(group MATCHES "^(service|system_wide)$")
    list(APPEND labels needs-root)
  endif()
  if(group MATCHES "^(jack|portaudio_jack)$")
    list(APPEND labels needs-jackd)
  endif()
  # Measured to the microsecond: scripts/test runs them on their own, once
  # the builds and the other tests are done (tests/integration/house.h).
  if(group MATCHES "^(rooms|groups|rooms_interop)$")
    list(APPEND labels quiet)
  endif()
  audiod_label_test(integration.${entry} test_integration ${labels})
  math(EXPR cost "${cost} - 1")
endforeach()
# The suites that start a jackd of their own take turns: JACK's shared-memory
# registry is the machine's, and two servers starting at once beside a
# loaded stress pass failed to take their first client ("Cannot create new
# client").
set_tests_properties(integration.jack integration.portaudio_jack PROPERTIES RESOURCE_LOCK jackd)
# The suites that measure rooms to the microsecond take turns: each runs
# a house of timed threads, and two at once are more load than the
# measure is about.
set_tests_properties(integration.rooms integration.groups integration.rooms_interop
  PROPERTIES RESOURCE_LOCK rooms)

add_test(NAME install_tree
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/install_tree.sh ${PROJECT_BINARY_DIR}
          "${AUDIOD_SANITIZE}" ${CMAKE_INSTALL_LIBDIR})
set_tests_properties(install_tree PROPERTIES LABELS "integration" TIMEOUT 300)
