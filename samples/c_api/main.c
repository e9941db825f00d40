/* Embedding an mlcc-built model in a C program: static buffers, no heap, one call.
 *
 *   mlcc build samples/digits_cnn.onnx -o build/digits
 *   python -m ziglang cc -O2 -Ibuild/digits samples/c_api/main.c build/digits/libdigits_cnn.a -lm -o digits
 *   ./digits
 *
 * It feeds a synthetic image (a diagonal stripe pattern) and prints the ten class probabilities.
 */
#include <stdio.h>

#include "digits_cnn.h"

static _Alignas(64) unsigned char arena[DIGITS_CNN_ARENA_BYTES];
static float image[1 * 1 * 28 * 28];
static float probabilities[10];

int main(void)
{
    for (int y = 0; y < 28; ++y)
        for (int x = 0; x < 28; ++x)
            image[y * 28 + x] = (float)((x + 2 * y) % 7) / 6.0f;

    int status = digits_cnn_run(image, probabilities, arena);
    if (status != 0) {
        fprintf(stderr, "digits_cnn_run failed with status %d\n", status);
        return 1;
    }
    int best = 0;
    for (int k = 0; k < 10; ++k) {
        printf("%d %.8f\n", k, (double)probabilities[k]);
        if (probabilities[k] > probabilities[best]) best = k;
    }
    printf("class %d\n", best);
    return 0;
}
