"""Counterexample traces: rebuilt from fingerprints (BFS, parallel, Spark) and shortened (DFS, simulation).

**Rebuilding** (TLC's way). The BFS keeps only fingerprints and parent links, not states. Given the
chain of fingerprints from an initial state to the target, ``rebuild_trace`` re-executes the
machine: it takes the first initial state whose fingerprint is the chain's first, then, from each
state, the first successor (in the machine's order, within bounds) whose fingerprint is the next
one. With symmetry on, fingerprints are of ``machine.canonical(state)`` but the trace follows the
concrete successors, so every step of the result is a real step of the machine. Because the BFS
keeps the first-generated state of each fingerprint and records the parent that generated it,
re-execution retraces exactly the states the BFS checked.

**Shortening** (``shorten_trace``). DFS and random walks find long traces. Two passes:

1. A BFS from the initial states, bounded by the found trace's length and by a state budget
   (default 200,000 distinct states), looking for any state (or step) that ``is_bad`` accepts.
   BFS visits states in order of distance, so if it finds one before the budget runs out, the
   result is a *shortest* trace to a bad state: ``shortened_by = "bfs (shortest)"``.
2. If the budget runs out first, the found trace itself is shortened: loops (a state that occurs
   twice) are cut, and wherever a state has a successor equal to a later state of the trace the
   steps in between are skipped, repeatedly until nothing changes. The result re-executes and
   still ends in the same bad state/step, and is never longer than the input, but it is not
   guaranteed to be the shortest: ``shortened_by = "loop removal and shortcuts (not minimal)"``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .fingerprint import MASK64, Fingerprinter, fingerprint_fn
from .machine import Machine, State, Step
from .result import TraceStep, Violation

if TYPE_CHECKING:
    from .explore.expand import Expander, Pending

#: is_bad(previous state or None, step or None, state) -> True when the trace may end here
IsBad = Callable[[State | None, Step | None, State], bool]

SHORTEN_BFS_BUDGET = 200_000
SHORTEST = "bfs (shortest)"
SHORTCUTS = "loop removal and shortcuts (not minimal)"


class TraceRebuildError(RuntimeError):
    """Re-execution did not reach a fingerprint of the chain: the machine is not deterministic
    (successors differ between runs or processes) or the chain is corrupt."""


def _walker(machine: Machine, symmetry: bool | Fingerprinter, view: str | None = None) -> Expander:
    """An expander that checks nothing: re-execution only needs successors and fingerprints."""
    from .explore.expand import Expander

    fpr = symmetry if isinstance(symmetry, Fingerprinter) else fingerprint_fn(machine, symmetry, view)
    return Expander(machine, fingerprinter=fpr, check_deadlock=False, no_properties=True)


def rebuild_trace(machine: Machine, fingerprints: list[int], symmetry: bool | Fingerprinter,
                  view: str | None = None) -> list[TraceStep]:
    """The concrete trace whose states have these fingerprints (as ``fingerprint_fn`` computes
    them for ``symmetry`` and ``view``, or as the given ``Fingerprinter`` does; signed or not)."""
    if not fingerprints:
        return []
    walker = _walker(machine, symmetry, view)
    wanted = [f & MASK64 for f in fingerprints]
    current = None
    _, inits, fps = walker.init_states()
    for state, h in zip(inits, fps):
        if h & MASK64 == wanted[0]:
            current = state
            break
    if current is None:
        raise TraceRebuildError(f"no initial state has fingerprint {wanted[0]:#x}")
    trace = [TraceStep(None, current)]
    for index, target in enumerate(wanted[1:], start=2):
        for step, nxt, h in walker.expand_one(current):
            if h & MASK64 == target:
                trace.append(TraceStep(step, nxt))
                current = nxt
                break
        else:
            raise TraceRebuildError(
                f"state {index} of the trace (fingerprint {target:#x}) is not a successor of state "
                f"{index - 1}; is the machine's successors() deterministic?")
    return trace


def to_violation(machine: Machine, chain: list[int], pending: Pending,
                 fingerprinter: Fingerprinter) -> Violation:
    """The one way a BFS-style engine (BFS, parallel, Spark) turns a finding into a violation:
    re-execute the chain of fingerprints to the finding's state, then the offending step."""
    trace = rebuild_trace(machine, chain, fingerprinter)
    if pending.kind == "transition":
        trace.append(TraceStep(pending.step, _local_successor(machine, trace[-1].state, pending)))
    return Violation(property=pending.name, kind=pending.kind, trace=trace,
                     found_length=len(trace), shortened_by=SHORTEST)


def _local_successor(machine: Machine, state: State, pending: Pending) -> State:
    """The offending step's successor as this process generates it. A worker (parallel, Spark)
    found it, and a state that names interned parts (``checker.intern``) is readable only where its
    parts were interned: equal ids, but the worker's table may hold a part this one never built."""
    for step, nxt in machine.successors(state):
        if step == pending.step and nxt == pending.state:
            return nxt
    return pending.state


def trace_is_valid(machine: Machine, trace: list[TraceStep]) -> bool:
    """True if the trace starts in an initial state and every step is one the machine can take."""
    if not trace or trace[0].step is not None:
        return False
    walker = _walker(machine, False)
    if trace[0].state not in walker.init_states()[1]:
        return False
    for prev, cur in itertools.pairwise(trace):
        if (cur.step, cur.state) not in [(step, nxt) for step, nxt, _ in walker.expand_one(prev.state)]:
            return False
    return True


