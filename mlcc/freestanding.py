"""Targets without a C library (libc = false): the runtime provides <math.h> and <string.h> itself
(runtime_c/include/mlcc/freestanding/, runtime_c/kernels/freestanding/). A step calling a C library function
it does not provide is refused here, with the node's name, rather than failing at the user's link."""

from __future__ import annotations

import re
from functools import lru_cache

from . import paths
from .errors import UnsupportedError

FAMILY = "freestanding"

# C99 <math.h>, <string.h> and <stdlib.h> functions a template could call.
_MATH = ("acos asin atan atan2 cos sin tan acosh asinh atanh cosh sinh tanh exp exp2 expm1 frexp ilogb ldexp "
         "log log10 log1p log2 logb modf scalbn scalbln cbrt fabs hypot pow sqrt erf erfc lgamma tgamma ceil "
         "floor nearbyint rint lrint llrint round lround llround trunc fmod remainder remquo copysign nan "
         "nextafter nexttoward fdim fmax fmin fma").split()
_LIBC = {*_MATH, *(f"{n}f" for n in _MATH), *(f"{n}l" for n in _MATH),
         *"memcpy memmove memset memcmp memchr strlen strcmp strcpy strncpy abs labs llabs div qsort bsearch "
          "malloc calloc realloc free abort exit printf fprintf sprintf snprintf puts".split()}


@lru_cache(maxsize=1)
def provided() -> frozenset[str]:
    """The library functions the freestanding headers define (as macros over mlcc_* or as declarations)."""
    folder = paths.runtime_dir() / "include" / "mlcc" / "freestanding"
    text = "".join(p.read_text() for p in sorted(folder.glob("*.h")))
    return frozenset(re.findall(r"^#define (\w+)\(", text, re.M) + re.findall(r"^\w+ \**(\w+)\(", text, re.M))


def check_step(step, target) -> None:
    """Refuse a step whose code calls a C library function the freestanding runtime lacks."""
    called = set(re.findall(r"\b(\w+)\s*\(", step.code)) & _LIBC
    missing = sorted(called - provided())
    if missing:
        raise UnsupportedError(f"{step.node.op_type} needs {', '.join(missing)} from the C library, which target "
                               f"{target.name} does not have (the runtime provides: see mlcc/freestanding/math.h)",
                               step.node.where())
