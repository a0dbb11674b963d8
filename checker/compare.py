"""Compare one spec under several configurations, and find the step where they part ways.

Each column is the spec (model, bounds, properties) under one variant or switch setting. For every
property the columns give a verdict: holds, violates (with the shortest trace's length) or
incomplete. Where a property is violated in one column and holds in another, the failing column's
shortest counterexample is replayed under the passing column's machine: from the same initial
state, each step is looked up among the passing machine's successors by its label (action and
parameters). The first step the passing machine cannot take, or takes to a different state, is
where the passing configuration prevents the violation: "that step is the fix".

Only the engine's machine interface is used (``init_states``, ``successors``, ``fields``,
``format_step``), so this works for any model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .machine import Machine, State
from .result import Result, TraceStep
from .spec import DEADLOCK, Spec

COMPARE_FORMAT = "eoscheck-compare"
COMPARE_VERSION = 1

CellVerdict = Literal["holds", "violates", "incomplete"]
DivergenceKind = Literal["initial", "refused", "differs", "none"]
#: how many enabled alternatives a "refused" divergence lists
ALTERNATIVES_SHOWN = 6


@dataclass
class Column:
    """One configuration of the spec and what its run found."""

    label: str  # the variant, with "+key=value" for each switch it changes
    spec: Spec
    machine: Machine
    result: Result
    #: whether the run met the spec's [expect]; None: this column is not the spec's own
    met: bool | None = None
    message: str = ""

    def cell(self, prop: str) -> Cell:
        hits = [v for v in self.result.violations if v.property == prop]
        if hits:
            shortest = min(hits, key=lambda v: v.length)
            return Cell("violates", shortest.length)
        if self.result.verdict == "holds":
            return Cell("holds")
        return Cell("incomplete")

    def trace(self, prop: str) -> list[TraceStep]:
        return min((v for v in self.result.violations if v.property == prop),
                   key=lambda v: v.length).trace


@dataclass(frozen=True)
class Cell:
    verdict: CellVerdict
    length: int | None = None

    def label(self) -> str:
        return f"violates ({self.length})" if self.verdict == "violates" else self.verdict


@dataclass
class Divergence:
    """Where the passing column parts from the failing column's counterexample."""

    property: str
    failing: str  # column labels
    passing: str
    trace_length: int
    kind: DivergenceKind
    #: the index of the diverging state in the trace (0: the initial state)
    index: int
    label: str  # the step's label, e.g. "HandleProduceResponse(...)"
    #: field -> (value under the failing column, value under the passing column), for "differs"
    #: and "initial"
    diff: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    #: for "refused": steps the passing column enables at that state instead
    alternatives: list[str] = field(default_factory=list)
    #: the labels of the steps before the divergence, which both columns take alike
    prefix: list[str] = field(default_factory=list)
    #: after a "differs": the replay goes on from the passing column's own state, and this is the
    #: first later step it refuses (index, label), or None when it takes every step
    later_refusal: tuple[int, str] | None = None

    def summary(self) -> str:
        where = f"step {self.index} of {self.trace_length - 1}"
        if self.kind == "refused":
            return f"{where}: {self.passing} refuses {self.label}"
        if self.kind == "differs":
            return f"{where}: {self.passing} answers {self.label} differently"
        if self.kind == "initial":
            return f"the initial states differ under {self.passing}"
        return (f"{self.passing} replays all {self.trace_length - 1} steps alike; the property "
                "itself differs between the configurations")


@dataclass
class Comparison:
    spec: Spec
    columns: list[Column]
    properties: list[str]
    divergences: list[Divergence]

    def differing(self) -> list[str]:
        return [p for p in self.properties
                if len({c.cell(p).verdict for c in self.columns}) > 1]

    @property
    def met(self) -> bool:
        return all(c.met is not False for c in self.columns)


def properties_of(spec: Spec, machine: Machine, columns: Sequence[Column]) -> list[str]:
    """The rows: the spec's checked properties (every property when it names none), and deadlock
    when a column reports one."""
    names = list(spec.check.properties) if spec.check.properties else list(machine.properties())
    if any(v.property == DEADLOCK for c in columns for v in c.result.violations):
        names.append(DEADLOCK)
    return names