def shorten_trace(machine: Machine, trace: list[TraceStep], is_bad: IsBad, *,
                  symmetry: bool | Fingerprinter = True, budget: int = SHORTEN_BFS_BUDGET) -> list[TraceStep]:
    """A trace no longer than ``trace`` that also ends in a bad state/step (the plan's contract).

    ``trace`` must be valid and end bad (``is_bad(trace[-2].state, trace[-1].step,
    trace[-1].state)``). See the module docstring for the two passes and what each guarantees;
    ``shorten_trace_explained`` also says which pass produced the result.
    """
    return shorten_trace_explained(machine, trace, is_bad, symmetry=symmetry, budget=budget)[0]


def shorten_trace_explained(machine: Machine, trace: list[TraceStep], is_bad: IsBad, *,
                            symmetry: bool | Fingerprinter = True, budget: int = SHORTEN_BFS_BUDGET
                            ) -> tuple[list[TraceStep], str]:
    """``shorten_trace`` plus how: ``SHORTEST`` (a true shortest trace) or ``SHORTCUTS``."""
    found = _bounded_bfs(machine, is_bad, len(trace), symmetry, budget)
    if found is not None:
        return found, SHORTEST
    return _shortcut(machine, trace, is_bad), SHORTCUTS


def _bounded_bfs(machine: Machine, is_bad: IsBad, max_length: int, symmetry: bool | Fingerprinter,
                 budget: int
                 ) -> list[TraceStep] | None:
    """Shortest trace (<= max_length states) ending bad, or None if the budget ran out first.

    Returns None also when no bad end is found within max_length, which cannot happen for a valid
    bad input trace unless fingerprints collide; the caller then falls back to shortcuts.
    """
    walker = _walker(machine, symmetry)
    parent: dict[int, int | None] = {}  # fingerprint -> parent's fingerprint (None for initial)
    frontier: list[tuple[int, State]] = []
    _, inits, fps = walker.init_states()
    for state, h in zip(inits, fps):
        if h in parent:
            continue
        parent[h] = None
        if is_bad(None, None, state):
            return rebuild_trace(machine, [h], walker.fp)
        frontier.append((h, state))
    length = 1
    while frontier and length < max_length:
        length += 1
        nxt_frontier: list[tuple[int, State]] = []
        for key, state in frontier:
            for step, nxt, h in walker.expand_one(state):
                if is_bad(state, step, nxt):
                    trace = rebuild_trace(machine, _key_chain(parent, key), walker.fp)
                    return trace + [TraceStep(step, nxt)]
                if h in parent:
                    continue
                if len(parent) >= budget:
                    return None
                parent[h] = key
                nxt_frontier.append((h, nxt))
        frontier = nxt_frontier
    return None


def _key_chain(parent: dict[int, int | None], key: int) -> list[int]:
    chain = [key]
    current = parent[key]
    while current is not None:
        chain.append(current)
        current = parent[current]
    chain.reverse()
    return chain


def _shortcut(machine: Machine, trace: list[TraceStep], is_bad: IsBad) -> list[TraceStep]:
    """Cut loops and take successor shortcuts, keeping the trace's final bad state/step intact."""
    states = [t.state for t in trace]
    steps = [t.step for t in trace]
    # The last step must survive as it is when the badness is a property of the step (transition
    # properties); protect it by shortening only the prefix up to the second-to-last state when
    # dropping it would change the verdict.
    keep_last_step = len(trace) >= 2 and not is_bad(None, None, states[-1])
    walker = _walker(machine, False)
    changed = True
    while changed:
        changed = False
        end = len(states) - 1 if keep_last_step else len(states)
        # index of the last occurrence of each state among the shortenable prefix
        last: dict[Any, int] = {}
        for i in range(end):
            last[states[i]] = i
        for i in range(end):
            j = last[states[i]]
            if j > i:  # loop: states[i] == states[j]
                del states[i + 1:j + 1]
                del steps[i + 1:j + 1]
                changed = True
                break
            best = None
            for step, nxt, _ in walker.expand_one(states[i]):
                k = last.get(nxt)
                if k is not None and k > i + 1 and (best is None or k > best[0]):
                    best = (k, step)
            if best is not None:
                k, step = best
                del states[i + 1:k]
                del steps[i + 1:k]
                steps[i + 1] = step
                changed = True
                break
    return [TraceStep(s, st) for s, st in zip(steps, states)]


def bad_end(machine: Machine, kind: str, prop: str) -> IsBad:
    """The ``is_bad`` predicate for a violation of ``prop`` (a property name, or "deadlock")."""
    if kind == "deadlock":
        from .explore.expand import Expander

        walker = Expander(machine, no_properties=True, check_deadlock=True, stop_at_first=False,
                          fingerprinter=fingerprint_fn(machine, False))

        def deadlocked(prev: State | None, step: Step | None, state: State) -> bool:
            before = len(walker.found)
            walker.violated.clear()
            for _ in walker.expand_one(state):
                pass
            return len(walker.found) > before
        return deadlocked
    check = machine.properties()[prop].check
    if kind == "transition":
        return lambda prev, step, state: prev is not None and not check(prev, step, state)
    return lambda prev, step, state: not check(state)
