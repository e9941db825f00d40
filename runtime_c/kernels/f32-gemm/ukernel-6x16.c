/* f32-gemm 6x16 tile (see ukernel-template.h). */
#define MR 6u
#define NR 16u
#define TILE mlcc_f32_gemm_ukernel_6x16__scalar
#define ROW mlcc_f32_gemm_ukernel_1x16__scalar
#define CONFIG mlcc_f32_gemm_config_6x16__scalar
#include "ukernel-template.h"
