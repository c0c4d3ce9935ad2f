audiod_add_test(test_portaudio SOURCES unit/portaudio/test_device_match.cpp
  LIBS audiod_portaudio_match)
