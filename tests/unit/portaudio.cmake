audiod_add_test(test_portaudio SOURCES unit/modules/portaudio/test_device_match.cpp
  unit/modules/portaudio/test_recovery_escape.cpp unit/modules/portaudio/test_helper_capture.cpp
  unit/modules/portaudio/test_setup_turns.cpp
  LIBS audiod_portaudio_device audiod_portaudio_match audiod_portaudio_escape audiod_module_api
  ${CMAKE_DL_LIBS})
add_dependencies(test_portaudio audiod_fake_card audiod_module_portaudio)

# The module's RT cycles under the RT-safety hooks (which replace malloc and
# pthread_mutex_lock, as the sanitizers do: not in sanitizer builds).
if(NOT AUDIOD_SANITIZE)
  audiod_add_test(test_portaudio_rt_safety
    SOURCES unit/modules/portaudio/test_portaudio_rt_safety.cpp unit/server/rt_hooks.cpp
    LIBS audiod_server ${CMAKE_DL_LIBS})
  add_dependencies(test_portaudio_rt_safety audiod_module_portaudio audiod_fake_card)
endif()
