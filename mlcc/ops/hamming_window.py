"""HammingWindow: w[n] = 25/46 - 21/46 cos(2 pi n / N), N = size (periodic) or size - 1; see _window."""

from . import register
from ._window import CosineWindow


@register
class HammingWindow(CosineWindow):
    op_type = "HammingWindow"
    coefficients = (25.0 / 46.0, 21.0 / 46.0, 0.0)
