"""Temporal properties on random walks (``--engine simulate``), as TLC's simulation mode checks them.

A walk is a finite path; it is a behaviour only when it closes on itself. So a walk is judged as a
**lasso** in two cases and never otherwise:

* a concrete state repeats (``walk[i] == walk[j]``, ``j`` its last occurrence): the behaviour is
  ``walk[0..j]`` then the cycle ``walk[j..i-1]`` forever;
* the walk stops at a state with no successor inside the state constraint and no fair action is
  enabled there (steps that leave the constraint count as enabled, as in the graph): the behaviour
  stutters there forever.

The lasso violates the property when it is fair (for each weak fairness constraint or instance: taken
on the cycle or disabled at one of its states; strong: taken or disabled at all of them) and stays
out of P (or Q) as the property's form requires (``check.regions``' reading). A walk cut at
``walk_depth`` proves nothing: treating its end as a stutter is how TLC's simulation mode once
reported bogus violations (tlaplus/tlaplus#204). Every lasso reported is a real behaviour of the
machine (concrete states, steps re-executed by the walk itself), so the check is sound; it is not
complete, and simulation never says "holds".

The states compared are concrete (not fingerprints or symmetry orbits), so symmetry and fairness
split per instance need no check here. The stem is shortened by erasing its loops (chronological
loop erasure keeps a path of the machine's steps), separately before and after a ``~>`` trigger.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..machine import Machine
from ..result import TraceStep, Violation
from . import prepare

#: how a walk's lasso was shortened (``Violation.shortened_by``)
WALK_LASSO = "random walk lasso, stem loops erased"

Instance = tuple[int, Any]  # (fairness constraint index, per-instance key or None)


class WalkChecker:
    """The temporal properties ``names`` of ``machine``, judged on each walk's lassos."""

    def __init__(self, machine: Machine, names: Sequence[str]):
        self.props, self.fairness, self.preds, self.wanted = prepare(machine, names)
        self.of_action: dict[str, list[tuple[int, Any]]] = {}
        for i, f in enumerate(self.fairness):
            for name in f.actions:
                self.of_action.setdefault(name, []).append((i, f.per))
        self.violated: set[str] = set()  # one lasso per property is enough

    def instances(self, step: tuple) -> frozenset[Instance]:
        """The fairness constraints (instances, when split ``per``) ``step`` belongs to."""
        return frozenset((i, None if per is None else per(step)) for i, per in self.of_action.get(step[0], ()))

    def marks(self, state: Any) -> tuple[bool, ...]:
        return tuple(bool(p(state)) for p in self.preds)

    def note(self) -> str:
        n = len(self.props)
        return (f"liveness: {n} temporal propert{'y' if n == 1 else 'ies'} checked on each walk as a lasso when a "
                "state repeats, or where the walk stops with no fair action enabled; a walk cut at walk_depth "
                "is no behaviour and proves nothing")

    def judge(self, walk: list[TraceStep], marks: list[tuple[bool, ...]], enabled: list[frozenset[Instance]],
              j: int) -> list[Violation]:
        """The violations of the lasso whose stem is ``walk[0..j]`` and whose cycle runs from ``walk[j]``
        to the last state, which equals ``walk[j]`` (a repeat), or is ``walk[j]`` itself (``j`` the last
        index: a stutter). ``marks``/``enabled`` hold per walk state its predicate values and its enabled
        fairness instances."""
        stutter = j == len(walk) - 1
        end = len(walk) if stutter else len(walk) - 1  # the lasso's states: 0..end-1
        cycle = range(j, end)
        taken: set[Instance] = set()
        if not stutter:
            for k in range(j + 1, len(walk)):
                step = walk[k].step
                assert step is not None  # (only the first state has none)
                taken |= self.instances(step)
        all_en = frozenset.intersection(*(enabled[k] for k in cycle))
        any_en = frozenset().union(*(enabled[k] for k in cycle))
        for inst in any_en - taken:
            if self.fairness[inst[0]].kind == "SF" or inst in all_en:
                return []  # unfair: a behaviour that must take ``inst`` does not stay on this lasso
        out: list[Violation] = []
        for prop, pi, qi in self.wanted:
            if prop.name in self.violated:
                continue
            trigger = self._trigger(prop.kind, pi, qi, marks, j, end)
            if trigger is None:
                continue
            trace, loop = self._shortened(walk, j, trigger, stutter)
            self.violated.add(prop.name)
            out.append(Violation(property=prop.name, kind="temporal", trace=trace,
                                 found_length=len(walk), shortened_by=WALK_LASSO, loop=loop))
        return out

    @staticmethod
    def _trigger(kind: str, pi: int, qi: int | None, marks: list[tuple[bool, ...]], j: int, end: int
                 ) -> int | None:
        """Where the violation starts on the lasso (states 0..end-1, cycle from j), or None."""
        if kind == "eventually":
            return 0 if not any(marks[k][pi] for k in range(end)) else None
        if kind == "always_eventually":
            return j if not any(marks[k][pi] for k in range(j, end)) else None
        assert qi is not None
        start = end  # the earliest index from which every state to the end is outside Q
        while start > 0 and not marks[start - 1][qi]:
            start -= 1
        if start > j:
            return None  # the cycle visits Q
        return next((k for k in range(start, end) if marks[k][pi]), None)

    @staticmethod
    def _shortened(walk: list[TraceStep], j: int, trigger: int, stutter: bool) -> tuple[list[TraceStep], int]:
        """The lasso's trace with its stem's loops erased (before the trigger and from it to ``j``
        apart, so the trigger stays) and its loop index."""
        cut = min(trigger, j)
        stem = _erase_loops(walk[:cut + 1])
        stem += _erase_loops(walk[cut:j + 1])[1:]
        if stutter:
            return stem, len(stem) - 1
        return stem + walk[j + 1:], len(stem)


def _erase_loops(path: list[TraceStep]) -> list[TraceStep]:
    """Chronological loop erasure: when a state recurs, the path since its first visit is dropped
    (the steps kept still follow each other: they leave the same state)."""
    out: list[TraceStep] = []
    at: dict[Any, int] = {}
    for step in path:
        k = at.get(step.state)
        if k is not None:
            for dropped in out[k + 1:]:
                del at[dropped.state]
            del out[k + 1:]
            continue
        at[step.state] = len(out)
        out.append(step)
    return out
