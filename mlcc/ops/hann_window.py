"""HannWindow: w[n] = 0.5 - 0.5 cos(2 pi n / N) = sin^2(pi n / N), N = size (periodic) or size - 1; see _window."""

from . import register
from ._window import CosineWindow


@register
class HannWindow(CosineWindow):
    op_type = "HannWindow"
    coefficients = (0.5, 0.5, 0.0)
