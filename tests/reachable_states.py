"""Concrete reachable states for model tests: a plain BFS without symmetry reduction."""

from __future__ import annotations

from collections import deque
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
