"""BlackmanWindow: w[n] = 0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N), N = size (periodic) or size - 1; see _window."""

from . import register
from ._window import CosineWindow


@register
class BlackmanWindow(CosineWindow):
    op_type = "BlackmanWindow"
    coefficients = (0.42, 0.5, 0.08)
