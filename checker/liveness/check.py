"""Checking temporal properties on the explored graph, and the lasso a violation comes with.

Every property reduces to one question (TLC's tableau-free special cases):

* ``<>P``: from an initial ¬P-state, is there a fair behaviour that stays in ¬P forever?
* ``P ~> Q``: from a reachable P∧¬Q-state, is there a fair behaviour that stays in ¬Q forever?
* ``[]<>P`` (= ``TRUE ~> P``): from a reachable ¬P-state, the same with ¬P.

So: restrict the graph to the "bad forever" states R (¬P or ¬Q), take the trigger states as roots,
and look for a fair SCC of R reachable from them (``fair.fair_components``). A violation is a lasso:
the shortest stem (0-1 BFS over "before the trigger" / "after the trigger" copies of the graph,
ending in a fair SCC) and a fair cycle through the stem's last state (``fair.cycle_through``).
"""

from __future__ import annotations

from array import array
from collections import deque
from dataclasses import dataclass

import numpy as np

from .fair import FairMasks, cycle_through, fair_components
from .graph import StateGraph
from .temporal import TemporalProperty

_NOT = bytes([1, 0]) + bytes(254)  # bytearray.translate table: 0 <-> 1


@dataclass
class Lasso:
    """A violating behaviour in graph terms: node ids and edge ids.

    ``stem_nodes[0]`` is initial; ``stem_edges[i]`` leads from ``stem_nodes[i]`` to ``stem_nodes[i+1]``;
    ``cycle_edges`` leads from ``stem_nodes[-1]`` back to it (empty: the behaviour stutters there).
    """

    stem_nodes: list[int]
    stem_edges: list[int]
    cycle_edges: list[int]


def masks_of(g: StateGraph) -> FairMasks:
    """The fairness bits by kind: a constraint's own bit, and one per instance of a split one (whose
    own bit is then unused: no step carries it)."""
    weak = strong = 0
    for bit, kind in enumerate(g.bit_kinds):
        if kind == "WF":
            weak |= 1 << bit
        else:
            strong |= 1 << bit
    return FairMasks(weak, strong)


def regions(g: StateGraph, prop: TemporalProperty, p_mark: bytearray, q_mark: bytearray | None
            ) -> tuple[bytearray, list[int], bytearray | None]:
    """(R: the states a violation stays in, the roots, the trigger states or None when the trigger
    is the initial state)."""
    if prop.kind == "leads_to":
        assert q_mark is not None
        inside = q_mark.translate(_NOT)
        trig = bytes(np.frombuffer(p_mark, np.uint8) & np.frombuffer(inside, np.uint8))
        trigger = bytearray(trig)
        roots = np.flatnonzero(np.frombuffer(trigger, np.uint8)).tolist()
        return inside, roots, trigger
    inside = p_mark.translate(_NOT)
    if prop.kind == "eventually":
        return inside, [v for v in g.init if inside[v]], None
    return inside, np.flatnonzero(np.frombuffer(inside, np.uint8)).tolist(), inside


def find_lasso(g: StateGraph, prop: TemporalProperty, p_mark: bytearray, q_mark: bytearray | None
               ) -> Lasso | None:
    """The shortest-stem lasso violating ``prop`` under the graph's fairness, or None."""
    masks = masks_of(g)
    inside, roots, trigger = regions(g, prop, p_mark, q_mark)
    if not roots:
        return None
    comps = fair_components(g, inside, roots, masks)
    if not comps:
        return None
    comp_of: dict[int, int] = {}
    for i, comp in enumerate(comps):
        for v in comp:
            comp_of[v] = i
    stem_nodes, stem_edges = _shortest_stem(g, inside, trigger, comp_of)
    end = stem_nodes[-1]
    cycle = cycle_through(g, comps[comp_of[end]], end, masks)
    return Lasso(stem_nodes, stem_edges, cycle)


def _shortest_stem(g: StateGraph, inside: bytearray, trigger: bytearray | None,
                   goal: dict[int, int]) -> tuple[list[int], list[int]]:
    """Shortest path from an initial state to a fair-SCC state, the part after the trigger inside R.

    Phase 0 walks the whole graph until a trigger state; there the walk moves (no step) to phase 1,
    which stays inside R. Without triggers (``<>P``) the walk starts in phase 1.
    """
    offsets, targets = g.offsets, g.targets
    # key = node * 2 + phase; parents and distances in flat arrays (a dict would cost ~100 bytes
    # per key). A 0-1 BFS must relax: a key first reached over a step may later be reached at the
    # same distance through a phase switch (weight 0), which then has to win.
    size = 2 * g.size
    unseen = 1 << 62
    parent = array("q", [-2]) * size  # -2: unseen, -1: a start
    via = array("i", [-1]) * size  # the edge that led here (-1: the phase switch or a start)
    dist = array("q", [unseen]) * size
    done = bytearray(size)
    queue: deque[int] = deque()
    start_phase = 1 if trigger is None else 0
    for v in g.init:
        if start_phase == 1 and not inside[v]:
            continue
        key = v * 2 + start_phase
        if parent[key] == -2:
            parent[key] = -1
            dist[key] = 0
            queue.append(key)
    found = -1
    while queue:
        key = queue.popleft()
        if done[key]:
            continue  # a stale entry: the key was settled at a shorter distance
        done[key] = 1
        v, phase = key >> 1, key & 1
        if phase == 1 and v in goal:
            found = key
            break
        d = dist[key]
        if phase == 0 and trigger is not None and trigger[v]:
            switched = key | 1
            if d < dist[switched]:
                dist[switched], parent[switched], via[switched] = d, key, -1
                queue.appendleft(switched)  # same distance: 0-1 BFS
        for e in range(offsets[v], offsets[v + 1]):
            w = targets[e]
            if phase == 1 and not inside[w]:
                continue
            nkey = w * 2 + phase
            if d + 1 < dist[nkey]:
                dist[nkey], parent[nkey], via[nkey] = d + 1, key, e
                queue.append(nkey)
    if found < 0:
        raise AssertionError("a fair component was found from the roots but no stem reaches it")
    nodes: list[int] = []
    edges: list[int] = []
    key = found
    while key != -1:
        prev, e = parent[key], via[key]
        if e >= 0 or prev == -1:
            nodes.append(key >> 1)
        if e >= 0:
            edges.append(e)
        key = prev
    nodes.reverse()
    edges.reverse()
    return nodes, edges
