/* The module ABI header compiles on its own, as C. */
#include <audiod/module.h>

unsigned module_h_alone_check(void) {
    return AUDIOD_MODULE_ABI_VERSION;
}
