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

static inline float mlcc_f16_to_f32(uint16_t h)
{
    const uint32_t exponent_mask = UINT32_C(0x7c00) << 13; /* the half's exponent, in float position */
    uint32_t bits = (uint32_t)(h & 0x7fffu) << 13;
    const uint32_t exponent = bits & exponent_mask;
    bits += (uint32_t)(127 - 15) << 23; /* rebias */
    if (exponent == exponent_mask) {
        bits += (uint32_t)(128 - 16) << 23; /* inf and NaN: all exponent bits set */
    } else if (exponent == 0) {
        /* zero or subnormal: m * 2^-24 = (1.m' * 2^-14 as a float) - 2^-14, exactly */
        bits += UINT32_C(1) << 23;
        bits = mlcc_f32_to_bits(mlcc_bits_to_f32(bits) - mlcc_bits_to_f32(UINT32_C(113) << 23));
    }
    return mlcc_bits_to_f32(bits | (uint32_t)(h & 0x8000u) << 16);
}

static inline uint16_t mlcc_f32_to_f16(float f)
{
    const uint32_t f32_infinity = UINT32_C(255) << 23;
    const uint32_t f16_overflow = (uint32_t)(127 + 16) << 23;   /* 2^16: rounds to inf in any case */
    const uint32_t f16_normal_min = (uint32_t)(127 - 14) << 23; /* 2^-14 */
    /* 0.5, whose float ulp 2^-24 is the half subnormals' step: x + 0.5 holds x / 2^-24 in its low bits */
    const uint32_t subnormal_magic = (uint32_t)(127 - 1) << 23;
    uint32_t bits = mlcc_f32_to_bits(f);
    const uint32_t sign = bits & UINT32_C(0x80000000);
    uint16_t h;
    bits ^= sign; /* |f| */
    if (bits >= f16_overflow) {
        h = bits > f32_infinity ? (uint16_t)(0x7e00u | ((bits >> 13) & 0x3ffu)) : (uint16_t)0x7c00u;
    } else if (bits < f16_normal_min) {
        /* the float add rounds to nearest even at the half subnormal's last bit */
        bits = mlcc_f32_to_bits(mlcc_bits_to_f32(bits) + mlcc_bits_to_f32(subnormal_magic));
        h = (uint16_t)(bits - subnormal_magic);
    } else {
        const uint32_t odd = (bits >> 13) & 1u;
        bits -= (uint32_t)(127 - 15) << 23; /* rebias */
        bits += 0xfffu + odd;             /* round the 13 dropped bits half to even; a carry may make inf */
        h = (uint16_t)(bits >> 13);
    }
    return (uint16_t)(h | (sign >> 16));
}

#endif /* MLCC_HALF_H */
