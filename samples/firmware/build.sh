#!/usr/bin/env bash
# Builds firmware.elf for a Cortex-M4F from samples/digits_cnn.onnx with mlcc and Zig's clang, for the
# emulated board mps2-an386 (the runtime's startup code and linker script, which mlcc writes beside the
# library), and runs it there if qemu-system-arm is installed.
# Usage: samples/firmware/build.sh [OUT_DIR]   (PYTHON selects the interpreter that has mlcc; default python3)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/build}
python=${PYTHON:-python3}
mkdir -p "$out"

"$python" -m mlcc build "$here/../digits_cnn.onnx" -t cortex-m4 --name digits -o "$out/digits"

boards=$out/digits/mlcc_runtime/boards
flags=(-target thumb-freestanding-eabihf -mcpu=cortex_m4+vfp4d16sp -O2 -std=c99 -Wall -Wextra -Werror
       -ffunction-sections -fdata-sections -fno-unwind-tables -fno-asynchronous-unwind-tables)
# No C library (the target has none) and no -nostdlib: Zig links its compiler runtime, which provides the
# __aeabi_* helpers clang calls (block zeroing, and double arithmetic on a single-precision FPU).
"$python" -m ziglang cc "${flags[@]}" -DEMULATED_BOARD -I"$out/digits" -I"$boards" -T "$boards/mps2-an386.ld" -Wl,--entry=Reset_Handler \
    -Wl,--gc-sections "$here/main.c" "$boards/startup.c" "$boards/semihost.c" "$out/digits/libdigits.a" \
    -o "$out/firmware.elf"
echo "built $out/firmware.elf"

if command -v qemu-system-arm >/dev/null 2>&1; then
    (cd "$out" && timeout 60 qemu-system-arm -machine mps2-an386 -cpu cortex-m4 -nographic -monitor none \
        -serial none -semihosting-config enable=on,target=native -kernel firmware.elf)
fi
