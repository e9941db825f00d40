/* f32-gemm 4x8 tile (see ukernel-template.h). */
#define MR 4u
#define NR 8u
#define MLCC_GEMM_CONFIG mlcc_f32_gemm_config_4x8__scalar
#include "ukernel-template.h"
