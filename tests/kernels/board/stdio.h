/* <stdio.h> for kernel harnesses built as firmware for an emulated board (no C library): printf with %s, %c,
 * %d, %u and %zu, to the semihosting console (tests/kernels/simd_harness.py puts this folder first on the
 * include path of a board build). A macro, so the compiler does not rewrite calls as puts. */
#ifndef MLCC_TEST_BOARD_STDIO_H
#define MLCC_TEST_BOARD_STDIO_H

int mlcc_board_printf(const char *format, ...);
#define printf mlcc_board_printf

#endif
