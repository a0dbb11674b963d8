"""The explored state graph in flat arrays, built for the liveness check by a BFS over the
engines' expansion core (``checker.explore.expand.Expander.expand_one``: the state constraint and
the run's fingerprint are applied there, as for every engine).

The walk is the BFS engine's, step for step (levels, chunks of ``bfs.CHUNK`` parents, the first
occurrence of a fingerprint kept, the same limits), so that it can also be the run's safety check
(TLC's way: one BFS checks the invariants and records the behaviour graph). Given an expander that
checks properties, transition properties and deadlock are checked as each state is expanded and
invariants on each chunk's new states, as ``bfs.explore_bfs`` does; the walk stops where the engine
would and records the engine's figures there (``StateGraph.distinct``, ``queue``, ``depth``) and
its parent links implicitly (the first edge into a node comes from the state that found it,
``StateGraph.chain``). ``checker.liveness.onepass`` turns that into the engine's result.

Node ids are BFS discovery order (so node ``u``'s out-edges are appended while ``u`` is expanded
and the edge arrays come out in CSR form without sorting). Per node: its fingerprint (8 bytes),
its edge offset (8), one bit per fairness constraint saying whether the constraint's actions are
enabled there (8), and one byte per state predicate the checked properties use. Per edge: the
target id (4 bytes) and the action's index (2). The states themselves live only in the BFS queue.

Enabledness counts every step the machine yields, also those leading outside the state constraint:
the action is enabled in the real system even where the model stops exploring. So a behaviour
cannot be starved at the edge of the bounds and reported as a livelock; it is simply not followed.
The core hands those steps out on request (``expand_one(..., out_of_bounds=True)`` yields them with
no fingerprint), in the machine's order among the others, so labels and fairness instances are
numbered in the order the steps are generated.

With symmetry on, the graph is the quotient: one node per orbit, whose representative (the first
concrete state met) is the one expanded and whose predicates are evaluated. That is sound when the
predicates are constant on orbits and a permutation keeps which fairness constraints are enabled
(it renames a step's parameters, not its name). Both are checked: the predicates on every generated
state against the value stored for its orbit, and, on the first ``SYMMETRY_SAMPLE`` states, the
predicates and enabled constraints of every image under the machine's declared ``Symmetry``
(``Machine.symmetry``). A machine that reduces by ``canonical`` without declaring its symmetry, a
violated check, or fairness split per instance (which names identities) stops the run with a
one-line reason: run with ``symmetry = false``.

``expand_one`` rather than the batch ``expand_chunk``: the orbit check needs every generated
concrete state, including those whose orbit already has a node, which the batch form drops.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import numpy as np

from ..explore.common import Ticker
from ..explore.expand import Expander, steps_of
from ..fingerprint import MASK64
from ..machine import Machine
from ..result import Stats
from ..state_view import NO_VIEW
from ..symmetry import machine_symmetry
from .temporal import Fairness, Predicate

#: states whose every symmetric image is compared with them (predicates, enabled fairness)
SYMMETRY_SAMPLE = 1000

#: parents expanded between limit checks in a liveness-only walk (a safety run takes the engine's)
CHUNK = 2048


class LivenessError(ValueError):
    """The liveness check cannot run on this machine/options (one line)."""


@dataclass
class StateGraph:
    fps: array  # 'Q' node -> fingerprint
    offsets: array  # 'q' node -> first edge; offsets[n] = edges
    targets: array  # 'i' edge -> target node
    labels: array  # 'H' edge -> label index: the action, plus its fairness instance when split ``per``
    enabled: array  # 'Q' node -> bit i set when fairness bit i is enabled
    marks: list[bytearray]  # predicate index -> node -> 0/1
    init: list[int]
    action_names: list[str]  # label index -> action name
    action_bits: list[int]  # label index -> fairness bits it belongs to
    #: fairness bit -> "WF" or "SF" (one bit per constraint, plus one per instance of a split one)
    bit_kinds: list[str] = field(default_factory=list)
    #: label index -> the instance keys of split constraints ((constraint, key), ...), for rebuilding
    label_keys: list[tuple] = field(default_factory=list)
    #: step -> its label index (None for a step the graph never recorded)
    label_of: Any = None
    generated: int = 0
    depth: int = 0
    complete: bool = True
    limit_hit: str | None = None
    elapsed: float = 0.0
    symmetry: bool = False
    #: per action: steps generated, those among them outside the constraint, new states found
    coverage: dict[str, int] = field(default_factory=dict)
    outside: dict[str, int] = field(default_factory=dict)
    new_coverage: dict[str, int] = field(default_factory=dict)
    #: the BFS engine's figures where the walk ended: states kept (nodes found by a chunk that a
    #: finding or the state limit stopped are not), states left to expand
    distinct: int = 0
    queue: int = 0

    @property
    def size(self) -> int:
        return len(self.fps)

    @property
    def edges(self) -> int:
        return len(self.targets)

    def out(self, u: int) -> range:
        return range(self.offsets[u], self.offsets[u + 1])

    def chain(self, node: int) -> list[int]:
        """Fingerprints from an initial state to ``node`` along the BFS tree: each node's parent is
        the source of the first edge into it (the state whose expansion found it), as in the
        engine's parent links."""
        targets = np.frombuffer(self.targets, dtype=np.int32)
        out = [self.fps[node]]
        first_other = len(self.init)  # initial nodes come first
        while node >= first_other:
            edge = int(np.argmax(targets == node))
            node = bisect_right(self.offsets, edge) - 1
            out.append(self.fps[node])
        out.reverse()
        return out

    def nbytes(self) -> int:
        """Bytes held by the arrays (the graph's own memory; states are not kept)."""
        arrays = (self.fps, self.offsets, self.targets, self.labels, self.enabled)
        return sum(a.itemsize * len(a) for a in arrays) + sum(len(m) for m in self.marks)


