#!/usr/bin/env bash
# Builds firmware.elf for a Cortex-M4F from samples/digits_cnn.onnx with mlcc and Zig's clang.
# Usage: samples/firmware/build.sh [OUT_DIR]   (PYTHON selects the interpreter that has mlcc; default python3)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/build}
python=${PYTHON:-python3}
mkdir -p "$out"

"$python" -m mlcc build "$here/../digits_cnn.onnx" -t cortex-m4 --name digits -o "$out/digits"

flags=(-target thumb-freestanding-eabihf -mcpu=cortex_m4+vfp4d16sp -O2 -std=c99 -Wall -Wextra -Werror
       -ffunction-sections -fdata-sections -fno-unwind-tables -fno-asynchronous-unwind-tables)
# -nostdlib: no C library or start files; Zig still links its compiler runtime (soft double, __aeabi_*).
"$python" -m ziglang cc "${flags[@]}" -nostdlib -I"$out/digits" -T "$here/cortex-m4.ld" -Wl,--gc-sections -Wl,--entry=Reset_Handler \
    "$here/main.c" "$here/startup.c" "$out/digits/libdigits.a" -o "$out/firmware.elf"
echo "built $out/firmware.elf"
