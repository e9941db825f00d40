/* IEEE 754 binary16 <-> binary32. float16 tensors are stored as their bits in uint16_t.
 * Both directions are exact as IEEE defines them: every half converts to the float of the same value
 * (subnormals included), and a float rounds to the nearest half, ties to even, overflowing to infinity,
 * underflowing through the half subnormals; NaN stays NaN (quieted, sign and top payload bits kept).
 * Bit manipulation plus one float add or subtract for subnormals (exact, or rounding as IEEE requires),
 * after Fabian Giesen's public-domain half conversions. Needs IEEE float arithmetic without flush-to-zero. */
#ifndef MLCC_HALF_H
#define MLCC_HALF_H

#include <stdint.h>
#include <string.h>

static inline float mlcc_bits_to_f32(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline uint32_t mlcc_f32_to_bits(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return bits;
}

/* Both conversions compute every case and select, without branches, so loops over them vectorise. */
static inline float mlcc_f16_to_f32(uint16_t h)
{
    const uint32_t exponent_mask = (uint32_t)0x7c00u << 13; /* the half's exponent, in float position */
    const uint32_t shifted = (uint32_t)(h & 0x7fffu) << 13;
    const uint32_t exponent = shifted & exponent_mask;
    const uint32_t normal = shifted + ((uint32_t)(127 - 15) << 23);        /* rebias */
    const uint32_t special = normal + ((uint32_t)(128 - 16) << 23);        /* inf, NaN: all exponent bits set */
    /* zero or subnormal m * 2^-24: the float 2^-14 * (1 + m / 2^10), less 2^-14, exactly */
    const float subnormal = mlcc_bits_to_f32(normal + ((uint32_t)1 << 23)) - mlcc_bits_to_f32((uint32_t)113 << 23);
    uint32_t bits = exponent == exponent_mask ? special : normal;
    bits = exponent == 0 ? mlcc_f32_to_bits(subnormal) : bits;
    return mlcc_bits_to_f32(bits | (uint32_t)(h & 0x8000u) << 16);
}

static inline uint16_t mlcc_f32_to_f16(float f)
{
    const uint32_t f32_infinity = (uint32_t)255 << 23;
    const uint32_t f16_overflow = (uint32_t)(127 + 16) << 23;   /* 2^16: rounds to inf in any case */
    const uint32_t f16_normal_min = (uint32_t)(127 - 14) << 23; /* 2^-14 */
    /* 0.5, whose float ulp 2^-24 is the half subnormals' step: |f| + 0.5 holds |f| / 2^-24 in its low bits,
     * rounded to nearest even by the float add */
    const uint32_t subnormal_magic = (uint32_t)(127 - 1) << 23;
    const uint32_t all = mlcc_f32_to_bits(f);
    const uint32_t sign = (all >> 16) & 0x8000u;
    const uint32_t bits = all & 0x7fffffffu; /* |f| */
    const uint32_t special = bits > f32_infinity ? 0x7e00u | ((bits >> 13) & 0x3ffu) : 0x7c00u; /* NaN quieted */
    const uint32_t subnormal = mlcc_f32_to_bits(mlcc_bits_to_f32(bits) + mlcc_bits_to_f32(subnormal_magic)) - subnormal_magic;
    /* rebias, then round the 13 dropped bits half to even; a carry into the exponent may make inf, rightly */
    const uint32_t normal = (bits - ((uint32_t)(127 - 15) << 23) + 0xfffu + ((bits >> 13) & 1u)) >> 13;
    const uint32_t h = bits >= f16_overflow ? special : (bits < f16_normal_min ? subnormal : normal);
    return (uint16_t)(h | sign);
}

#endif /* MLCC_HALF_H */
