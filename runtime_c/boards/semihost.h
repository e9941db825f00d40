/* Arm semihosting (the debug monitor calls a debugger or emulator answers), as qemu-system-arm implements
 * them with -semihosting-config enable=on,target=native: files on the host and the console. */
#ifndef MLCC_SEMIHOST_H
#define MLCC_SEMIHOST_H

#include <stddef.h>

enum { SEMIHOST_READ_BINARY = 1, SEMIHOST_WRITE_BINARY = 5, SEMIHOST_APPEND = 8 };

int semihost_open(const char *path, int mode);  /* a handle, or -1 */
int semihost_close(int handle);
size_t semihost_read(int handle, void *data, size_t nbytes);  /* bytes read */
size_t semihost_write(int handle, const void *data, size_t nbytes);  /* bytes written */
long semihost_file_length(int handle);  /* -1 on error */
void semihost_print(const char *text);  /* to the emulator's stderr */
void semihost_exit(int status) __attribute__((noreturn));

#endif /* MLCC_SEMIHOST_H */
