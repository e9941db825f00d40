"""ONNX names are hostile text: only sanitised identifiers and escaped comments reach C."""

import pytest

from mlcc import cnames

HOSTILE = ["x */ int evil; /*", "a\nb", 'q"uote', "back\\slash", "#include <stdio.h>", "int", "3d", "é名前",
           "", "___", "a" * 500, "??/"]


@pytest.mark.parametrize("name", HOSTILE)
def test_identifier_is_safe(name):
    ident = cnames.identifier(name, "t_")
    assert cnames.is_identifier(ident)
    assert len(ident) <= 48


@pytest.mark.parametrize("name", HOSTILE)
def test_comment_text_cannot_close_the_comment(name):
    text = cnames.comment_text(name)
    assert "*/" not in text and "\n" not in text and "??" not in text
    assert all(32 <= ord(c) < 127 for c in text)


@pytest.mark.parametrize("name", HOSTILE)
def test_string_literal_is_escaped(name):
    lit = cnames.string_literal(name)
    assert lit.startswith('"') and lit.endswith('"')
    assert "\n" not in lit and all(32 <= ord(c) < 127 for c in lit)


def test_float_literal_round_trips():
    import numpy as np

    for x in [0.1, -2.5, 1e-30, 3.4e38, 1.0]:
        text = cnames.float_literal(x).strip("()").rstrip("f")
        assert np.float32(float(text)) == np.float32(x)
    assert cnames.float_literal(float("inf")) == "INFINITY"
