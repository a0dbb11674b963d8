"""``--bound name=LO..HI`` on ``eoscheck check``: one run per value of a bound.

The runs are ordinary ad hoc runs (``checker.adhoc``): each is named ``SPEC+name=value`` and
expects every property to hold. After the verdict table, a sweep table shows how the counts grow
from one value to the next and marks the value where the verdict flips.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .spec import SpecError

_RANGE = re.compile(r"^\s*([^=]+?)\s*=\s*(-?\d+)\s*\.\.\s*(-?\d+)\s*$")
#: more runs than this is almost surely a typo (and hours of exploration)
MAX_VALUES = 64


@dataclass(frozen=True)
class Sweep:
    bound: str
    values: tuple[int, ...]


def split_sweep(texts: Sequence[str]) -> tuple[list[str], Sweep | None]:
    """The ``--bound`` texts without the ``name=LO..HI`` one, and that sweep (at most one)."""
    fixed: list[str] = []
    sweep: Sweep | None = None
    for text in texts:
        if ".." not in text:
            fixed.append(text)
            continue
        m = _RANGE.match(text)
        if not m:
            raise SpecError(f"--bound {text!r}: a sweep is NAME=LO..HI with integers LO <= HI")
        name, lo, hi = m.group(1), int(m.group(2)), int(m.group(3))
        if lo > hi:
            raise SpecError(f"--bound {text!r}: {lo}..{hi} is empty (LO must not exceed HI)")
        if hi - lo + 1 > MAX_VALUES:
            raise SpecError(f"--bound {text!r}: {hi - lo + 1} runs; a sweep takes at most "
                            f"{MAX_VALUES} values")
        if sweep is not None:
            raise SpecError(f"--bound {text!r}: sweep one bound at a time ({sweep.bound} is "
                            "already swept)")
        sweep = Sweep(name, tuple(range(lo, hi + 1)))
    return fixed, sweep


def _verdict(result: Any) -> str:
    if result.violations:
        return "violates " + ", ".join(f"{v.property} ({v.length})" for v in result.violations)
    if result.verdict == "holds":
        return "holds"
    return f"incomplete ({result.limit_hit})" if result.limit_hit else "incomplete"


def sweep_rows(sweep: Sweep, outcomes: Sequence[Any]) -> list[dict[str, Any]]:
    """One row per value: counts, growth over the previous value, and whether the verdict flips."""
    rows: list[dict[str, Any]] = []
    previous: dict[str, Any] | None = None
    for value, outcome in zip(sweep.values, outcomes):
        stats = outcome.result.stats
        row = {"value": value, "verdict": _verdict(outcome.result), "distinct": stats.distinct,
               "generated": stats.generated, "depth": stats.depth, "seconds": stats.elapsed,
               "growth": None, "flips": False}
        if previous is not None:
            if previous["distinct"]:
                row["growth"] = stats.distinct / previous["distinct"]
            row["flips"] = row["verdict"] != previous["verdict"]
        rows.append(row)
        previous = row
    return rows


def print_sweep(console: Any, sweep: Sweep, outcomes: Sequence[Any]) -> None:
    from rich.text import Text

    from .report import seconds

    rows = sweep_rows(sweep, outcomes)
    table = [[sweep.bound, "distinct", "growth", "generated", "depth", "time", "verdict"]]
    for r in rows:
        growth = "" if r["growth"] is None else f"x{r['growth']:.2f}"
        table.append([str(r["value"]), f"{r['distinct']:,}", growth, f"{r['generated']:,}",
                      str(r["depth"]), seconds(r["seconds"]),
                      r["verdict"] + ("   <- verdict flips" if r["flips"] else "")])
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]) - 1)]
    console.print()
    console.print(Text(f"sweep of {sweep.bound}:", style="bold"))
    for i, row in enumerate(table):
        cells = [c.rjust(w) if j else c.ljust(w) for j, (c, w) in enumerate(zip(row, widths))]
        console.print(Text("  " + "  ".join([*cells, row[-1]]), style="bold" if i == 0 else ""),
                      soft_wrap=True)
    flips = [r["value"] for r in rows if r["flips"]]
    if flips:
        console.print(f"  the verdict flips at {sweep.bound} = {', '.join(map(str, flips))}")
    else:
        console.print(f"  the verdict is the same for every value of {sweep.bound}")