def symmetry_guard(machine: Machine, fairness: Sequence[Fairness], symmetry: bool) -> Any:
    """The machine's declared ``Symmetry`` when the graph is reduced by it (None without symmetry);
    refuses (one line) what the quotient graph cannot check soundly."""
    if symmetry and any(f.per is not None for f in fairness):
        raise LivenessError("fairness split per instance names identities that symmetry renames, so the "
                            "symmetry-reduced graph cannot check it; run with symmetry = false")
    declared = machine_symmetry(machine) if symmetry else None
    if symmetry and declared is None:
        raise LivenessError("the machine reduces by symmetry without declaring it (Machine.symmetry), so "
                            "liveness cannot check that permutations keep its predicates and fairness; run "
                            "with symmetry = false")
    return declared


def orbit_error(p: Predicate, preds: Sequence[Predicate]) -> str:
    return (f"a predicate of the temporal properties ({getattr(p, '__name__', list(preds).index(p))}) differs "
            "between two states of one symmetry orbit, so the symmetry-reduced graph cannot check it; run "
            "with symmetry = false")


def empty_graph(fairness: Sequence[Fairness], preds: Sequence[Predicate], symmetry: bool) -> StateGraph:
    return StateGraph(fps=array("Q"), offsets=array("q", [0]), targets=array("i"), labels=array("H"),
                      enabled=array("Q"), marks=[bytearray() for _ in preds], init=[], action_names=[],
                      action_bits=[], symmetry=symmetry, bit_kinds=[f.kind for f in fairness])


