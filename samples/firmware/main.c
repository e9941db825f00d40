/* Firmware main loop around a model compiled by mlcc for cortex-m4: fill the input, run, read the output.
 *
 * The model is samples/digits_cnn.onnx built with `mlcc build -t cortex-m4 --name digits` (see build.sh):
 * digits_run reads a 28x28 image and writes 10 class probabilities. Everything is static: the arena lives
 * in .bss, the weights in flash (.rodata of libdigits.a). No heap, no C library.
 *
 * Built with -DEMULATED_BOARD (build.sh does) it runs FRAMES frames on qemu-system-arm's mps2-an386, prints
 * each frame's class through semihosting and returns; on a real board it loops forever and a debugger (or
 * your UART driver in publish) reads predicted_digit.
 */
#include <stddef.h>
#include <stdint.h>

#include "digits.h"

#define IMAGE_SIDE 28
#define CLASSES 10

static unsigned char arena[DIGITS_ARENA_BYTES] __attribute__((aligned(DIGITS_ARENA_ALIGN)));
static float image[IMAGE_SIDE * IMAGE_SIDE];
static float probabilities[CLASSES];

/* What a debugger (or a UART driver) reads: the latest class and a count of inferences. */
volatile int32_t predicted_digit = -1;
volatile uint32_t inferences = 0;
volatile int32_t last_status = 0;

/* Stands in for a camera or touch-screen driver: draws a vertical stroke, shifted each frame. */
static void capture_image(float *pixels, uint32_t frame)
{
    const int column = 10 + (int)(frame % 8u);
    for (int y = 0; y < IMAGE_SIDE; ++y) {
        for (int x = 0; x < IMAGE_SIDE; ++x) {
            const int on = y >= 4 && y < 24 && (x == column || x == column + 1);
            pixels[y * IMAGE_SIDE + x] = on ? 1.0f : 0.0f;
        }
    }
}

static int32_t arg_max(const float *values, int count)
{
    int32_t best = 0;
    for (int i = 1; i < count; ++i) {
        if (values[i] > values[best]) best = i;
    }
    return best;
}

#ifdef EMULATED_BOARD
#include "semihost.h"

#define FRAMES 8u

/* "frame F: digit D" on the emulator's console. */
static void publish(uint32_t frame, int32_t status, int32_t digit)
{
    char line[] = "frame F: digit D\n";
    line[6] = (char)('0' + frame % 10u);
    line[15] = status == 0 ? (char)('0' + digit) : '?';
    semihost_print(line);
}
#else
static void publish(uint32_t frame, int32_t status, int32_t digit)
{
    (void)frame, (void)status, (void)digit;  /* a real board: send it over a UART */
}
#endif

int main(void)
{
    for (uint32_t frame = 0;; ++frame) {
        capture_image(image, frame);
        last_status = digits_run(image, probabilities, arena);
        if (last_status == 0) predicted_digit = arg_max(probabilities, CLASSES);
        inferences = frame + 1u;
        publish(frame, last_status, predicted_digit);
#ifdef EMULATED_BOARD
        if (inferences == FRAMES) return last_status;
#endif
    }
}
