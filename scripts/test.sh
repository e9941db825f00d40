#!/usr/bin/env bash
# The test command: sets up everything the tests need on a fresh machine, then runs them.
# Extra arguments go to pytest (e.g. `bash scripts/test.sh tests/unit -x`).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v gcc >/dev/null 2>&1; then  # tests/robustness compile generated C with the system gcc
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq gcc libc6-dev
fi

if [ ! -x /usr/bin/chromium ] || ! command -v node >/dev/null 2>&1; then  # tests/targets/test_web.py: wasm32 in Chromium and Node
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium nodejs
fi

# tests/targets/test_cross.py runs the Linux cross targets under qemu-user 8.1 or newer: 7.2 (Debian 12's own)
# aborts on RVV narrowing conversions (vfncvt.rtz), so Debian 12 takes it from its backports suite.
qemu_ok() { qemu-riscv64 --version 2>/dev/null | grep -qE 'version (8\.[1-9]|9\.|[1-9][0-9]\.)'; }
if ! command -v qemu-aarch64 >/dev/null 2>&1 || ! qemu_ok; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq qemu-user
    if ! qemu_ok && grep -qs '^VERSION_CODENAME=bookworm' /etc/os-release; then
        mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -m1 -oE 'https?://[^ ]+/debian/?( |$)' | tr -d ' ' || true)
        echo "deb ${mirror%/} bookworm-backports main" | $SUDO tee /etc/apt/sources.list.d/bookworm-backports.list >/dev/null
        $SUDO apt-get update -qq && $SUDO apt-get install -y -qq -t bookworm-backports qemu-user
    fi
fi

if ! command -v qemu-system-arm >/dev/null 2>&1; then  # tests/targets/test_boards.py: Cortex-M boards
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq qemu-system-arm
fi

if ! command -v cmake >/dev/null 2>&1 || ! command -v ninja >/dev/null 2>&1; then  # tests/integration: CMake consumers
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq cmake ninja-build
fi

if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
. .venv/bin/activate
pip install --quiet --disable-pip-version-check -e '.[test]'
# PyTorch exports the encoder of tests/models/test_bert_torch.py (skipped without it)
python -c 'import torch, onnxscript' 2>/dev/null || pip install --quiet --disable-pip-version-check -e '.[torch]'

# scikit-learn and skl2onnx for the sklearn sweep's CI subset (tests/models/test_sklearn_sweep.py)
python -c 'import sklearn, skl2onnx' 2>/dev/null || pip install --quiet --disable-pip-version-check -e '.[sklearn]'

# TypeScript for tests/integration/test_npm_package.py (tsc --noEmit on a consumer of a wasm32 build)
[ -x .cache/npm/node_modules/.bin/tsc ] || npm install --prefix .cache/npm --no-audit --no-fund typescript@5 >/dev/null

# transformers for the Hugging Face sweep's CI subset (tests/models/test_hf_sweep.py); it leaves the CPU torch alone
python -c 'import transformers' 2>/dev/null || pip install --quiet --disable-pip-version-check -e '.[hf]'

# Not installed here: the vision sweep's export venv (torchvision needs torch 2.14.1, 5.6 GB; see the README's
# Status). tests/models/test_vision_sweep.py checks the sweep's code on a torch-only model instead.

# the slowest tests are listed at the end: what to look at when the run nears its 25-minute budget
python -m pytest -n "${MLCC_TEST_WORKERS:-2}" --durations=30 "$@"
