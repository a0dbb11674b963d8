"""The liveness graph recorded by the DFS engine as it runs (one pass with safety, as the BFS's).

``checker.explore.dfs.explore_dfs`` takes a ``DfsRecorder``: each state it keeps for the first
time becomes a node (its fingerprint, its predicate marks), and the first expansion of each node
goes through ``DfsRecorder.expand``, which wraps the engine's lazy expansion: it asks the core for
the steps that leave the state constraint too (``out_of_bounds=True``: they make their action
enabled, as in ``graph.build_graph``), records every in-bounds step as an edge and hands the engine
exactly the items it would have had, one at a time, so the engine's checks, findings, counts and
order are unchanged. A state the engine expands again (reached later at a smaller depth under a
depth bound) is expanded plainly: its edges are recorded once.

Edges are recorded as (source node, target fingerprint, label) while the DFS interleaves the
expansions of a node and its descendants; ``graph`` sorts them by source into the CSR form the
SCC search reads and names targets by node id. A target with no node (a successor the depth bound
cut that no shorter path reached) makes the graph incomplete; the engine then reports the depth
limit itself and the temporal properties are not checked.

Node ids are DFS discovery order, so the arrays differ from the BFS walk's, but not the graph:
the same nodes, each with its out-edges in the machine's order, the initial states in their order.
``check.find_lasso`` depends on that order only (its stem search, SCCs and cycles follow edges
from the initial states), so without symmetry the lasso is the BFS one pass's, state for state.
With symmetry a node's representative is the first concrete state the DFS met, whose successors
may come in another order: the lasso then has the same length and may differ in ties.

Symmetry is checked as in ``build_graph``: predicates on every generated successor whose orbit
has a node against that node's marks, and every image of the first ``SYMMETRY_SAMPLE`` nodes (in
DFS order) at the end of their expansion.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ..fingerprint import MASK64
from ..machine import Machine
from .graph import (
    SYMMETRY_SAMPLE,
    Labels,
    LivenessError,
    StateGraph,
    _check_images,
    empty_graph,
    orbit_error,
    symmetry_guard,
)
from .temporal import Fairness, Predicate


class DfsRecorder:
    """Builds the liveness graph from the DFS engine's callbacks (``add``, ``expand``, ``graph``)."""

    def __init__(self, machine: Machine, fairness: Sequence[Fairness], predicates: Sequence[Predicate],
                 symmetry: bool):
        symmetry = symmetry and machine.has_symmetry()
        self.machine = machine
        self.declared = symmetry_guard(machine, fairness, symmetry)
        self.preds = list(predicates)
        self.g = empty_graph(fairness, self.preds, symmetry)
        self.labels = Labels(self.g, fairness)
        self.pred_marks = list(zip(self.preds, self.g.marks))
        self.check_sym = symmetry and bool(self.preds)
        self.ids: dict[int, int] = {}  # fingerprint as the expander gives it -> node
        self.init_fps: list[int] = []  # the initial states' fingerprints, in the machine's order
        # edges in the order they are met (the DFS interleaves the expansions of nested nodes)
        self.src = array("i")
        self.dst = array("Q")  # target fingerprint & MASK64: resolved to a node at the end
        self.lab = array("H")

    def initial(self, fps: Sequence[int]) -> None:
        """The initial states' fingerprints (duplicates included), before the walk."""
        self.init_fps = list(fps)

    def add(self, state: Any, key: int) -> None:
        """A state the engine keeps for the first time."""
        g = self.g
        self.ids[key] = len(g.fps)
        g.fps.append(key & MASK64)
        g.enabled.append(0)
        for p, m in self.pred_marks:
            m.append(1 if p(state) else 0)

    def expand(self, state: Any, key: int, items: Iterator[tuple[Any, Any, int | None]]
               ) -> Iterator[tuple[Any, Any, int]]:
        """The engine's items of ``items`` (``expand_one(..., out_of_bounds=True)`` of ``state``, the
        node ``key``'s first expansion), recording its edges and enabled fairness on the way."""
        node = self.ids[key]
        labels = self.labels
        action_index, label, action_bits = labels.action_index, labels.label, self.g.action_bits
        src_append, dst_append, lab_append = self.src.append, self.dst.append, self.lab.append
        ids, check_sym = self.ids, self.check_sym
        en = 0
        for step, nxt, h in items:
            a = action_index.get(step[0])
            if a is None:
                a = label(step)
            en |= action_bits[a]
            if h is None:  # outside the constraint: it only made ``a`` enabled here
                continue
            src_append(node)
            dst_append(h & MASK64)
            lab_append(a)
            if check_sym:
                v = ids.get(h)
                if v is not None:
                    self._check_orbit(nxt, v)
            yield step, nxt, h
        # (reached also when the core stopped at a finding: the run then ends, the graph unused)
        self.g.enabled[node] = en
        if self.declared is not None and node < SYMMETRY_SAMPLE:
            marks = [m[node] for m in self.g.marks]
            _check_images(self.machine, self.declared, state, marks, en, self.preds, self.labels.fair_of)

    def _check_orbit(self, state: Any, node: int) -> None:
        for p, m in self.pred_marks:
            if (not p(state)) == m[node]:
                raise LivenessError(orbit_error(p, self.preds))

    def graph(self) -> StateGraph | None:
        """The graph in CSR form (node ids in DFS order), or None when an edge leads to a state the
        walk never kept (the depth bound cut it): then the graph is incomplete."""
        g = self.g
        n = len(g.fps)
        node_fps = np.frombuffer(g.fps, dtype=np.uint64) if n else np.zeros(0, np.uint64)
        by_fp = np.argsort(node_fps, kind="stable")
        sorted_fps = node_fps[by_fp]

        def nodes_of(fps: np.ndarray) -> np.ndarray | None:
            pos = np.searchsorted(sorted_fps, fps)
            if len(fps) and (pos.max() >= n or not np.array_equal(sorted_fps[pos], fps)):
                return None
            return by_fp[pos]

        inits = nodes_of(np.array([h & MASK64 for h in self.init_fps], dtype=np.uint64))
        src = np.frombuffer(self.src, dtype=np.int32) if len(self.src) else np.zeros(0, np.int32)
        dst = np.frombuffer(self.dst, dtype=np.uint64) if len(self.dst) else np.zeros(0, np.uint64)
        targets = nodes_of(dst)
        if inits is None or targets is None:
            return None
        g.init = list(dict.fromkeys(inits.tolist()))  # distinct, in order of first occurrence
        order = np.argsort(src, kind="stable")  # each node's edges stay in the machine's order
        g.targets = array("i", targets[order].astype(np.int32).tobytes())
        labs = np.frombuffer(self.lab, dtype=np.uint16) if len(self.lab) else np.zeros(0, np.uint16)
        g.labels = array("H", labs[order].tobytes())
        counts = np.bincount(src, minlength=n) if len(src) else np.zeros(n, np.int64)
        g.offsets = array("q", np.concatenate(([0], np.cumsum(counts))).astype(np.int64).tobytes())
        return g
