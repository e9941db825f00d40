/* f32-gemm 4x32 tile (see ukernel-template.h). */
#define MR 4u
#define NR 32u
#define MLCC_GEMM_CONFIG mlcc_f32_gemm_config_4x32__scalar
#include "ukernel-template.h"
