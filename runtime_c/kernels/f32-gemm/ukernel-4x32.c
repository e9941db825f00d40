/* f32-gemm 4x32 tile (see ukernel-template.h). */
#define MR 4u
#define NR 32u
#define TILE mlcc_f32_gemm_ukernel_4x32__scalar
#define ROW mlcc_f32_gemm_ukernel_1x32__scalar
#define CONFIG mlcc_f32_gemm_config_4x32__scalar
#include "ukernel-template.h"
