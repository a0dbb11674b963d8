"""Matching a step's ``expected`` against what the model answered (only listed fields are
asserted; nested objects are partial too, except that an expected empty object asserts emptiness)."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from .values import value
from .world import ABSTRACTED

#: keys that annotate rather than assert
ANNOTATIONS = {"note", "notes", "comment", "error_code"}


class Difference(NamedTuple):
    field: str
    expected: Any
    model: Any


class Comparison(NamedTuple):
    compared: int
    differences: tuple[Difference, ...]
    #: field -> why the model cannot answer it
    unchecked: dict[str, str]


def _norm(v: Any) -> Any:
    if isinstance(v, str):
        return v.strip()
    return v


def same(expected: Any, model: Any, symbols: dict[str, int] | None = None) -> bool:
    e, m = _norm(expected), _norm(model)
    if isinstance(e, str) and isinstance(m, int) and not isinstance(m, bool):
        e = value(e, symbols)  # a symbolic expected value such as G or E+1
    if isinstance(e, bool) or isinstance(m, bool):
        return e is m
    if e == m:
        return True
    if isinstance(e, str) and isinstance(m, str):
        # 'PrepareAbort (then CompleteAbort after markers)': the value, then a remark
        head = re.split(r"\s*\(", e, maxsplit=1)[0].strip()
        if head == m:
            return True
        # 'skipped (no append)' against the model's 'skipped (no append)' wording variants
        return bool(m) and e.lower().startswith(m.split(" (")[0].lower())
    if isinstance(e, list) and isinstance(m, list):
        try:
            return sorted(map(str, e)) == sorted(map(str, m))
        except TypeError:
            return False
    return False


def compare(expected: dict[str, Any], model: dict[str, Any], prefix: str = "",
            symbols: dict[str, int] | None = None) -> Comparison:
    why = model.get("__why__", {})
    compared, diffs, unchecked = 0, list[Difference](), dict[str, str]()
    codes_only = "error" not in expected and "error_code" in expected
    for key, exp in expected.items():
        path = f"{prefix}{key}"
        if key in ANNOTATIONS and not (codes_only and key == "error_code"):
            continue
        if key in model and key not in why:
            got = model[key]
            if isinstance(exp, dict) and isinstance(got, dict) and not exp:
                # an expected empty object asserts emptiness; a partial compare of it would assert nothing
                compared += 1
                if got:
                    diffs.append(Difference(path, exp, got))
            elif isinstance(exp, dict) and isinstance(got, dict):
                sub = compare(exp, got, f"{path}.", symbols)
                compared += sub.compared
                diffs.extend(sub.differences)
                unchecked.update(sub.unchecked)
            else:
                compared += 1
                if not same(exp, got, symbols):
                    diffs.append(Difference(path, exp, got))
        else:
            unchecked[path] = why.get(key) or ABSTRACTED.get(key) or \
                f"the model's rule for this input does not produce '{key}'"
    return Comparison(compared, tuple(diffs), unchecked)
