/* File helpers shared by the test drivers (driver.c, threads.c): whole-file reads and writes that stop the
 * program with exit 2 and a one-line message naming DRIVER_NAME on any failure. */
#ifndef DRIVER_IO_H
#define DRIVER_IO_H

#include <stdio.h>
#include <stdlib.h>

static void fail(const char *what, const char *detail)
{
    fprintf(stderr, "%s: %s %s\n", DRIVER_NAME, what, detail);
    exit(2);
}

static void *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    long n;
    void *data;
    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) fail("cannot read", path);
    data = malloc(n > 0 ? (size_t)n : 1u);
    if (data == NULL || fread(data, 1, (size_t)n, f) != (size_t)n) fail("cannot read", path);
    fclose(f);
    return data;
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(data, 1, n, f) != n || fclose(f) != 0) fail("cannot write", path);
}

#endif
