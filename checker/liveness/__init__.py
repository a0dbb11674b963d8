"""Liveness: temporal properties under weak and strong fairness, checked on the explored graph.

``check_liveness`` builds the state graph (``graph.build_graph``), finds for each named property a
fair SCC its violation can end in (``check.find_lasso``), and turns the lasso into a concrete trace
whose last state is followed by ``trace[loop]`` forever. See ``temporal`` for the operators and
fairness, ``fair`` for what makes an SCC fair.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from ..explore.expand import Expander
from ..fingerprint import MASK64, fingerprint_fn
from ..machine import Machine
from ..result import ActionCoverage, Result, Stats, TraceStep, Violation
from ..state_view import NO_VIEW
from .check import Lasso, find_lasso
from .graph import LivenessError, StateGraph, build_graph
from .temporal import (
    SF,
    WF,
    Fairness,
    TemporalProperty,
    always_eventually,
    eventually,
    leads_to,
)

__all__ = [
    "SF",
    "WF",
    "Fairness",
    "LivenessError",
    "StateGraph",
    "TemporalProperty",
    "always_eventually",
    "check_liveness",
    "eventually",
    "lasso_trace",
    "leads_to",
]

#: cycle rounds tried before a symmetry-reduced cycle closes on a concrete state
MAX_ROUNDS = 720
LASSO = "bfs (shortest stem) + fair cycle"


def select_temporal(machine: Machine, names: Sequence[str]) -> list[TemporalProperty]:
    props = machine.temporal_properties()
    unknown = [n for n in names if n not in props]
    if unknown:
        raise LivenessError(f"unknown temporal property {unknown[0]!r}; valid temporal properties: "
                            f"{', '.join(props) or '(none)'}")
    return [props[n] for n in props if n in set(names)]  # the machine's order


Wanted = list[tuple[TemporalProperty, int, int | None]]  # (property, P's mark, Q's mark or None)


def prepare(machine: Machine, names: Sequence[str]) -> tuple[list[TemporalProperty], list[Fairness],
                                                               list[Any], Wanted]:
    """(the properties ``names`` in the machine's order, its fairness, the state predicates the
    graph marks, each property with its predicates' mark indices); errors are one line."""
    props = select_temporal(machine, names)
    fairness = list(machine.fairness())
    if len(fairness) > 64:
        raise LivenessError("at most 64 fairness constraints per machine")
    preds: list[Any] = []
    slot: dict[int, int] = {}  # id(predicate) -> mark index (a predicate shared by properties is evaluated once)

    def mark_of(p: Any) -> int:
        if id(p) not in slot:
            slot[id(p)] = len(preds)
            preds.append(p)
        return slot[id(p)]

    wanted = [(prop, mark_of(prop.p), mark_of(prop.q) if prop.kind == "leads_to" else None)
              for prop in props]
    return props, fairness, preds, wanted


def temporal_violations(machine: Machine, g: StateGraph, wanted: Wanted, stop_at_first: bool) -> list[Violation]:
    """A lasso per violated property of ``wanted`` on the complete graph ``g`` (the first only
    under ``stop_at_first``)."""
    violations: list[Violation] = []
    for prop, pi, qi in wanted:
        lasso = find_lasso(g, prop, g.marks[pi], g.marks[qi] if qi is not None else None)
        if lasso is not None:
            trace, loop = lasso_trace(machine, g, lasso)
            violations.append(Violation(property=prop.name, kind="temporal", trace=trace,
                                        found_length=len(trace), shortened_by=LASSO, loop=loop))
            if stop_at_first:
                break
    return violations


def summary_note(props: Sequence[TemporalProperty], fairness: Sequence[Fairness], g: StateGraph,
                 built: float, searched: float, how: str = "") -> str:
    """The run's line on the liveness check: what was checked under which fairness, the graph, times."""
    return (f"liveness: {len(props)} temporal propert{'y' if len(props) == 1 else 'ies'} under "
            f"{', '.join(map(str, fairness)) or 'no fairness'}; graph of {g.size:,} states and "
            f"{g.edges:,} edges, {g.nbytes() / max(g.size, 1):.1f} bytes per state, built in {built:.2f} s"
            f"{how}, SCC search {searched:.2f} s")


def check_liveness(machine: Machine, names: Sequence[str], *, symmetry: bool = True,
                   max_states: int | None = None, max_seconds: float | None = None,
                   max_depth: int | None = None, stop_at_first: bool = True) -> Result:
    """Check the temporal properties ``names`` of ``machine`` under its declared fairness (nothing
    else: ``onepass.explore_bfs_with_liveness`` also checks the safety properties on the way)."""
    start = time.perf_counter()
    props, fairness, preds, wanted = prepare(machine, names)
    g = build_graph(machine, fairness, preds, symmetry=symmetry, max_states=max_states,
                    max_seconds=max_seconds, max_depth=max_depth)
    built = time.perf_counter() - start
    violations = temporal_violations(machine, g, wanted, stop_at_first) if g.complete else []
    elapsed = time.perf_counter() - start
    coverage = {a: ActionCoverage(g.coverage.get(a, 0), 0) for a in machine.actions}
    stats = Stats(distinct=g.distinct, generated=g.generated, depth=g.depth, queue=g.queue,
                  elapsed=elapsed, coverage=coverage)
    notes = [summary_note(props, fairness, g, built, elapsed - built)]
    limit = g.limit_hit
    if limit:
        notes.append(f"liveness not checked: the graph is incomplete (stopped at the {limit} limit); "
                     "a temporal property needs the whole graph")
    verdict = "violated" if violations else ("incomplete" if limit else "holds")
    return Result(verdict=verdict, strategy="liveness", stats=stats, violations=violations,  # type: ignore[arg-type]
                  limit_hit=limit, notes=notes)


def lasso_trace(machine: Machine, g: StateGraph, lasso: Lasso) -> tuple[list[TraceStep], int]:
    """The concrete trace of ``lasso`` and its loop index (the last state is followed by
    ``trace[loop]``; a trace ending in a stutter has ``loop`` = its last index).

    The trace re-executes the machine along the lasso's fingerprints and actions. With symmetry the
    cycle may come back to another state of the loop state's orbit: it is then followed again until
    a concrete state recurs at a round's end, and the loop starts there.
    """
    # re-execution through the expansion core, as ``checker.trace.rebuild_trace`` does
    walker = Expander(machine, fingerprinter=fingerprint_fn(machine, g.symmetry, NO_VIEW), check_deadlock=False,
                      no_properties=True)
    first = g.fps[lasso.stem_nodes[0]]
    _, inits, init_fps = walker.init_states()
    state = next((s for s, h in zip(inits, init_fps) if h & MASK64 == first), None)
    if state is None:
        raise LivenessError("the lasso's initial state is not an initial state of the machine "
                            "(is init_states() deterministic?)")
    trace = [TraceStep(None, state)]

    def follow(edge: int) -> None:
        target, label = g.fps[g.targets[edge]], g.labels[edge]
        current = trace[-1].state
        for step, nxt, h in walker.expand_one(current):
            if h & MASK64 == target and g.label_of(step) == label:
                trace.append(TraceStep(step, nxt))
                return
        raise LivenessError(f"state {len(trace)} of the lasso is not reproduced by re-execution "
                            "(is successors() deterministic?)")

    for e in lasso.stem_edges:
        follow(e)
    if not lasso.cycle_edges:
        return trace, len(trace) - 1
    round_start = {trace[-1].state: len(trace) - 1}
    for _ in range(MAX_ROUNDS):
        for e in lasso.cycle_edges:
            follow(e)
        at = round_start.get(trace[-1].state)
        if at is not None:
            return trace, at + 1
        round_start[trace[-1].state] = len(trace) - 1
    raise LivenessError(f"the symmetry-reduced cycle did not close on a concrete state in {MAX_ROUNDS} rounds")
