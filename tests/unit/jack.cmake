# The jack module's RT cycles, and JACK's process callback into it, under
# the RT-safety hooks (not in sanitizer builds, which replace malloc
# themselves). The test's stand-in for jack_set_process_callback is
# exported, so that it is the one the module calls.
if(NOT AUDIOD_SANITIZE)
  audiod_add_test(test_jack_rt_safety
    SOURCES unit/jack/test_jack_rt_safety.cpp unit/server/rt_hooks.cpp
    LIBS audiod_server ${CMAKE_DL_LIBS})
  set_target_properties(test_jack_rt_safety PROPERTIES ENABLE_EXPORTS ON)
  add_dependencies(test_jack_rt_safety audiod_module_jack)
endif()
if(TARGET test_jack_rt_safety)
  # It starts a jackd too: see integration.cmake's RESOURCE_LOCK.
  set_tests_properties(test_jack_rt_safety PROPERTIES RESOURCE_LOCK jackd)
endif()
