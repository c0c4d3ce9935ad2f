// The numbers of the PulseAudio native protocol that audiod's pulse server
// speaks (libpulse 16 is version 35): command codes, error codes, sample
// formats and the limits it holds every peer to. Written from the
// protocol's published facts (../shared/research/pulse-protocol.md).
#pragma once

#include <cstddef>
#include <cstdint>

namespace audiod::pulse {

// The protocol versions served: a client's is accepted from 13 (0.9.11,
// when property lists came) up to 35 (PulseAudio 16), and each side
// encodes by the other's version.
inline constexpr uint32_t kOldestVersion = 13;
inline constexpr uint32_t kVersion = 35;

// In AUTH's version word: the client can use POSIX shared memory (bit 31)
// or memfds (bit 30, from version 31); the low 16 bits are the version.
inline constexpr uint32_t kVersionMask = 0x0000ffffu;
inline constexpr uint32_t kShmFlag = 0x80000000u;
inline constexpr uint32_t kMemfdFlag = 0x40000000u;
// memfd pools are agreed on from this version (9.0's clients, at 31,
// registered them wrongly; PulseAudio waits for 32 too).
inline constexpr uint32_t kMemfdVersion = 32;

inline constexpr size_t kCookieLength = 256;

// A command packet's tag when it is an event (no reply expected).
inline constexpr uint32_t kNoTag = 0xffffffffu;
// The channel of a frame that carries a command packet, not audio.
inline constexpr uint32_t kControlChannel = 0xffffffffu;
inline constexpr uint32_t kInvalidIndex = 0xffffffffu;
// A volume of 100 % (full amplitude); volumes are cubic in between.
inline constexpr uint32_t kNormVolume = 0x10000;

enum class Command : uint32_t {
    error = 0,
    timeout = 1, // never on the wire
    reply = 2,
    create_playback_stream = 3,
    delete_playback_stream = 4,
    create_record_stream = 5,
    delete_record_stream = 6,
    exit = 7,
    auth = 8,
    set_client_name = 9,
    lookup_sink = 10,
    lookup_source = 11,
    drain_playback_stream = 12,
    stat = 13,
    get_playback_latency = 14,
    create_upload_stream = 15,
    delete_upload_stream = 16,
    finish_upload_stream = 17,
    play_sample = 18,
    remove_sample = 19,
    get_server_info = 20,
    get_sink_info = 21,
    get_sink_info_list = 22,
    get_source_info = 23,
    get_source_info_list = 24,
    get_module_info = 25,
    get_module_info_list = 26,
    get_client_info = 27,
    get_client_info_list = 28,
    get_sink_input_info = 29,
    get_sink_input_info_list = 30,
    get_source_output_info = 31,
    get_source_output_info_list = 32,
    get_sample_info = 33,
    get_sample_info_list = 34,
    subscribe = 35,
    set_sink_volume = 36,
    set_sink_input_volume = 37,
    set_source_volume = 38,
    set_sink_mute = 39,
    set_source_mute = 40,
    cork_playback_stream = 41,
    flush_playback_stream = 42,
    trigger_playback_stream = 43,
    set_default_sink = 44,
    set_default_source = 45,
    set_playback_stream_name = 46,
    set_record_stream_name = 47,
    kill_client = 48,
    kill_sink_input = 49,
    kill_source_output = 50,
    load_module = 51,
    unload_module = 52,
    // 53 to 56: the autoload commands, obsolete
    get_record_latency = 57,
    cork_record_stream = 58,
    flush_record_stream = 59,
    prebuf_playback_stream = 60,
    request = 61,
    overflow = 62,
    underflow = 63,
    playback_stream_killed = 64,
    record_stream_killed = 65,
    subscribe_event = 66,
    move_sink_input = 67,
    move_source_output = 68,
    set_sink_input_mute = 69,
    suspend_sink = 70,
    suspend_source = 71,
    set_playback_stream_buffer_attr = 72,
    set_record_stream_buffer_attr = 73,
    update_playback_stream_sample_rate = 74,
    update_record_stream_sample_rate = 75,
    playback_stream_suspended = 76,
    record_stream_suspended = 77,
    playback_stream_moved = 78,
    record_stream_moved = 79,
    update_record_stream_proplist = 80,
    update_playback_stream_proplist = 81,
    update_client_proplist = 82,
    remove_record_stream_proplist = 83,
    remove_playback_stream_proplist = 84,
    remove_client_proplist = 85,
    started = 86,
    extension = 87,
    get_card_info = 88,
    get_card_info_list = 89,
    set_card_profile = 90,
    client_event = 91,
    playback_stream_event = 92,
    record_stream_event = 93,
    playback_buffer_attr_changed = 94,
    record_buffer_attr_changed = 95,
    set_sink_port = 96,
    set_source_port = 97,
    set_source_output_volume = 98,
    set_source_output_mute = 99,
    set_port_latency_offset = 100,
    enable_srbchannel = 101,
    disable_srbchannel = 102,
    register_memfd_shmid = 103,
    send_object_message = 104,
};

// The error codes of an ERROR reply (what pa_context_errno() reports).
enum class Error : uint32_t {
    ok = 0,
    access = 1,
    command = 2,
    invalid = 3,
    exist = 4,
    noentity = 5,
    connectionrefused = 6,
    protocol = 7,
    timeout = 8,
    authkey = 9,
    internal = 10,
    connectionterminated = 11,
    killed = 12,
    invalidserver = 13,
    modinitfailed = 14,
    badstate = 15,
    nodata = 16,
    version = 17,
    toolarge = 18,
    notsupported = 19,
    unknown = 20,
    noextension = 21,
    obsolete = 22,
    notimplemented = 23,
    forked = 24,
    io = 25,
    busy = 26,
};

enum class SampleFormat : uint8_t {
    u8 = 0,
    alaw = 1,
    ulaw = 2,
    s16le = 3,
    s16be = 4,
    float32le = 5,
    float32be = 6,
    s32le = 7,
    s32be = 8,
    s24le = 9,
    s24be = 10,
    s24_32le = 11,
    s24_32be = 12,
};
inline constexpr uint8_t kSampleFormatCount = 13;

// What a peer may send: the limits every packet is held to.
inline constexpr uint32_t kMaxChannels = 32;
inline constexpr uint32_t kMaxRate = 384000;
// A frame's payload. PulseAudio allows 16 MiB; a command fits in far less,
// and an audio frame is taken in pieces of this size at the most.
inline constexpr uint32_t kMaxFrameBytes = 1u << 20;
// A property's value.
inline constexpr uint32_t kMaxPropertyBytes = 64u << 10;
// Properties in one list.
inline constexpr uint32_t kMaxProperties = 256;

} // namespace audiod::pulse
