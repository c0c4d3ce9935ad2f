audiod_add_test(test_protocol
  SOURCES unit/protocol/test_main.cpp unit/protocol/test_messages.cpp
          unit/protocol/test_packet_socket.cpp unit/protocol/test_socket_path.cpp
          unit/protocol/test_request_channel.cpp
  LIBS audiod_protocol)
