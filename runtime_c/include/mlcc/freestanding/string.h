/* <string.h> for freestanding builds (targets with libc = false): the four functions compilers may call
 * on their own (struct copies, zeroing loops), defined weak in runtime_c/kernels/freestanding/string.c so a
 * firmware's own C library wins when it has one. */
#ifndef MLCC_FREESTANDING_STRING_H
#define MLCC_FREESTANDING_STRING_H

#include <stddef.h>

void *memcpy(void *restrict dst, const void *restrict src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);

#endif /* MLCC_FREESTANDING_STRING_H */
