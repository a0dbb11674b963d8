"""Pieces every single-process strategy shares: property selection, coverage, timing, progress."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..machine import Machine
from ..result import ActionCoverage, Stats, Verdict, Violation, ViolationKind

if TYPE_CHECKING:
    from ..progress import Progress

Check = Callable[..., bool]

#: how often (seconds) engines may call Progress.update; the plan asks for a few times per second
PROGRESS_INTERVAL = 0.25


class UnknownPropertyError(ValueError):
    """ExploreOptions.properties names a property the machine does not have."""


def select_properties(machine: Machine, names: tuple[str, ...] | None
                      ) -> tuple[list[tuple[str, Check]], list[tuple[str, Check]]]:
    """(invariants, transition properties) as (name, check) lists, in the machine's order.

    The machine's order (not the order of ``names``) keeps results independent of how a spec
    happens to list its properties.
    """
    props = machine.properties()
    if names is not None:
        unknown = [n for n in names if n not in props]
        if unknown:
            valid = ", ".join(props) or "(none)"
            raise UnknownPropertyError(f"unknown property {unknown[0]!r}; valid properties: {valid}")
        wanted = set(names)
    else:
        wanted = set(props)
    invariants = [(n, p.check) for n, p in props.items() if n in wanted and p.kind == "invariant"]
    transitions = [(n, p.check) for n, p in props.items() if n in wanted and p.kind == "transition"]
    return invariants, transitions


def overrides(machine: Machine, method: str) -> bool:
    """True when the machine's class replaces ``Machine.<method>``; lets engines skip identity hooks."""
    return getattr(type(machine), method) is not getattr(Machine, method)


def build_coverage(machine: Machine, generated: dict[str, int], distinct: dict[str, int],
                   outside: dict[str, int] | None = None) -> dict[str, ActionCoverage]:
    """Coverage keyed in the machine's declared action order, then any undeclared actions by name,
    so the dict's order never depends on which action happened to fire first. ``outside``: per
    action, the generated successors the state constraint cut."""
    names = list(machine.actions)
    names += sorted(a for a in set(generated) | set(distinct) if a not in machine.actions)
    out = outside or {}
    return {a: ActionCoverage(generated.get(a, 0), distinct.get(a, 0), out.get(a, 0)) for a in names}


class Ticker:
    """Wall clock, time limit and rate-limited progress reporting for one run."""

    def __init__(self, progress: Progress | None, label: str, max_seconds: float | None):
        self.progress = progress
        self.start = time.perf_counter()
        self.deadline = self.start + max_seconds if max_seconds is not None else None
        self._next_update = self.start + PROGRESS_INTERVAL
        if progress is not None:
            progress.start(label)

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def out_of_time(self) -> bool:
        return self.deadline is not None and time.perf_counter() >= self.deadline

    def maybe_update(self, make_stats: Callable[[], Stats], level: int | None = None,
                     note: str = "") -> None:
        """Report ``make_stats()`` if an update is due; it is called before this returns or never,
        so a caller's lambda may read its loop's variables (ruff's B023 is silenced there)."""
        if self.progress is None:
            return
        now = time.perf_counter()
        if now >= self._next_update:
            self._next_update = now + PROGRESS_INTERVAL
            self.progress.update(make_stats(), level, note)

    def finish(self, stats: Stats) -> None:
        if self.progress is not None:
            self.progress.finish(stats)


def verdict_of(violations: list, limit_hit: str | None) -> Verdict:
    """A violation wins; a run cut short by a limit is "incomplete", never "holds"."""
    if violations:
        return "violated"
    return "incomplete" if limit_hit else "holds"


def limit_notes(limit_hit: str | None, options: Any, depth_bound: int | None = None) -> list[str]:
    """The user's line for the limit that stopped a run (none when it ran to the end)."""
    if not limit_hit:
        return []
    depth = options.max_depth if depth_bound is None else depth_bound
    value = {"states": options.max_states, "depth": depth, "time": options.max_seconds}[limit_hit]
    return [describe_limit(limit_hit, value)]


def describe_limit(limit: str, value: Any) -> str:
    return {"states": f"stopped at the state limit ({value:,} distinct states)",
            "depth": f"stopped at the depth limit ({value} states deep); deeper states were not explored",
            "time": f"stopped at the time limit ({value} s)"}.get(limit, f"stopped: {limit}")


def shortened_violation(machine: Machine, name: str, kind: ViolationKind, trace: list, symmetry: Any) -> Violation:
    """A Violation for a trace found by DFS or simulation, shortened (see checker.trace)."""
    from ..trace import bad_end, shorten_trace_explained

    short, how = shorten_trace_explained(machine, trace, bad_end(machine, kind, name), symmetry=symmetry)
    if len(short) > len(trace):  # cannot happen for a valid input; keep the original to be safe
        short, how = trace, "not shortened"
    return Violation(property=name, kind=kind, trace=short, found_length=len(trace), shortened_by=how)
