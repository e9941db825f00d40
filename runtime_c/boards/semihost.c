/* Semihosting calls: operation in r0, argument block in r1, `bkpt 0xab` traps to the emulator, result in r0. */
#include "semihost.h"

#include <stdint.h>

enum {
    SYS_OPEN = 0x01, SYS_CLOSE = 0x02, SYS_WRITE = 0x05, SYS_READ = 0x06, SYS_FLEN = 0x0C, SYS_EXIT = 0x18,
    SYS_EXIT_EXTENDED = 0x20,
};
enum { ADP_STOPPED_APPLICATION_EXIT = 0x20026 };

static uintptr_t call(uintptr_t operation, const void *argument)
{
    register uintptr_t r0 __asm__("r0") = operation;
    register const void *r1 __asm__("r1") = argument;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

/* volatile: a compiler would make this loop a strlen call, which a firmware without a C library lacks */
static size_t length(const char *text)
{
    const volatile char *p = text;
    size_t n = 0;
    while (p[n] != '\0') ++n;
    return n;
}

int semihost_open(const char *path, int mode)
{
    const uintptr_t block[3] = {(uintptr_t)path, (uintptr_t)mode, length(path)};
    return (int)call(SYS_OPEN, block);
}

int semihost_close(int handle)
{
    const uintptr_t block[1] = {(uintptr_t)handle};
    return (int)call(SYS_CLOSE, block);
}

size_t semihost_read(int handle, void *data, size_t nbytes)
{
    const uintptr_t block[3] = {(uintptr_t)handle, (uintptr_t)data, nbytes};
    return nbytes - call(SYS_READ, block);  /* the call answers with the bytes NOT read */
}

size_t semihost_write(int handle, const void *data, size_t nbytes)
{
    const uintptr_t block[3] = {(uintptr_t)handle, (uintptr_t)data, nbytes};
    return nbytes - call(SYS_WRITE, block);
}

long semihost_file_length(int handle)
{
    const uintptr_t block[1] = {(uintptr_t)handle};
    return (long)(intptr_t)call(SYS_FLEN, block);
}

void semihost_print(const char *text)
{
    static int console = -1;
    if (console < 0) console = semihost_open(":tt", SEMIHOST_APPEND);  /* ":tt" in append mode: stderr */
    if (console >= 0) semihost_write(console, text, length(text));
}

void semihost_exit(int status)
{
    const uintptr_t block[2] = {ADP_STOPPED_APPLICATION_EXIT, (uintptr_t)status};
    call(SYS_EXIT_EXTENDED, block);
    call(SYS_EXIT, (const void *)(uintptr_t)ADP_STOPPED_APPLICATION_EXIT);  /* without the extension: 0 */
    for (;;) {}
}
