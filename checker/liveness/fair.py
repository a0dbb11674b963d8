"""Fair cycles: which SCCs of a restricted graph carry a fair behaviour, and a lasso through one.

An SCC ``C`` (with the stuttering self-loop every state has) carries a fair behaviour that stays in
``C`` when, taking every edge of ``C`` infinitely often:

* for each ``WF(a)``: ``a`` is taken inside ``C`` or disabled at some state of ``C``;
* for each ``SF(a)``: ``a`` is taken inside ``C`` or disabled at every state of ``C``.

A failed WF condition holds for every part of ``C`` too, so ``C`` is dropped. A failed SF condition
may hold only because of the states where ``a`` is enabled: those are removed and the rest split
into SCCs again (the Streett refinement), as TLC and the textbooks do.
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from .graph import StateGraph
from .scc import tarjan


@dataclass(frozen=True)
class FairMasks:
    weak: int  # bits of WF constraints
    strong: int  # bits of SF constraints


def self_loop_bits(g: StateGraph) -> dict[int, int]:
    """node -> fairness bits of its self-loop edges (few nodes have any)."""
    n = g.size
    if not g.edges:
        return {}
    offsets = np.frombuffer(g.offsets, dtype=np.int64)
    targets = np.frombuffer(g.targets, dtype=np.int32)
    sources = np.repeat(np.arange(n, dtype=np.int32), np.diff(offsets))
    loops = np.flatnonzero(sources == targets)
    out: dict[int, int] = {}
    bits = g.action_bits
    for e in loops.tolist():
        v = int(sources[e])
        out[v] = out.get(v, 0) | bits[g.labels[e]]
    return out


def component_profile(g: StateGraph, comp: list[int], members: set[int] | None = None
                      ) -> tuple[int, int, int]:
    """(taken, enabled somewhere, enabled everywhere) fairness bits of an SCC."""
    if members is None:
        members = set(comp)
    offsets, targets, labels, bits, enabled = g.offsets, g.targets, g.labels, g.action_bits, g.enabled
    taken, en_any, en_all = 0, 0, -1
    for v in comp:
        ev = enabled[v]
        en_any |= ev
        en_all &= ev
        for e in range(offsets[v], offsets[v + 1]):
            if targets[e] in members:
                taken |= bits[labels[e]]
    return taken, en_any, en_all


def fair_components(g: StateGraph, inside: bytearray, roots: Iterable[int], masks: FairMasks,
                    first_only: bool = False) -> list[list[int]]:
    """The fair SCCs (after SF refinement) of ``g`` restricted to ``inside``, reachable from ``roots``."""
    weak, strong = masks.weak, masks.strong
    every = weak | strong
    enabled = g.enabled
    loops = self_loop_bits(g)
    found: list[list[int]] = []

    def judge(comp: list[int]) -> bool:
        if len(comp) == 1:
            v = comp[0]
            ev = enabled[v]
            # a lone state: only its stutter and self-loops keep a behaviour there, and removing the
            # state (SF refinement) leaves nothing, so every enabled constraint must be self-looped
            if not ev & every & ~loops.get(v, 0):
                found.append(comp)
                return first_only
            return False
        taken, en_any, en_all = component_profile(g, comp)
        if weak & en_all & ~taken:
            return False
        bad_strong = strong & en_any & ~taken
        if not bad_strong:
            found.append(comp)
            return first_only
        rest = [v for v in comp if not enabled[v] & bad_strong]
        if not rest:
            return False
        sub = bytearray(len(inside))
        for v in rest:
            sub[v] = 1
        return tarjan(g.offsets, g.targets, sub, rest, judge)

    tarjan(g.offsets, g.targets, inside, roots, judge)
    return found


def cycle_through(g: StateGraph, comp: list[int], start: int, masks: FairMasks) -> list[int]:
    """Edge ids of a fair cycle from ``start`` back to it inside ``comp`` (empty: stutter at it).

    Visits, in turn, an edge of each fair action taken in ``comp`` and a state where each weakly
    fair action that is never taken is disabled; shortest paths between them.
    """
    members = set(comp)
    taken, _, _ = component_profile(g, comp, members)
    offsets, targets, labels, bits, enabled = g.offsets, g.targets, g.labels, g.action_bits, g.enabled
    goals: list[tuple[str, int]] = []
    for b in _bits(masks.weak | masks.strong):
        if taken & b:
            goals.append(("edge", b))
        elif masks.weak & b:
            goals.append(("disabled", b))
        # a strong constraint never taken is disabled everywhere in comp (it is fair)
    edges: list[int] = []
    cur = start
    for kind, b in goals:
        if kind == "edge":
            path = _path(g, members, cur, lambda v, b=b: any(  # type: ignore[misc]  # mypy infers no lambda with a default
                targets[e] in members and bits[labels[e]] & b for e in range(offsets[v], offsets[v + 1])))
            edges += path
            v = targets[path[-1]] if path else cur
            e = next(e for e in range(offsets[v], offsets[v + 1]) if targets[e] in members and bits[labels[e]] & b)
            edges.append(e)
            cur = targets[e]
        else:
            path = _path(g, members, cur, lambda v, b=b: not enabled[v] & b)  # type: ignore[misc]  # as above
            edges += path
            cur = targets[path[-1]] if path else cur
    if cur != start:
        edges += _path(g, members, cur, lambda v: v == start)
    return edges


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low)
        mask ^= low
    return out


def _path(g: StateGraph, members: set[int], source: int, goal: Callable[[int], bool]) -> list[int]:
    """Edge ids of a shortest path inside ``members`` from ``source`` to a node ``goal`` accepts."""
    if goal(source):
        return []
    offsets, targets = g.offsets, g.targets
    parent_edge: dict[int, int] = {source: -1}
    queue = deque([source])
    while queue:
        v = queue.popleft()
        for e in range(offsets[v], offsets[v + 1]):
            w = targets[e]
            if w in members and w not in parent_edge:
                parent_edge[w] = e
                if goal(w):
                    path = []
                    while w != source:
                        e = parent_edge[w]
                        path.append(e)
                        w = _source(offsets, e)
                    path.reverse()
                    return path
                queue.append(w)
    raise AssertionError("no path inside a strongly connected component")


def _source(offsets: array, e: int) -> int:
    """The node whose edge range holds edge ``e`` (binary search over the offsets)."""
    lo, hi = 0, len(offsets) - 2
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if offsets[mid] <= e:
            lo = mid
        else:
            hi = mid - 1
    return lo
