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


def test_long_names_are_cut_at_a_word_boundary():
    ident = cnames.identifier("fire2/squeeze1x1_w_0_channels_last_packed8", "w_")
    assert ident == "w_fire2_squeeze1x1_w_0_channels_last"
    assert cnames.identifier("a" * 50) == "a" * 40  # one word longer than the limit: cut inside it


def test_cut_names_that_clash_take_a_stable_hash_of_the_whole_name():
    long = "encoder_layer_0_attention_self_query_weight"
    first, second = f"{long}_packed", f"{long}_transposed"
    taken: set[str] = set()
    a, b = cnames.fresh_identifier(first, "w_", taken), cnames.fresh_identifier(second, "w_", taken)
    assert a == "w_encoder_layer_0_attention_self_query" and b.startswith(f"{a}_") and len(b) == len(a) + 5
    # the suffix depends on the name only, not on what was named before
    assert cnames.fresh_identifier(second, "w_", {a}) == b
    assert cnames.fresh_identifier("x", "t_", {"t_x"}) == "t_x_2"  # an uncut clash counts