class Labels:
    """Edge labels of a graph: an action's index, one per instance when its fairness is split
    ``per`` (new fairness bits are handed out to instances as they are met), with the fairness
    bits each label belongs to. Shared by the BFS walk (``build_graph``) and the DFS engine's
    recorder (``dfs_graph``), so both number labels and instances in the order steps are generated."""

    def __init__(self, g: StateGraph, fairness: Sequence[Fairness]):
        self.g = g
        self.fairness = fairness
        self.fair_of: dict[str, int] = {}  # action not split -> its constraints' bits
        self.per_of: dict[str, list[tuple[int, Any]]] = {}  # action split -> (constraint, per) pairs
        for i, f in enumerate(fairness):
            for name in f.actions:
                if f.per is None:
                    self.fair_of[name] = self.fair_of.get(name, 0) | (1 << i)
                else:
                    self.per_of.setdefault(name, []).append((i, f.per))
        self.action_index: dict[str, int] = {}  # actions not split per instance: name -> label
        self.split_index: dict[tuple, int] = {}  # (name, (constraint, key), ...) -> label
        self.instance_bit: dict[tuple[int, Any], int] = {}
        g.label_of = self.of

    def new(self, name: str, bits: int, keys: tuple) -> int:
        g = self.g
        if len(g.action_names) >= 0xFFFF:
            raise LivenessError("more than 65,535 distinct fairness instances")
        g.action_names.append(name)
        g.action_bits.append(bits)
        g.label_keys.append(keys)
        return len(g.action_names) - 1

    def split(self, step: tuple) -> int:
        name = step[0]
        keys = tuple((i, per(step)) for i, per in self.per_of[name])
        label = self.split_index.get((name, keys))
        if label is None:
            bits = self.fair_of.get(name, 0)
            for key in keys:
                bit = self.instance_bit.get(key)
                if bit is None:
                    bit = len(self.g.bit_kinds)
                    if bit >= 64:
                        raise LivenessError("more than 64 fairness constraints and instances; split fewer "
                                            "actions per instance or lower the bounds")
                    self.instance_bit[key] = bit
                    self.g.bit_kinds.append(self.fairness[key[0]].kind)
                bits |= 1 << bit
            label = self.split_index[(name, keys)] = self.new(name, bits, keys)
        return label

    def label(self, step: tuple) -> int:
        """The step's label, made on first sight (the hot loops inline the unsplit lookup)."""
        name = step[0]
        a = self.action_index.get(name)
        if a is None:
            if name in self.per_of:
                return self.split(step)
            a = self.action_index[name] = self.new(name, self.fair_of.get(name, 0), ())
        return a

    def of(self, step: tuple) -> int | None:
        """The step's label, None for a step the graph never recorded."""
        name = step[0]
        if name not in self.per_of:
            return self.action_index.get(name)
        return self.split_index.get((name, tuple((i, per(step)) for i, per in self.per_of[name])))


