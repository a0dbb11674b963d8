"""Concrete reachable states for model tests: a plain BFS without symmetry reduction."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from eoscheck.checker.machine import Machine


def reachable(m: Machine, cap: int) -> list[Any]:
    """States within bounds in BFS order, at most ``cap`` (the first levels of a larger space)."""
    seen = {s: None for s in m.init_states()}
    queue = deque(seen)
    while queue and len(seen) < cap:
        for _step, t in m.successors(queue.popleft()):
            if m.within_bounds(t) and t not in seen:
                seen[t] = None
                queue.append(t)
    return list(seen)


def first_expanded(m: Machine, limit: int) -> list[Any]:
    """The first ``limit`` distinct states a BFS inside the constraint expands, level by level
    (``reachable`` caps the states it has found, so its prefix stops a level or so shallower)."""
    seen: set[Any] = set()
    frontier = [s for s in m.init_states() if m.within_bounds(s)]
    out: list[Any] = []
    while frontier and len(out) < limit:
        nxt = []
        for s in frontier:
            if s in seen:
                continue
            seen.add(s)
            out.append(s)
            nxt.extend(t for _step, t in m.successors(s) if m.within_bounds(t) and t not in seen)
        frontier = nxt
    return out


def assert_one_state_per_orbit(m: Machine) -> None:
    """With ``m``'s symmetry, a complete BFS keeps exactly one state per orbit of the whole group
    (every scalarset), fewer than without it, with the same verdict and violated properties."""
    from eoscheck.checker.explore import ExploreOptions, explore

    full = reachable(m, 10**6)
    symmetry = m.symmetry
    assert symmetry is not None
    orbits = len({min(symmetry.apply(s, g) for g in symmetry.group()) for s in full})
    reduced = explore(m, ExploreOptions(stop_at_first=False))
    plain = explore(m, ExploreOptions(stop_at_first=False, symmetry=False))
    assert plain.stats.distinct == len(full)
    assert reduced.stats.distinct == orbits < len(full)
    assert (reduced.verdict, {v.property for v in reduced.violations}) == (
        plain.verdict, {v.property for v in plain.violations})


def first_step(m: Machine, wanted: Callable[[Any, Any, Any], bool]) -> tuple[Any, Any, Any] | None:
    """The first (state, step, successor) inside the constraint, in BFS order, for which
    ``wanted(state, step, successor)`` holds; None when the reachable space has none."""
    seen = {s: None for s in m.init_states() if m.within_bounds(s)}
    queue = deque(seen)
    while queue:
        s = queue.popleft()
        for step, t in m.successors(s):
            if not m.within_bounds(t):
                continue
            if wanted(s, step, t):
                return s, step, t
            if t not in seen:
                seen[t] = None
                queue.append(t)
    return None
