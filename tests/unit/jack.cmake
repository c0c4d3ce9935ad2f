# The jack module's RT cycles, and JACK's process callback into it, under
# the RT-safety hooks (not in sanitizer builds, which replace malloc
# themselves); and the cycles JACK skips, counted as xruns. Each test's
# stand-in for jack_set_process_callback (jack_rig.cpp) is exported, so
# that it is the one the module calls.
if(NOT AUDIOD_SANITIZE)
  audiod_add_test(test_jack_rt_safety
    SOURCES unit/modules/jack/test_jack_rt_safety.cpp unit/modules/jack/jack_rig.cpp unit/server/rt_hooks.cpp
    LIBS audiod_server ${CMAKE_DL_LIBS} LABELS unit needs-jackd)
  audiod_add_test(test_jack_cycles
    SOURCES unit/modules/jack/test_jack_cycles.cpp unit/modules/jack/jack_rig.cpp
    LIBS audiod_server ${CMAKE_DL_LIBS} LABELS unit needs-jackd)
  foreach(test test_jack_rt_safety test_jack_cycles)
    set_target_properties(${test} PROPERTIES ENABLE_EXPORTS ON)
    add_dependencies(${test} audiod_module_jack)
    # Each starts a jackd too: see integration.cmake's RESOURCE_LOCK.
    set_tests_properties(${test} PROPERTIES RESOURCE_LOCK jackd)
  endforeach()
endif()
