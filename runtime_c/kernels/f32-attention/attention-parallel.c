/* mlcc_f32_attention_parallel: each block's query rows cut into tasks for the caller's parallel-for
 * (mlcc/parallel.h). A task owns whole tiles of rows: their scores in `work`, their rows of y; K and V are
 * packed once per head before the tasks. In a source of its own: a model that never splits links none of it. */
#include "mlcc/kernels/f32-attention.h"

struct block {
    const struct mlcc_f32_gemm_config *gemm;
    const struct mlcc_f32_attention_params *p;
    size_t b, h, i0, rows;
    const float *q, *add_mask;
    const bool *keep_mask;
    float *y, *work;
};

static void block_range(void *block, size_t begin, size_t end)
{
    const struct block *k = (const struct block *)block;
    const size_t mr = k->gemm->mr;
    MLCC_ISA_NAME(mlcc_f32_attention_rows)(k->gemm, k->p, k->b, k->h, k->i0, begin * mr, MLCC_MIN(end * mr, k->rows),
                                           k->q, k->add_mask, k->keep_mask, k->y, k->work);
}

void MLCC_ISA_NAME(mlcc_f32_attention_parallel)(const mlcc_parallel *parallel, const struct mlcc_f32_gemm_config *gemm,
                                                const struct mlcc_f32_attention_params *p, const float *q,
                                                const float *k, const float *v, const float *add_mask,
                                                const bool *keep_mask, float *y, float *MLCC_RESTRICT work)
{
    for (size_t b = 0; b < p->batch; ++b) {
        for (size_t h = 0; h < p->heads; ++h) {
            MLCC_ISA_NAME(mlcc_f32_attention_head)(gemm, p, b, h, k, v, work);
            for (size_t i0 = 0; i0 < p->q_len; i0 += p->block_rows) {
                struct block block = {gemm, p, b, h, i0, MLCC_MIN(p->block_rows, p->q_len - i0), q, add_mask,
                                      keep_mask, y, work};
                const size_t tiles = (block.rows + gemm->mr - 1) / gemm->mr;
                const float work_flops = (float)block.rows * (float)p->kv_len * (float)(p->qk_dim + p->v_dim);
                mlcc_parallel_ranges(parallel, mlcc_parallel_tasks(parallel, tiles, work_flops), tiles, block_range,
                                     &block);
            }
        }
    }
}
