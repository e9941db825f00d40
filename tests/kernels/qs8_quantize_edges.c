/* qs8-quantize's vector forms against its reference, bytes compared: 1, 3 and 4 planes (3 the vectorised
 * one), pixel counts around the 16-pixel step; uint8 and int8 ranges with zero points at both ends and the
 * middle; scales that are and are not powers of two; quotients on half-integers (ties to even), just either
 * side of them, NaN, infinities, signed zeros and values far past the range. Prints "D of N cases differ". */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mlcc/kernels/qs8-quantize.h"

#define MAX_PIXELS 100
#define MAX_PLANES 4

typedef void (*quantize_fn)(size_t, size_t, const float *, float, float, float, float, uint8_t *);

static uint32_t state = 7u;
static uint32_t next(void) {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
}

static float value(float scale, size_t i) {
    const float k = (float)((int)(next() % 601u) - 300);
    switch (i % 8) {
    case 0: return (k + 0.5f) * scale;                       /* a half-integer quotient, where representable */
    case 1: return nextafterf((k + 0.5f) * scale, INFINITY);
    case 2: return nextafterf((k + 0.5f) * scale, -INFINITY);
    case 3: {
        static const float specials[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 3e38f, -3e38f, 1e-40f};
        return specials[next() % 8u];
    }
    default: return ((float)next() / 16777216.0f - 0.5f) * 700.0f * scale;
    }
}

int main(void) {
    static const struct {
        const char *name;
        quantize_fn fn;
    } forms[] = {
#if defined(__AVX512F__)
        {"avx512", mlcc_qs8_quantize_planes__avx512},
#endif
        {"none", 0},
    };
    static const float scales[] = {0.0107f, 0.0078125f, 3.7f};
    static const float ranges[][2] = {{0.0f, 255.0f}, {-128.0f, 127.0f}};
    static const size_t planes_list[] = {1, 3, 4}, pixels_list[] = {1, 15, 16, 17, 48, 100};
    static float x[MAX_PLANES * MAX_PIXELS];
    static uint8_t want[MAX_PLANES * MAX_PIXELS], got[MAX_PLANES * MAX_PIXELS + 1];  /* + a byte that must stay */
    int cases = 0, differ = 0;
    for (size_t f = 0; forms[f].fn; ++f) {
        for (size_t s = 0; s < 3; ++s) {
            for (size_t r = 0; r < 2; ++r) {
                const float lo = ranges[r][0], hi = ranges[r][1];
                const float zeros[] = {lo, (float)(int)((lo + hi) / 2), hi};
                for (size_t z = 0; z < 3; ++z) {
                    for (size_t pl = 0; pl < 3; ++pl) {
                        for (size_t px = 0; px < 6; ++px) {
                            const size_t planes = planes_list[pl], pixels = pixels_list[px];
                            for (size_t i = 0; i < planes * pixels; ++i) x[i] = value(scales[s], i);
                            mlcc_qs8_quantize_planes__reference(planes, pixels, x, scales[s], zeros[z], lo, hi, want);
                            memset(got, 0xA5, sizeof got);
                            forms[f].fn(planes, pixels, x, scales[s], zeros[z], lo, hi, got);
                            ++cases;
                            if (memcmp(want, got, planes * pixels) != 0 || got[planes * pixels] != 0xA5) {
                                ++differ;
                                printf("%s: scale %g range [%g, %g] zero %g, %zu planes of %zu pixels\n", forms[f].name,
                                       (double)scales[s], (double)lo, (double)hi, (double)zeros[z], planes, pixels);
                            }
                        }
                    }
                }
            }
        }
    }
    printf("%d of %d cases differ\n", differ, cases);
    return 0;
}
