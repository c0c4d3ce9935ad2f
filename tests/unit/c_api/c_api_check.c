/*
 * The C API from C: the calls that need no server behave as documented, and
 * a missing server is an error, not a hang.
 */
#include <audiod/audiod.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int audiod_h_alone_check(void);
unsigned module_h_alone_check(void);

static int failures = 0;

static void check(int ok, const char* what) {
    if (!ok) {
        fprintf(stderr, "FAILED: %s\n", what);
        ++failures;
    }
}

int main(void) {
    audiod_context* ctx = NULL;
    audiod_stream_params params;
    check(audiod_h_alone_check() == AUDIOD_E_INVALID, "header constants");
    check(module_h_alone_check() >= 1u, "module ABI version");
    check(strcmp(audiod_strerror(AUDIOD_E_TIMEOUT), "timed out") == 0, "strerror");
    check(strcmp(audiod_strerror(12345), "unknown error") == 0, "strerror of unknown code");
    check(audiod_format_from_name("s16le") == AUDIOD_FORMAT_S16LE, "format from name");
    check(audiod_format_from_name("float") == AUDIOD_FORMAT_F32LE, "format alias");
    check(audiod_format_from_name("mp3") == AUDIOD_FORMAT_INVALID, "unknown format");
    check(audiod_format_from_name(NULL) == AUDIOD_FORMAT_INVALID, "NULL format name");
    check(strcmp(audiod_format_name(AUDIOD_FORMAT_S24_3LE), "s24_3le") == 0, "format name");
    check(audiod_format_sample_bytes(AUDIOD_FORMAT_S24_3LE) == 3, "sample bytes");
    check(audiod_version() != NULL && strlen(audiod_version()) >= 5, "version");

    audiod_stream_params_init(&params);
    check(params.format == AUDIOD_FORMAT_S16LE && params.rate == 48000 && params.channels == 2,
          "params defaults");

    check(audiod_connect("c-check", 1000, NULL) == AUDIOD_E_INVALID, "NULL out pointer");
    setenv("AUDIOD_SOCKET", "/nonexistent-dir/socket", 1);
    check(audiod_connect("c-check", 1000, &ctx) == AUDIOD_E_NOSERVER, "no server");
    check(ctx == NULL, "no context on failure");
    check(audiod_stream_write(NULL, NULL, 0, 0) == AUDIOD_E_INVALID, "NULL stream");
    check(audiod_stream_flush(NULL, 0) == AUDIOD_E_INVALID, "flush NULL");
    check(audiod_stream_close(NULL) == 0, "close NULL");
    audiod_disconnect(NULL);

    if (failures == 0) {
        printf("c api ok\n");
    }
    return failures == 0 ? 0 : 1;
}