def _diff(want: dict[str, Any], got: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    keys = list(dict.fromkeys([*want, *got]))
    return {k: (want.get(k), got.get(k)) for k in keys if want.get(k) != got.get(k)}


def replay(trace: Sequence[TraceStep], failing: Machine, passing: Machine, prop: str,
           failing_label: str, passing_label: str) -> Divergence:
    """Re-execute ``trace`` (found on ``failing``) on ``passing`` and report the first step that
    ``passing`` refuses or answers with a different state (compared as ``Machine.fields``)."""

    def made(kind: DivergenceKind, index: int, label: str, **extra: Any) -> Divergence:
        prefix = [failing.format_step(ts.step) for ts in trace[1:index] if ts.step is not None]
        return Divergence(prop, failing_label, passing_label, len(trace), kind, index, label,
                          prefix=prefix, **extra)

    start = failing.fields(trace[0].state)
    inits = list(passing.init_states())
    current: State | None = next((s for s in inits if passing.fields(s) == start), None)
    if current is None:
        other = passing.fields(inits[0]) if inits else {}
        return made("initial", 0, "Initial state", diff=_diff(start, other))
    for index, ts in enumerate(trace[1:], start=1):
        assert ts.step is not None  # only the initial state has no step
        label = failing.format_step(ts.step)
        successors = list(passing.successors(current))
        same = [nxt for step, nxt in successors if tuple(step) == tuple(ts.step)]
        if not same:
            alternatives = list(dict.fromkeys(passing.format_step(s) for s, _ in successors))
            return made("refused", index, label, alternatives=alternatives[:ALTERNATIVES_SHOWN])
        want = failing.fields(ts.state)
        match = next((nxt for nxt in same if passing.fields(nxt) == want), None)
        if match is None:
            # the closest answer: the fewest fields apart from the failing column's
            closest = min(same, key=lambda nxt: len(_diff(want, passing.fields(nxt))))
            return made("differs", index, label, diff=_diff(want, passing.fields(closest)),
                        later_refusal=_first_refusal(trace, index + 1, closest, failing, passing))
        current = match
    return made("none", len(trace), "")


def _first_refusal(trace: Sequence[TraceStep], start: int, state: State, failing: Machine,
                   passing: Machine) -> tuple[int, str] | None:
    """Go on with the trace's steps from ``passing``'s own state; the first one it cannot take.

    A state difference may be bookkeeping that matters later or never: the refusal says where
    the passing column actually stops following the counterexample."""
    current = state
    for index in range(start, len(trace)):
        step = trace[index].step
        assert step is not None
        want = failing.fields(trace[index].state)
        same = [nxt for s, nxt in passing.successors(current) if tuple(s) == tuple(step)]
        if not same:
            return index, failing.format_step(step)
        current = min(same, key=lambda nxt: len(_diff(want, passing.fields(nxt))))
    return None


def divergences(columns: Sequence[Column], properties: Sequence[str]) -> list[Divergence]:
    """For each property violated in one column and holding in another: the replay of the failing
    column's shortest counterexample under each passing column."""
    found: list[Divergence] = []
    for prop in properties:
        failing = [c for c in columns if c.cell(prop).verdict == "violates"]
        passing = [c for c in columns if c.cell(prop).verdict == "holds"]
        for f in failing:
            for p in passing:
                found.append(replay(f.trace(prop), f.machine, p.machine, prop, f.label, p.label))
    return found


def to_json(comparison: Comparison, command: str = "") -> dict[str, Any]:
    spec = comparison.spec
    return {
        "format": COMPARE_FORMAT, "version": COMPARE_VERSION,
        "command": command,
        "spec": spec.name, "model": spec.model, "bounds": dict(spec.bounds),
        "columns": [{"label": c.label, "variant": c.spec.variant,
                     "switches": dict(c.spec.switch_overrides), "strategy": c.result.strategy,
                     "distinct": c.result.stats.distinct, "generated": c.result.stats.generated,
                     "complete": c.result.verdict != "incomplete" and not c.result.limit_hit,
                     "met": c.met, "message": c.message} for c in comparison.columns],
        "properties": [{"property": p,
                        "cells": {c.label: {"verdict": c.cell(p).verdict, "length": c.cell(p).length}
                                  for c in comparison.columns}}
                       for p in comparison.properties],
        "differing": comparison.differing(),
        "divergences": [{"property": d.property, "failing": d.failing, "passing": d.passing,
                         "trace_length": d.trace_length, "kind": d.kind, "index": d.index,
                         "step": d.label, "prefix": d.prefix, "alternatives": d.alternatives,
                         "diff": {k: {"failing": a, "passing": b} for k, (a, b) in d.diff.items()},
                         "later_refusal": (None if d.later_refusal is None else
                                           {"index": d.later_refusal[0], "step": d.later_refusal[1]}),
                         "summary": d.summary()}
                        for d in comparison.divergences],
        "met": comparison.met,
    }
