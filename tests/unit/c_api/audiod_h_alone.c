/* The public header compiles on its own, as C, with nothing before it. */
#include <audiod/audiod.h>

int audiod_h_alone_check(void) {
    return AUDIOD_E_INVALID;
}
