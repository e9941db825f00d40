/* Minimal Cortex-M4F startup: the vector table, copying .data from flash, zeroing .bss, enabling the FPU
 * (the model is compiled for hard float), then main. Symbols come from cortex-m4.ld. */
#include <stdint.h>

extern uint32_t __data_load, __data_start, __data_end, __bss_start, __bss_end, __stack_top;
int main(void);

#define SCB_CPACR (*(volatile uint32_t *)0xE000ED88u)

void Reset_Handler(void)
{
    SCB_CPACR |= 0xFu << 20;  /* full access to coprocessors 10 and 11: the FPU */
    __asm__ volatile("dsb\n\tisb");
    const uint32_t *src = &__data_load;
    for (uint32_t *dst = &__data_start; dst < &__data_end;) *dst++ = *src++;
    for (uint32_t *dst = &__bss_start; dst < &__bss_end;) *dst++ = 0;
    main();
    for (;;) {}
}

static void Default_Handler(void)
{
    for (;;) {}
}

/* Initial stack pointer, reset, then the 14 system exceptions; a board adds its interrupts after them. */
__attribute__((section(".vectors"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))&__stack_top, Reset_Handler,
    Default_Handler, Default_Handler, Default_Handler, Default_Handler, Default_Handler, 0, 0, 0, 0,
    Default_Handler, Default_Handler, 0, Default_Handler, Default_Handler,
};
