"""Tiny machines with hand-known answers, for testing the engines' bookkeeping.

``Counter`` counts x from 0 up to ``limit`` (one state per value, so a state at value v is reached
by a shortest trace of v + 1 states). Options switch on what a test needs:

- ``wrap``: from ``limit`` the action ``Wrap`` goes back to 0. The transition property
  ``NeverDecreases`` fails on that step; its target (0) is an old state, so only an engine that
  checks steps before deduplication sees it. Shortest trace: ``limit + 2`` states.
- ``terminal``: the state at ``limit`` is terminal; otherwise, without ``wrap``, it deadlocks
  (shortest deadlock trace: ``limit + 1`` states).
- ``Never`` is an action whose guard is never true (coverage must flag it).
- invariants ``Below3`` and ``Below5`` (x < 3, x < 5) fail at traces of 4 and 6 states.
- ``bound``: a state constraint x <= bound (states above are not checked, counted or expanded).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from eoscheck.checker.machine import Machine, Property


class Counter(Machine):
    actions: Mapping[str, tuple[str, ...]] = {"Inc": (), "Wrap": (), "Never": ()}

    def __init__(self, limit: int = 6, wrap: bool = False, terminal: bool = False,
                 bound: int | None = None):
        self.limit, self.wrap, self.terminal, self.bound = limit, wrap, terminal, bound

    def init_states(self) -> Iterator[tuple]:
        yield (0,)

    def successors(self, s: tuple) -> Iterator[tuple[tuple, tuple]]:
        x = s[0]
        if x < self.limit:
            yield ("Inc",), (x + 1,)
        elif self.wrap:
            yield ("Wrap",), (0,)
        if x < 0:
            yield ("Never",), (x,)

    def within_bounds(self, s: tuple) -> bool:
        return self.bound is None or s[0] <= self.bound

    def is_terminal(self, s: tuple) -> bool:
        return self.terminal and s[0] == self.limit

    def properties(self) -> Mapping[str, Property]:
        return {
            "Below3": Property("Below3", "x < 3", "invariant", lambda s: s[0] < 3),
            "Below5": Property("Below5", "x < 5", "invariant", lambda s: s[0] < 5),
            "NeverDecreases": Property("NeverDecreases", "x never goes down", "transition",
                                       lambda s, step, t: t[0] >= s[0]),
        }

    def fields(self, s: tuple) -> dict:
        return {"counter.x": s[0]}


class Grid(Machine):
    """Two counters (x, y) in 0..size-1, each incremented or reset: many paths to each state.

    Used for symmetry (``symmetric=True`` treats x and y as interchangeable: 10 instead of 16
    states at size 4) and for trace shortening: a random walk wanders through resets, while the
    shortest trace to (a, b) has a + b + 1 states. The invariant ``NotCorner`` fails at
    (size-1, size-1): shortest trace 2 * (size - 1) + 1 states.
    """

    actions: Mapping[str, tuple[str, ...]] = {"IncX": (), "IncY": (), "ResetX": (), "ResetY": ()}

    def __init__(self, size: int = 4, symmetric: bool = False):
        self.size, self.symmetric = size, symmetric

    def init_states(self) -> Iterator[tuple]:
        yield (0, 0)

    def successors(self, s: tuple) -> Iterator[tuple[tuple, tuple]]:
        x, y = s
        if x < self.size - 1:
            yield ("IncX",), (x + 1, y)
        if y < self.size - 1:
            yield ("IncY",), (x, y + 1)
        if x:
            yield ("ResetX",), (0, y)
        if y:
            yield ("ResetY",), (x, 0)

    def canonical(self, s: tuple) -> tuple:
        return (min(s), max(s)) if self.symmetric else s

    def properties(self) -> Mapping[str, Property]:
        top = self.size - 1
        return {"NotCorner": Property("NotCorner", "never both at the top", "invariant",
                                      lambda s: s != (top, top))}

    def fields(self, s: tuple) -> dict:
        return {"grid.x": s[0], "grid.y": s[1]}
