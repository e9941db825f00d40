/* The memory functions compilers call on their own (struct copies, zeroing loops), for targets without a
 * C library. Weak, so a firmware's own (faster) versions win at link time; no_builtin keeps the compiler
 * from turning these very loops back into calls to themselves. */
#include <stddef.h>
#include <stdint.h>

#include <string.h>

#if defined(__clang__)
#define NOT_A_BUILTIN(name) __attribute__((weak, no_builtin(name)))
#else
#define NOT_A_BUILTIN(name) __attribute__((weak, optimize("no-tree-loop-distribute-patterns")))
#endif

NOT_A_BUILTIN("memcpy") void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    while (n--) *d++ = *s++;
    return dst;
}

NOT_A_BUILTIN("memmove") void *memmove(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if ((uintptr_t)d - (uintptr_t)s >= n) {  /* no overlap that a forward copy would clobber */
        while (n--) *d++ = *s++;
    } else {
        d += n;
        s += n;
        while (n--) *--d = *--s;
    }
    return dst;
}

NOT_A_BUILTIN("memset") void *memset(void *dst, int c, size_t n)
{
    unsigned char *d = dst;
    while (n--) *d++ = (unsigned char)c;
    return dst;
}

NOT_A_BUILTIN("memcmp") int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (; n; --n, ++x, ++y) {
        if (*x != *y) return *x < *y ? -1 : 1;
    }
    return 0;
}
