"""Model sweeps (sklearn_models, hf_models): what both share, the case selection and the pass summary."""

from __future__ import annotations


def select_cases(cases: list, fast: bool = False, only: list[str] | None = None) -> list:
    """The cases named in `only`, else the fast ones, else all; an unknown name stops the sweep."""
    if only:
        known = {c.name for c in cases}
        unknown = sorted(set(only) - known)
        if unknown:
            raise SystemExit(f"unknown case(s) {', '.join(unknown)}; cases: {', '.join(sorted(known))}")
        return [c for c in cases if c.name in only]
    return [c for c in cases if c.fast] if fast else cases


def pass_summary(results: list, counted_as: str) -> str:
    """'P/N pass (per target) of COUNTED_AS; S not run or not exported'."""
    counted = [r for r in results if r.status not in ("not run", "export failed")]
    passed = sum(r.status == "pass" for r in counted)
    per_target: dict[str, list[int]] = {}
    for r in counted:
        per_target.setdefault(r.target, [0, 0])
        per_target[r.target][0] += r.status == "pass"
        per_target[r.target][1] += 1
    parts = ", ".join(f"{t} {p}/{n}" for t, (p, n) in per_target.items())
    skipped = len(results) - len(counted)
    return f"{passed}/{len(counted)} pass ({parts}) of {counted_as}; {skipped} not run or not exported"
