"""Checks a composed machine's memoisation against the same machine recomputing everything.

``compare_memo`` explores the memoised machine breadth-first and, on every state it reaches,
asks an unmemoised twin for the same successors, property verdicts and canonical form (states outside
``within_bounds`` are compared but not expanded, as the engines do), and checks that
``checked_successors`` makes the same steps and records exactly those some transition property fails on. A memo key that misses an
input of its rule would make some state's memoised successors those of another state with the
same key: the comparison reports the first such state.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .machine import Composed


class MemoMismatch(AssertionError):
    """The memoised machine disagreed with the unmemoised one."""


@dataclass(frozen=True)
class MemoReport:
    states: int
    steps: int
    complete: bool  # the whole reachable space was compared (not cut at ``max_states``)


def compare_memo(make: Callable[[bool], Composed], max_states: int = 50_000) -> MemoReport:
    """``make(memoize)`` builds the machine; raise ``MemoMismatch`` at the first difference."""
    memo, plain = make(True), make(False)
    props = memo.properties()
    plain_props = plain.properties()
    init = [s for s in memo.init_states() if memo.within_bounds(s)]
    if init != [s for s in plain.init_states() if plain.within_bounds(s)]:
        raise MemoMismatch("initial states differ")
    symmetric = memo.has_symmetry()
    transitions = [name for name, prop in props.items() if prop.kind == "transition"]
    checked = memo.checked_successors(transitions) if transitions else None
    seen = set(init)
    queue = deque(init)
    steps = 0
    cut = False
    while queue:
        s = queue.popleft()
        got, want = memo.successors(s), plain.successors(s)
        if got != want:
            raise MemoMismatch(f"successors differ at {memo.view(s)!r}: memoised {len(got)} steps "
                               f"{[memo.format_step(st) for st, _ in got]}, recomputed "
                               f"{[plain.format_step(st) for st, _ in want]}"
                               + ("" if len(got) != len(want) else
                                  f"; first differing: {next(g for g, w in zip(got, want) if g != w)!r}"))
        if checked is not None:
            # the successors that check their own steps: the same steps, and a step recorded as
            # failing exactly where one of the properties fails on it
            fn, failed = checked
            failed.clear()
            if fn(s) != got:
                raise MemoMismatch(f"checked successors differ at {memo.view(s)!r}")
            failing = [step for step, t in got if not all(props[n].check(s, step, t) for n in transitions)]
            if failed != failing:
                raise MemoMismatch(f"checked successors at {memo.view(s)!r} recorded "
                                   f"{[memo.format_step(st) for st in failed]} as failing, the properties fail "
                                   f"{[memo.format_step(st) for st in failing]}")
            failed.clear()
        if symmetric and memo.canonical(s) != plain.canonical(s):
            raise MemoMismatch(f"canonical forms differ at {memo.view(s)!r}")
        for name, prop in props.items():
            if prop.kind == "invariant":
                if prop.check(s) != plain_props[name].check(s):
                    raise MemoMismatch(f"invariant {name} differs at {memo.fields(s)}")
            else:
                for step, t in got:
                    if prop.check(s, step, t) != plain_props[name].check(s, step, t):
                        raise MemoMismatch(f"transition property {name} differs on {memo.format_step(step)}")
        steps += len(got)
        for _, t in got:
            if t not in seen and memo.within_bounds(t):
                if len(seen) >= max_states:
                    cut = True
                    continue
                seen.add(t)
                queue.append(t)
    return MemoReport(len(seen), steps, not cut)


def reachable_steps(machine: Composed, limit: int = 200_000) -> Iterator[tuple[tuple, tuple, tuple]]:
    """(state, step, successor) for every step of a breadth-first walk of ``machine`` within its
    state constraint, until ``limit`` states are seen: the rules' tests look for a step with some
    property among all of them."""
    seen = set(machine.init_states())
    queue = deque(seen)
    while queue and len(seen) < limit:
        s = queue.popleft()
        for step, t in machine.successors(s):
            if not machine.within_bounds(t):
                continue
            yield s, step, t
            if t not in seen:
                seen.add(t)
                queue.append(t)
