audiod_add_test(test_rtp
  SOURCES unit/modules/rtp/test_main.cpp unit/modules/rtp/test_rtp_packets.cpp unit/modules/rtp/test_sdp.cpp
          unit/modules/rtp/test_payload.cpp unit/modules/rtp/test_send_options.cpp
          unit/modules/rtp/test_sap_discovery.cpp unit/modules/rtp/test_option_specs.cpp
          unit/modules/rtp/test_sender_clock.cpp unit/modules/rtp/test_receive_options.cpp
          unit/modules/rtp/test_media_clock.cpp unit/modules/rtp/test_receiver_table.cpp
          unit/modules/rtp/test_ptp.cpp
  LIBS audiod_rtp audiod_rtp_io)

# Replaces malloc and pthread_mutex_lock, which the sanitizers also replace.
if(NOT AUDIOD_SANITIZE)
  audiod_add_test(test_rtp_rt_safety
    SOURCES unit/modules/rtp/test_rtp_rt_safety.cpp unit/server/rt_hooks.cpp
    LIBS audiod_rtp_io audiod_server)
endif()
