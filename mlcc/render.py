"""The Jinja environment for C templates: strict, deterministic, with C-literal filters."""

from __future__ import annotations

from functools import lru_cache

import jinja2

from . import cexpr, cnames, paths


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(paths.templates_dir())),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["cfloat"] = cnames.float_literal
    env.filters["cint"] = cnames.int_literal
    env.filters["comment"] = cnames.comment_text
    env.filters["cstring"] = cnames.string_literal
    env.filters["loop"] = cexpr.loop
    env.filters["carg"] = cexpr.argument
    env.filters["sizes"] = cexpr.sizes
    env.globals.update(offset=cexpr.offset, index=cexpr.index)
    return env


def render(template: str, **values) -> str:
    return environment().get_template(template).render(**values)


def render_step(template: str, **values) -> tuple[str, bool]:
    """A step template's C and whether it declares variables at its top level (the template sets `scoped`:
    code generation then gives the step its own block, so steps' locals never collide)."""
    module = environment().get_template(template).make_module(values)
    return str(module), bool(getattr(module, "scoped", False))
