/* f32-gemm 4x8 tile (see ukernel-template.h). */
#define MR 4u
#define NR 8u
#define TILE mlcc_f32_gemm_ukernel_4x8__scalar
#define ROW mlcc_f32_gemm_ukernel_1x8__scalar
#define CONFIG mlcc_f32_gemm_config_4x8__scalar
#include "ukernel-template.h"
