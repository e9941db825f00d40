/* SIMD shim for the RISC-V vector extension (RVV 1.0): 8 float lanes as a fixed-length vector that clang
 * lowers to RVV instructions (sizeless vfloat32m1_t cannot live in the arrays of accumulators a tile
 * needs). Written with clang's vector extensions, so it is portable C for clang and gcc (see avx512.h). */
#ifndef MLCC_SIMD_RVV_H
#define MLCC_SIMD_RVV_H

typedef float mlcc_f32v __attribute__((vector_size(32), aligned(4)));
#define MLCC_F32V_LANES 8u

static inline mlcc_f32v mlcc_f32v_load(const float *p)
{
    mlcc_f32v v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}
static inline void mlcc_f32v_store(float *p, mlcc_f32v v) { __builtin_memcpy(p, &v, sizeof v); }
static inline mlcc_f32v mlcc_f32v_splat(float x) { return (mlcc_f32v){x, x, x, x, x, x, x, x}; }
static inline mlcc_f32v mlcc_f32v_zero(void) { return mlcc_f32v_splat(0.0f); }
/* acc + a * b (contracted into vfmacc by -ffp-contract=on, clang's default) */
static inline mlcc_f32v mlcc_f32v_fma(mlcc_f32v acc, mlcc_f32v a, mlcc_f32v b) { return acc + a * b; }
static inline mlcc_f32v mlcc_f32v_add(mlcc_f32v a, mlcc_f32v b) { return a + b; }
static inline mlcc_f32v mlcc_f32v_mul(mlcc_f32v a, mlcc_f32v b) { return a * b; }
static inline mlcc_f32v mlcc_f32v_max(mlcc_f32v a, mlcc_f32v b) { return __builtin_elementwise_max(a, b); }
static inline mlcc_f32v mlcc_f32v_min(mlcc_f32v a, mlcc_f32v b) { return __builtin_elementwise_min(a, b); }

#endif /* MLCC_SIMD_RVV_H */
