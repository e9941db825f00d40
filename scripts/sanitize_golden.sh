#!/usr/bin/env bash
# The per-op golden tests with every host build compiled by the system gcc under AddressSanitizer and
# UndefinedBehaviorSanitizer, on a guard plan whose unplanned arena bytes are canaries (tests/robustness).
# Extra arguments go to pytest. Slow (a gcc sanitizer build per test): not part of scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
. .venv/bin/activate
MLCC_GOLDEN_SANITIZE=1 python -m pytest -n "${MLCC_TEST_WORKERS:-2}" tests/ops -k "host" "$@"
