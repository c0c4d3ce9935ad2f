# The modules' shared support code (option checks, ops tables), and what every built module publishes
# (its option tables), read from the modules as the server loads them.
audiod_add_test(test_modules
  SOURCES unit/modules/test_main.cpp unit/modules/support/test_device_options.cpp
          unit/modules/test_option_tables.cpp unit/modules/module_tables.cpp
          unit/modules/support/test_module_ops.cpp unit/modules/support/test_timer_clock.cpp unit/modules/test_manual_options.cpp
          unit/manual_page.cpp
  LIBS audiod_module_support ${CMAKE_DL_LIBS})
add_dependencies(test_modules audiod_module_null audiod_module_file audiod_module_alsa
  audiod_module_rtp audiod_module_portaudio audiod_module_jack)
