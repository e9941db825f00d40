/* printf for kernel harnesses on an emulated board: see stdio.h. One line of up to 255 characters a call. */
#include "stdio.h"

#include <stdarg.h>
#include <stddef.h>

#include "semihost.h"

static char *unsigned_decimal(char *out, char *end, unsigned long long value) {
    char digits[24];
    int n = 0;
    do digits[n++] = (char)('0' + value % 10u); while ((value /= 10u) != 0);
    while (n && out < end) *out++ = digits[--n];
    return out;
}

int mlcc_board_printf(const char *format, ...) {
    char line[256], *out = line, *const end = line + sizeof line - 1;
    va_list args;
    va_start(args, format);
    for (const char *f = format; *f && out < end; ++f) {
        if (*f != '%') {
            *out++ = *f;
            continue;
        }
        ++f;
        if (*f == 'z' && f[1] == 'u') {
            ++f;
            out = unsigned_decimal(out, end, va_arg(args, size_t));
        } else if (*f == 'u') {
            out = unsigned_decimal(out, end, va_arg(args, unsigned));
        } else if (*f == 'd') {
            const int v = va_arg(args, int);
            if (v < 0 && out < end) *out++ = '-';
            out = unsigned_decimal(out, end, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v);
        } else if (*f == 'c') {
            *out++ = (char)va_arg(args, int);
        } else if (*f == 's') {
            for (const char *s = va_arg(args, const char *); *s && out < end; ++s) *out++ = *s;
        } else {
            *out++ = *f ? *f : '%';
            if (!*f) break;
        }
    }
    va_end(args);
    *out = '\0';
    semihost_print(line);
    return (int)(out - line);
}
