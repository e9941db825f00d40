/* The first n < LANES lanes of p (the rest read as 0) and of v (the rest never written) through a copy in
 * memory: the partial load and store of the shims whose ISA has no masked form (neon.h, rvv.h,
 * wasmsimd.h), included by them after their mlcc_f32v_load and mlcc_f32v_store. */
#ifndef MLCC_SIMD_PARTIAL_COPY_H
#define MLCC_SIMD_PARTIAL_COPY_H

static inline mlcc_f32v mlcc_f32v_load_partial(const float *p, size_t n)
{
    float part[MLCC_F32V_LANES] = {0.0f};
    for (size_t i = 0; i < n; ++i) part[i] = p[i];
    return mlcc_f32v_load(part);
}
static inline void mlcc_f32v_store_partial(float *p, mlcc_f32v v, size_t n)
{
    float part[MLCC_F32V_LANES];
    mlcc_f32v_store(part, v);
    for (size_t i = 0; i < n; ++i) p[i] = part[i];
}

#endif /* MLCC_SIMD_PARTIAL_COPY_H */