def build_graph(machine: Machine, fairness: Sequence[Fairness], predicates: Sequence[Predicate], *,
                symmetry: bool = True, max_states: int | None = None,
                max_seconds: float | None = None, max_depth: int | None = None,
                expander: Expander | None = None, ticker: Ticker | None = None) -> StateGraph:
    """BFS over the constrained space recording every in-bounds step as an edge.

    ``expander`` (built for this machine and ``symmetry``) carries the safety checks of a one-pass
    run; without one nothing is checked. The walk is the BFS engine's (``checker.explore.bfs``):
    levels, chunks of ``bfs.CHUNK`` parents, invariants on each chunk's new states, the same limits
    and the same figures where it stops (``StateGraph.distinct``, ``queue``, ``depth``), so a
    finding is the one the engine reports. ``ticker`` reports progress and keeps the time limit."""
    symmetry = symmetry and machine.has_symmetry()
    # A safety run walks in the engine's chunks and checks the fingerprint's domain on a sample of
    # each level as the engine does (it re-expands up to 64 states a level); a liveness-only walk
    # needs neither (nor the engine's module, which this process may not have loaded yet).
    chunk_size, sample = CHUNK, 0
    if expander is not None:
        from ..explore import bfs  # (late: looked up at each run, so a test may shrink the chunks)

        chunk_size, sample = bfs.CHUNK, bfs.SAMPLE
    if expander is None:
        # nothing to check: successors and the run's fingerprint only
        # NO_VIEW: never a view's graph, not even the machine's default (run.VIEW_REASON)
        expander = Expander(machine, symmetry=symmetry, view=NO_VIEW, check_deadlock=False,
                            stop_at_first=False, no_properties=True)
    expand = expander.expand_one
    declared = symmetry_guard(machine, fairness, symmetry)
    if ticker is None:
        ticker = Ticker(None, "liveness", max_seconds)
    preds = list(predicates)
    npred = len(preds)
    g = empty_graph(fairness, preds, symmetry)
    labels = Labels(g, fairness)
    fair_of, per_of, action_index = labels.fair_of, labels.per_of, labels.action_index
    new_label, split_label = labels.new, labels.split
    ids: dict[int, int] = {}
    queue: deque[Any] = deque()  # the states of the nodes not expanded yet, in node order
    fps_append, marks = g.fps.append, g.marks
    t_append, l_append = g.targets.append, g.labels.append
    en_append, off_append, targets, action_bits = g.enabled.append, g.offsets.append, g.targets, g.action_bits
    gen_cov, out_cov, new_cov = g.coverage, g.outside, g.new_coverage
    found = expander.found
    stop_first = expander.stop_at_first

    pred_marks = list(zip(preds, marks))  # (one tuple per predicate: no indexing per state)

    def add(state: Any, key: int) -> int:
        node = len(g.fps)
        ids[key] = node
        fps_append(key & MASK64)
        for p, m in pred_marks:
            m.append(1 if p(state) else 0)
        return node

    def check_orbit(state: Any, node: int) -> None:
        # (called on every duplicate successor: a mark is 0 or 1, so ``not p(state) == mark`` says
        # the value differs without converting either side)
        for p, m in pred_marks:
            if (not p(state)) == m[node]:
                raise LivenessError(orbit_error(p, preds))

    def stop(kept: int, level: int, unexpanded: int, limit: str | None = None) -> None:
        """End the walk as the BFS engine does: ``kept`` states counted, ``unexpanded`` of the
        current level left, the next level counted as reached when it holds a kept state."""
        g.complete = False
        if limit is not None:  # (a depth limit met before stays: the engine reports it too)
            g.limit_hit = limit
        g.distinct = kept
        g.queue = unexpanded + kept - level_end
        g.depth = level + (1 if kept > level_end else 0)
        raise _Stop

    check_sym = symmetry and npred > 0
    level, level_end = 1, 0
    try:
        # ---- level 1: the initial states, each checked on its own (the first one breaking a property)
        g.generated, inits, init_fps = expander.init_states()
        if sample:
            expander.check_sample(inits, sample)
        overflow = False
        for state, key in zip(inits, init_fps):
            node = ids.get(key)
            if node is None:
                if max_states is not None and len(g.fps) >= max_states:
                    overflow = True
                    continue
                g.init.append(add(state, key))
                queue.append(state)
            elif check_sym:
                check_orbit(state, node)
        level_end = len(g.fps)
        if overflow:  # (the engine records the limit before it checks the states that fit)
            g.limit_hit = "states"
        for node, state in enumerate(queue):
            expander.check_invariants([state], [node], 1)
            if stop_first and found:
                stop(level_end, 1, node + 1)
        if overflow:
            stop(level_end, 1, level_end, "states")

        # ---- the levels after it, in chunks of parents as the engine takes them
        u = 0
        while u < level_end:
            last_level = max_depth is not None and level >= max_depth
            if sample:
                expander.check_sample(list(islice(queue, sample)), sample)
            for chunk_start in range(u, level_end, chunk_size):
                chunk_end = min(chunk_start + chunk_size, level_end)
                first_new = len(g.fps)
                new_states: list[Any] = []
                new_actions: list[str] = []
                cut = False  # a new state past the depth limit
                for u in range(chunk_start, chunk_end):
                    state = queue.popleft()
                    en = 0
                    for step, nxt, h in expand(state, u, level, gen_cov, out_of_bounds=True, outside=out_cov):
                        name = step[0]
                        a = action_index.get(name)
                        if a is None:
                            if name in per_of:
                                a = split_label(step)
                            else:
                                a = action_index[name] = new_label(name, fair_of.get(name, 0), ())
                        en |= action_bits[a]
                        if h is None:  # outside the constraint: it only made ``a`` enabled here
                            continue
                        v = ids.get(h)
                        if v is None:
                            if last_level:  # not kept (the engine's depth limit): no node, no edge
                                cut = True
                                continue
                            v = add(nxt, h)
                            new_states.append(nxt)
                            new_actions.append(name)
                        elif check_sym:
                            check_orbit(nxt, v)
                        t_append(v)
                        l_append(a)
                    if declared is not None and u < SYMMETRY_SAMPLE:
                        # after the expansion, whose enabled bits (with symmetry no fairness is
                        # split, so ``en`` is ``fair_of``'s) and marks it reuses; before the stop, so
                        # a refusal still comes first, as when it ran before the expansion
                        _check_images(machine, declared, state, [m[u] for m in marks], en, preds, fair_of)
                    en_append(en)
                    off_append(len(targets))
                    if stop_first and found:  # a transition or a deadlock: the chunk's states are not kept
                        stop(first_new, level, level_end - chunk_end)
                u = chunk_end
                kept = len(new_states)
                if max_states is not None and first_new + kept > max_states:
                    overflow = True
                    kept = max_states - first_new
                    del new_states[kept:]
                for name, n in Counter(new_actions[:kept]).items():
                    new_cov[name] = new_cov.get(name, 0) + n
                if new_states:
                    queue.extend(new_states)
                    expander.check_invariants(new_states, range(first_new, first_new + kept), level + 1)
                    if stop_first and found:
                        stop(first_new + kept, level, level_end - chunk_end)
                if overflow:
                    stop(first_new + kept, level, level_end - chunk_end, "states")
                if cut:
                    g.complete, g.limit_hit = False, "depth"
                if ticker.out_of_time():
                    stop(first_new + kept, level, level_end - chunk_end, "time")
                ticker.maybe_update(lambda level=level: Stats(len(g.fps), g.generated + sum(gen_cov.values()),  # type: ignore[misc]
                                                              level, len(queue), ticker.elapsed()), level)
            if len(g.fps) > level_end:
                level += 1
            level_end = len(g.fps)
        g.distinct, g.queue, g.depth = len(g.fps), 0, level
    except _Stop:
        pass
    g.generated += sum(gen_cov.values())
    g.elapsed = ticker.elapsed()
    return g


class _Stop(Exception):
    pass


def _check_images(machine: Machine, declared: Any, state: Any, marks: list[int], bits: int,
                  preds: list[Predicate], fair_of: dict[str, int]) -> None:
    """Every image of ``state`` under the symmetry group has the same predicate values (``marks``,
    the state's) and the same enabled fairness constraints (``bits``, the state's; steps leaving
    the constraint included, as in the graph). The images are expanded by ``steps_of``, not the
    run's expander: a deadlock or transition property met there is not the run's finding."""
    def enabled(s: Any) -> int:
        bits = 0
        for step in steps_of(machine, s):
            bits |= fair_of.get(step[0], 0)
        return bits

    values = [bool(m) for m in marks]
    for g in declared.group():
        image = declared.apply(state, g)
        if image == state:
            continue
        if [bool(p(image)) for p in preds] != values:
            raise LivenessError("a predicate of the temporal properties differs between two states of one "
                                "symmetry orbit, so the symmetry-reduced graph cannot check it; run with "
                                "symmetry = false")
        if enabled(image) != bits:
            raise LivenessError("the machine's symmetry changes which fairness constraints are enabled (it "
                                "renames actions, not only their parameters), so the symmetry-reduced graph "
                                "cannot check fairness; run with symmetry = false")
