/* Cortex-M startup for the emulated boards: the vector table, .data copied from flash, .bss zeroed, the
 * FPU (and on Armv8.1-M, Helium) enabled, then main; its return value leaves through semihosting. A fault
 * prints one line naming it and the faulting instruction's address, then exits with status 4.
 * Symbols come from the board's linker script (<board>/board.ld). */
#include <stdint.h>

#include "semihost.h"

extern uint32_t __data_load, __data_start, __data_end, __bss_start, __bss_end, __stack_top;
int main(void);

#define SCB_CPACR (*(volatile uint32_t *)0xE000ED88u)
#define SCB_CFSR (*(volatile uint32_t *)0xE000ED28u)
#define SCB_HFSR (*(volatile uint32_t *)0xE000ED2Cu)
#define SCB_BFAR (*(volatile uint32_t *)0xE000ED38u)

void Reset_Handler(void)
{
    SCB_CPACR |= 0xFu << 20;  /* full access to coprocessors 10 and 11: the FPU and Helium */
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    /* volatile: compilers would turn these loops into memcpy and memset calls, which a firmware linked
     * with -nostdlib may not have */
    const uint32_t *src = &__data_load;
    for (volatile uint32_t *dst = &__data_start; dst < &__data_end;) *dst++ = *src++;
    for (volatile uint32_t *dst = &__bss_start; dst < &__bss_end;) *dst++ = 0;
    semihost_exit(main());
}

static char *hex(char *out, uint32_t value)
{
    *out++ = '0';
    *out++ = 'x';
    for (int shift = 28; shift >= 0; shift -= 4) *out++ = "0123456789abcdef"[(value >> shift) & 0xFu];
    return out;
}

static char *text(char *out, const char *s)
{
    while (*s) *out++ = *s++;
    return out;
}

/* frame: the registers the processor stacked on entry (r0-r3, r12, lr, pc, xpsr). */
void mlcc_board_fault(const uint32_t *frame, uint32_t exception)
{
    static const char *const names[] = {"", "", "NMI", "HardFault", "MemManage fault", "BusFault", "UsageFault",
                                        "SecureFault"};
    char line[160], *p = line;
    p = text(p, "fault: ");
    p = text(p, exception < 8 ? names[exception] : "exception");
    p = text(p, " at pc ");
    p = hex(p, frame[6]);
    p = text(p, " (CFSR ");
    p = hex(p, SCB_CFSR);
    p = text(p, ", HFSR ");
    p = hex(p, SCB_HFSR);
    p = text(p, ", BFAR ");
    p = hex(p, SCB_BFAR);
    p = text(p, ")\n");
    *p = '\0';
    semihost_print(line);
    semihost_exit(4);
}

/* Which stack the processor pushed the frame on (bit 2 of EXC_RETURN), and the exception number. */
__attribute__((naked)) static void Fault_Handler(void)
{
    __asm__ volatile(
        "tst lr, #4\n\t"
        "ite eq\n\t"
        "mrseq r0, msp\n\t"
        "mrsne r0, psp\n\t"
        "mrs r1, ipsr\n\t"
        "b mlcc_board_fault\n\t");
}

/* Initial stack pointer, reset, then the system exceptions (all faults reported; the rest unused). */
__attribute__((section(".vectors"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))&__stack_top, Reset_Handler,
    Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler, 0, 0, 0,
    Fault_Handler, Fault_Handler, 0, Fault_Handler, Fault_Handler,
};
