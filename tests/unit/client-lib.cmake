# libaudiod's own parts (client-lib/src): the clock a stream keeps without a
# server, when a self-timed writer looks at its ring again, real-time
# scheduling of a player's thread, and the shared ring under libaudiod's
# real write path against a real device's RT thread (stepped sink).
audiod_add_test(test_client
  SOURCES unit/client-lib/test_main.cpp unit/client-lib/test_keep_clock.cpp
          unit/client-lib/test_self_timing.cpp unit/client-lib/test_thread_realtime.cpp
          unit/client-lib/test_ring_stress.cpp
  LIBS audiod_client_objects audiod_server audiod_test_stepped_sink
  LABELS unit threads)
