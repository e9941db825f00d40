/* Two models built with different --name values linked into one program: no symbol clashes.
 *
 *   mlcc build samples/digits_cnn.onnx --name first -o build/first
 *   mlcc build samples/digits_cnn.onnx --name second -o build/second
 *   python -m ziglang cc -Ibuild/first -Ibuild/second samples/c_api/two_models.c \
 *       build/first/libfirst.a build/second/libsecond.a -lm -o two_models
 */
#include <stdio.h>
#include <string.h>

#include "first.h"
#include "second.h"

static _Alignas(64) unsigned char arena_first[FIRST_ARENA_BYTES];
static _Alignas(64) unsigned char arena_second[SECOND_ARENA_BYTES];

int main(void)
{
    static float image[28 * 28], out_first[10], out_second[10];
    for (int i = 0; i < 28 * 28; ++i) image[i] = (float)(i % 11) / 10.0f;
    if (first_run(image, out_first, arena_first) != 0 || second_run(image, out_second, arena_second) != 0) {
        fprintf(stderr, "a model failed\n");
        return 1;
    }
    printf("%s\n", memcmp(out_first, out_second, sizeof out_first) == 0 ? "same" : "different");
    return 0;
}
