/* f32-attention: scaled dot-product attention, y = softmax(scale * Q K^T + mask) V, one (batch, head) at a
 * time, on the f32-gemm kernels.
 *
 * Every operand is read in place through element strides over its logical [batch, head, row, column]
 * dims, so the transposes and reshapes that split heads around an exported attention cost nothing; y's
 * columns must be contiguous. Per (batch, head) K^T and V are packed once into `work`, then the queries go
 * by blocks of block_rows: their scores (block_rows x kv_len floats of `work`) are computed by one GEMM,
 * masked, exponentiated in place by a numerically stable softmax and multiplied by V straight into y, whose
 * rows are then normalised (v_dim floats a row instead of kv_len). On SIMD128 the rows go four at a time
 * through both products on the packed panels directly, normalised as they are stored (attention.c). No
 * [batch, head, q_len, kv_len] tensor ever exists.
 */
#ifndef MLCC_KERNELS_F32_ATTENTION_H
#define MLCC_KERNELS_F32_ATTENTION_H

#include "mlcc/kernels/f32-gemm.h"
#include "mlcc/parallel.h"
#include "mlcc/runtime.h"

/* Element strides of an operand over its logical dims (0 broadcasts a dim). */
struct mlcc_f32_attention_strides {
    size_t batch, head, row, col;
};

struct mlcc_f32_attention_params {
    size_t batch, heads, q_len, kv_len, qk_dim, v_dim;
    size_t kv_group;  /* query heads per key/value head: head h reads K and V of head h / kv_group */
    struct mlcc_f32_attention_strides q, k, v, y;  /* k and v rows are keys */
    struct mlcc_f32_attention_strides add_mask, keep_mask;  /* over [batch, head, query, key] */
    size_t mask_cols;       /* keys the masks cover; later keys are masked */
    float scale;
    bool causal;            /* key j > query i is masked */
    bool keep_when;         /* a score survives where the keep mask equals this */
    float fill;             /* the score of a masked entry */
    bool zero_masked_rows;  /* a row masked throughout gives zeros (ONNX Attention), else NaN (Softmax) */
    size_t block_rows;
};

/* Floats of `work`: packed K^T and packed V (each rounded up to 16 floats), then block_rows x kv_len
 * scores and block_rows sums. */
size_t mlcc_f32_attention_work_size(const struct mlcc_f32_attention_params *p, size_t nr);

/* add_mask (added to the scaled scores) and keep_mask (bool) may each be NULL. y may not overlap the
 * inputs. */
void MLCC_ISA_NAME(mlcc_f32_attention)(const struct mlcc_f32_gemm_config *gemm, const struct mlcc_f32_attention_params *p,
                                       const float *q, const float *k, const float *v, const float *add_mask,
                                       const bool *keep_mask, float *y, float *MLCC_RESTRICT work);

/* The kernel's two parts: K^T and V of batch b's head h packed into `work` (nothing for a query head that
 * shares the previous one's), and rows [i0 + r0, i0 + r1) of the block of query rows from i0 (r0 a multiple
 * of the GEMM tile's mr; each row summed as in the whole block) into y, their scores in `work`. */
void MLCC_ISA_NAME(mlcc_f32_attention_head)(const struct mlcc_f32_gemm_config *gemm,
                                            const struct mlcc_f32_attention_params *p, size_t b, size_t h,
                                            const float *k, const float *v, float *MLCC_RESTRICT work);
void MLCC_ISA_NAME(mlcc_f32_attention_rows)(const struct mlcc_f32_gemm_config *gemm,
                                            const struct mlcc_f32_attention_params *p, size_t b, size_t h,
                                            size_t i0, size_t r0, size_t r1, const float *q, const float *add_mask,
                                            const bool *keep_mask, float *y, float *MLCC_RESTRICT work);

/* The same, each block's query rows cut into tasks for the caller's parallel-for (mlcc/parallel.h) when
 * large: a task owns whole tiles of rows, their scores in `work` and their rows of y, and sums them as the
 * single-threaded kernel does; K and V are packed once per head before the tasks. */
void MLCC_ISA_NAME(mlcc_f32_attention_parallel)(const mlcc_parallel *parallel, const struct mlcc_f32_gemm_config *gemm,
                                                const struct mlcc_f32_attention_params *p, const float *q,
                                                const float *k, const float *v, const float *add_mask,
                                                const bool *keep_mask, float *y, float *MLCC_RESTRICT work);

/* The scalar oracle: the same contract in plain loops; work holds kv_len floats. */
void mlcc_f32_attention__reference(const struct mlcc_f32_attention_params *p, const float *q, const float *k,
                                   const float *v, const float *add_mask, const bool *keep_mask, float *y,
                                   float *MLCC_RESTRICT work);

#endif /* MLCC_KERNELS_F32_ATTENTION_H */
