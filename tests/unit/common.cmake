audiod_add_test(test_common SOURCES unit/common/test_main.cpp unit/common/test_audio_file.cpp unit/common/test_volume_level.cpp unit/common/test_json_writer.cpp
  unit/common/test_clock_follower.cpp unit/common/test_drift_resampler.cpp unit/support/test_tone_analysis.cpp
  unit/support/test_sync_probe.cpp unit/common/test_spsc_queue.cpp unit/common/test_seq_locked.cpp
  unit/support/test_stream_ledger.cpp
  LIBS audiod_common audiod_clock_sync audiod_tone_analysis audiod_sync_probe audiod_stream_ledger
  LABELS unit threads)
