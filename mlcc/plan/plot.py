"""The memory timeline as plain SVG: x is the step, y the arena offset, each buffer a box; tensors sharing a
buffer (views, Concat ranges, in-place results) are outlined inside it; the peak step and the lower bound are
marked. Hovering a box shows its tensor (an SVG <title>). No dependency: the file is text."""

from __future__ import annotations

import hashlib
from html import escape

from ..lower import Program
from . import MemoryPlan

WIDTH, HEIGHT = 1100, 640
LEFT, RIGHT, TOP, BOTTOM = 90, 200, 50, 50
LINK_COLOURS = {"view": "#1f5fbf", "concat": "#1a8a3a", "strided": "#5aa02c", "in-place": "#d0590b", "placed": "#8a3ab9"}
LINK_WORDS = {"view": "view", "concat": "written into a Concat", "strided": "channels of a Concat", "in-place": "in place",
              "placed": "placed in a Concat"}


def _fill(name: str, scratch: bool) -> str:
    if scratch:
        return "#c8c8c8"
    hue = int(hashlib.sha256(name.encode()).hexdigest()[:4], 16) % 360
    return f"hsl({hue},55%,72%)"


def _bytes(n: int) -> str:
    for unit, size in (("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n} B"


def _ticks(top: int, count: int = 6, unit: int = 1) -> list[int]:
    """Round tick values up to `top`: 1, 2 or 5 times a power of ten, in multiples of `unit`."""
    if top <= 0:
        return [0]
    raw = top / unit / count
    magnitude = 10 ** (len(str(int(raw))) - 1) if raw >= 1 else 1
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw) * unit
    return list(range(0, top + 1, int(step)))


def _byte_unit(top: int) -> int:
    return next((size for size in (1 << 20, 1 << 10) if top >= 2 * size), 1)


def svg(program: Program, plan: MemoryPlan, title: str) -> str:
    steps = max(len(program.steps), 1)
    top = max(plan.arena_bytes, plan.lower_bound_bytes, 1)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(step: float) -> float:
        return LEFT + plot_w * step / steps

    def y(offset: float) -> float:
        return TOP + plot_h * (1 - offset / top)

    scratch = {id(v) for s in program.steps for v in s.scratch}
    by_root: dict[int, list] = {}
    for a in plan.aliases:
        by_root.setdefault(id(a.root), []).append(a)
    lifetime: dict[int, list[int]] = {}
    for index, s in enumerate(program.steps):
        for v in [*s.reads, *s.writes]:
            lifetime.setdefault(id(v), [index, index])[1] = index

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
           'font-family="sans-serif" font-size="12">',
           f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
           f'<text x="{LEFT}" y="22" font-size="15" font-weight="bold">{escape(title)}: memory over the schedule</text>',
           f'<text x="{LEFT}" y="40" fill="#444">arena {plan.arena_bytes:,} B, lower bound {plan.lower_bound_bytes:,} B, '
           f'all intermediates {plan.intermediates_bytes:,} B; {escape(plan.strategy)}</text>']
    for tick in _ticks(top, unit=_byte_unit(top)):  # offsets
        out.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y(tick) + 4:.1f}" text-anchor="end" fill="#444">{_bytes(tick)}</text>')
    for tick in _ticks(steps - 1, 10):  # steps
        out.append(f'<text x="{x(tick + 0.5):.1f}" y="{TOP + plot_h + 16}" text-anchor="middle" fill="#444">{tick}</text>')
    out.append(f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 12}" text-anchor="middle">step</text>')
    out.append(f'<text x="18" y="{TOP + plot_h / 2}" text-anchor="middle" transform="rotate(-90 18 {TOP + plot_h / 2})">arena offset</text>')

    for b in sorted(plan.buffers, key=lambda b: (b.first, b.offset)):
        if not b.size:
            continue
        name = program.names.get(id(b.value), b.value.name)
        shared = by_root.get(id(b.value), [])
        tip = [f"{name}: {b.value.type_str()}, {b.value.nbytes:,} B at offset {b.offset:,}, steps {b.first}-{b.last}"]
        tip += [f"  {program.names.get(id(a.value), a.value.name)}: {LINK_WORDS[a.link.kind]} at +{a.offset:,} B" for a in shared]
        out.append(f'<rect x="{x(b.first):.1f}" y="{y(b.offset + b.size):.1f}" width="{x(b.last + 1) - x(b.first):.1f}" '
                   f'height="{y(b.offset) - y(b.offset + b.size):.1f}" fill="{_fill(name, id(b.value) in scratch)}" '
                   f'stroke="#333" stroke-width="0.6"><title>{escape(chr(10).join(tip))}</title></rect>')
        for a in shared:
            first, last = lifetime.get(id(a.value), (b.first, b.last))
            start = b.offset + a.offset
            out.append(f'<rect x="{x(first) + 1:.1f}" y="{y(start + a.value.nbytes) + 1:.1f}" '
                       f'width="{max(x(last + 1) - x(first) - 2, 1):.1f}" '
                       f'height="{max(y(start) - y(start + a.value.nbytes) - 2, 1):.1f}" fill="none" '
                       f'stroke="{LINK_COLOURS[a.link.kind]}" stroke-width="1.4" stroke-dasharray="4 2">'
                       f'<title>{escape(program.names.get(id(a.value), a.value.name))}: {LINK_WORDS[a.link.kind]} of '
                       f'{escape(program.names.get(id(a.link.parent), a.link.parent.name))}</title></rect>')

    peak_x = x(plan.peak_step + 0.5)
    out.append(f'<line x1="{peak_x:.1f}" x2="{peak_x:.1f}" y1="{TOP}" y2="{TOP + plot_h}" stroke="#c00" stroke-width="1.5"/>')
    out.append(f'<text x="{peak_x + 4:.1f}" y="{TOP + 12}" fill="#c00">peak, step {plan.peak_step}</text>')
    out.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y(plan.lower_bound_bytes):.1f}" y2="{y(plan.lower_bound_bytes):.1f}" '
               'stroke="#c00" stroke-dasharray="6 3"/>')
    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#333"/>')

    legend = [("#c8c8c8", "scratch (one step)", False), ("hsl(200,55%,72%)", "tensor buffer", False)]
    legend += [(colour, LINK_WORDS[kind], True) for kind, colour in LINK_COLOURS.items()]
    lx = LEFT + plot_w + 16
    for i, (colour, label, outlined) in enumerate(legend):
        ly = TOP + 10 + 22 * i
        style = f'fill="none" stroke="{colour}" stroke-width="1.4" stroke-dasharray="4 2"' if outlined else f'fill="{colour}" stroke="#333"'
        out.append(f'<rect x="{lx}" y="{ly}" width="18" height="12" {style}/><text x="{lx + 24}" y="{ly + 10}">{escape(label)}</text>')
    ly = TOP + 10 + 22 * len(legend)
    out.append(f'<line x1="{lx}" x2="{lx + 18}" y1="{ly + 6}" y2="{ly + 6}" stroke="#c00" stroke-dasharray="6 3"/>'
               f'<text x="{lx + 24}" y="{ly + 10}">lower bound</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
