"""What Spark executors run for one BFS level: expansion and the anti-join against visited.

Records are ``(partition, (tag, payload))`` with the partition ``fp % P``. A level's task
(``level_partition``) reads, for its partition:

* ``V`` — the partition's visited set: one sorted ``uint64`` numpy array;
* ``C`` — candidate chunks (one per source and target partition, already de-duplicated within
  the source), from every partition's expansion of the level before;
* ``F`` — instead of candidates, a frontier to expand as it is (the first level, or a level read
  back from a checkpoint): one columnar chunk ``Chunk`` (fingerprints, the states pickled
  together as one list, parent fingerprints, action indices), in discovery order;

and yields its merged ``V`` and the new ``C`` chunks, for the next level's shuffle. The level's
statistics, violations and (when there is no checkpoint directory to read them from) the new
states' parent links go to the driver through an accumulator. Columnar chunks instead of one
record per state keep Spark's per-record cost (pickling and Python/JVM hand-over of millions of
tiny objects) out of the level's time.

The machine and the per-run settings arrive once per executor (a broadcast of a cloudpickled
``Plan``) and are kept module-global in the reused Python worker.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pyspark.accumulators import AccumulatorParam

from ..fingerprint import MASK64
from ..machine import Machine
from .expand import Expander, add_counts
from .spark_checkpoint import CheckpointStore

EMPTY = np.empty(0, dtype=np.uint64)


@dataclass
class Plan:
    """Everything executors need for the whole run; shipped once."""

    machine: Machine
    properties: tuple[str, ...] | None
    symmetry: bool
    check_deadlock: bool
    partitions: int
    collect_links: bool
    checkpoint: CheckpointStore | None
    view: str | None = None


class Overwrite(AccumulatorParam):
    """AccumulatorParam for {(kind, level, partition): stats}: merging overwrites per key, so a task
    that Spark runs twice (retry, speculation) reports once; its result is deterministic."""

    def zero(self, value: dict) -> dict:
        return {}

    def addInPlace(self, a: dict, b: dict) -> dict:
        a.update(b)
        return a


@dataclass(frozen=True)
class LevelArgs:
    """What changes from one level to the next (travels in the task closure)."""

    level: int  # the frontier's level (1 = initial states)
    last: bool  # max_depth reached: count new successors, keep none
    violated: frozenset[str] = frozenset()  # properties already reported (--continue)
    stop_at_first: bool = True


@dataclass
class Chunk:
    """Columnar block of states: row i is (fps[i], states[i], parents[i], actions[i]).

    The states are ``segments``: pickled lists of states, each with the rows of it that belong
    to the chunk (None: all). A frontier chunk points into the candidate chunks it was selected
    from, so the anti-join never decodes or re-encodes a state: encoding is the costliest part
    of moving a state (pickling NamedTuple-based states costs several µs each way), and each
    state is encoded once, where it is generated, and decoded once, where it is expanded.
    """

    fps: np.ndarray  # uint64
    segments: list[tuple[bytes, np.ndarray | None]]
    parents: np.ndarray  # uint64
    actions: np.ndarray  # int16: index in machine.actions, -1 for an undeclared action
    source: int = 0  # partition that produced it (orders candidates deterministically)
    undeclared: dict[int, str] = field(default_factory=dict)  # row -> action name, when -1
    #: (property, fingerprint) of rows that break an invariant (checked where they were generated)
    broken: list[tuple[str, int]] = field(default_factory=list)

    def states(self, machine: Machine) -> list:
        out: list = []
        for blob, rows in self.segments:
            decoded = decode_states(machine, blob)
            out.extend(decoded if rows is None else [decoded[i] for i in rows.tolist()])
        return out


def encode_states(machine: Machine, states: list) -> bytes:
    """A batch of states as bytes, through ``Machine.export_batch``: a machine whose states hold
    ids of interned parts (the packed Kafka machines, ``checker.compose``) sends each part once per
    batch instead of once per state, and pickles it once per process; pickling such states one by
    one unpacked and re-interned every part, which was most of a level's time on the Kafka specs."""
    return machine.export_batch(states)


def decode_states(machine: Machine, blob: bytes) -> list:
    return machine.import_batch(blob)


def make_chunk(machine: Machine, fps: list[int] | np.ndarray, states: list,
               parents: list[int] | np.ndarray, actions: list[int] | np.ndarray, source: int = 0,
               undeclared: dict[int, str] | None = None,
               broken: list[tuple[str, int]] | None = None) -> Chunk:
    return Chunk(np.asarray(fps, dtype=np.uint64),
                 [(encode_states(machine, states), None)],
                 np.asarray(parents, dtype=np.uint64),
                 np.asarray(actions, dtype=np.int16), source, undeclared or {}, broken or [])


def identity_partition(key: int) -> int:
    """Keys are already partition numbers; one function object so every level's partitioner is
    equal (PySpark compares partitioners by function identity), which lets Spark align the
    visited partitions with the shuffled candidates without moving the visited set."""
    return key


class Context:
    """A Plan unpacked for the hot loops; built once per Python worker."""

    def __init__(self, plan: Plan):
        m = plan.machine
        self.plan = plan
        self.machine = m
        self.partitions = plan.partitions
        self.expander = Expander(m, plan.properties, symmetry=plan.symmetry, view=plan.view,
                                 check_deadlock=plan.check_deadlock, stop_at_first=False)
        self.action_names = list(m.actions)
        self.action_index = {a: i for i, a in enumerate(self.action_names)}


_CONTEXTS: dict[str, Context] = {}


def context(broadcast: Any, token: str) -> Context:
    ctx = _CONTEXTS.get(token)
    if ctx is None:
        from pyspark import cloudpickle
        ctx = Context(cloudpickle.loads(broadcast.value))
        _CONTEXTS.clear()  # one run at a time per worker: drop the previous run's machine
        _CONTEXTS[token] = ctx
    return ctx


# ---------------------------------------------------------------- expansion (map side)

def _fingerprints(hashes: list[int]) -> np.ndarray:
    """Fingerprints as the visited arrays hold them (unsigned 64-bit): ``hash`` gives signed
    ones, which numpy converts in C; other kinds may give unsigned ones."""
    try:
        return np.array(hashes, dtype=np.int64).view(np.uint64)
    except OverflowError:
        return np.array([h & MASK64 for h in hashes], dtype=np.uint64)


def _expand(ctx: Context, args: LevelArgs, report: Any, pid: int, visited: np.ndarray,
            frontier: list[Chunk]) -> Iterator[tuple[int, tuple[str, Any]]]:
    """Successors of this partition's frontier, bucketed by target partition; the counters and
    violations go to ``report`` under ("x", level, partition). ``visited`` is this partition's
    visited set (the new frontier included): a successor of this partition found in it is
    dropped here, before it costs an encoding, a shuffle and a decoding; the target's anti-join
    would drop it anyway. Most successors of a level are old states, and their encoding was the
    largest part of a level's time."""
    parts = ctx.partitions
    index = ctx.action_index
    expander = ctx.expander
    # One report per property and partition is enough: this partition's own record of what it
    # reported, on top of what earlier levels did. Invariants are checked here, on candidates, so
    # that states need not be decoded after the shuffle. A candidate that breaks a still-unviolated
    # invariant cannot have been visited before (it would have been reported then), so every such
    # report is about a new state.
    expander.violated = set(args.violated)
    expander.found = []
    inv_done: set[str] = set()
    stop = args.stop_at_first

    b_fps: list[list[np.ndarray]] = [[] for _ in range(parts)]
    b_states: list[list] = [[] for _ in range(parts)]
    b_parents: list[list[np.ndarray]] = [[] for _ in range(parts)]
    b_actions: list[list[int]] = [[] for _ in range(parts)]
    b_undeclared: list[dict[int, str]] = [{} for _ in range(parts)]
    b_broken: list[list[tuple[str, int]]] = [[] for _ in range(parts)]
    seen: set[int] = set()  # de-duplicate at the source: less to pickle and shuffle
    generated = 0
    gen_cov: dict[str, int] = {}
    out_cov: dict[str, int] = {}  # of gen_cov, cut by the state constraint
    n_visited = len(visited)

    for chunk in frontier:
        states = chunk.states(ctx.machine)
        expander.check_sample(states[:8], 64)
        cand = expander.expand_chunk(states, chunk.fps.tolist(), args.level, seen=seen)
        generated += cand.generated
        add_counts(gen_cov, cand.gen_cov)
        add_counts(out_cov, cand.outside)
        fps = _fingerprints(cand.fps)
        targets = fps % np.uint64(parts)
        keep = np.ones(len(fps), dtype=bool)
        if n_visited:
            own = np.flatnonzero(targets == pid)
            mine = fps[own]
            pos = np.searchsorted(visited, mine)
            pos[pos == n_visited] = 0
            keep[own[visited[pos] == mine]] = False
        # (a visited candidate that breaks an invariant was reported when it was new)
        for name, i in expander.first_broken(cand.states, inv_done):
            if keep[i]:
                b_broken[int(targets[i])].append((name, int(fps[i])))
        parents = np.asarray(cand.parents, dtype=np.uint64)
        cand_states, steps = cand.states, cand.steps
        for b in range(parts):
            rows = np.flatnonzero(keep & (targets == b))
            if not len(rows):
                continue
            picked = rows.tolist()
            b_fps[b].append(fps[rows])
            b_parents[b].append(parents[rows])
            b_states[b].extend([cand_states[i] for i in picked])
            actions = b_actions[b]
            for i in picked:
                action = steps[i][0]
                ai = index.get(action, -1)
                if ai < 0:
                    b_undeclared[b][len(actions)] = action
                actions.append(ai)
        # (not on a broken invariant: its state may lie beyond a depth or state limit, in which
        # case this level must still be expanded in full)
        if stop and expander.found:
            break
    deadlocks = [p.ref for p in expander.found if p.kind == "deadlock"]
    # the next state travels encoded (a composed machine's states cannot be pickled as they are)
    trans_found = [(p.name, p.ref, p.step, encode_states(ctx.machine, [p.state]))
                   for p in expander.found if p.kind == "transition"]

    for b in range(parts):
        if b_states[b]:
            chunk = Chunk(np.concatenate(b_fps[b]), [(encode_states(ctx.machine, b_states[b]), None)],
                          np.concatenate(b_parents[b]), np.asarray(b_actions[b], dtype=np.int16), pid,
                          b_undeclared[b], b_broken[b])
            yield b, ("C", chunk)
    report.add({("x", args.level, pid): {"generated": generated, "gen_cov": gen_cov, "outside": out_cov,
                                         "deadlocks": deadlocks, "transitions": trans_found}})


# ---------------------------------------------------------------- anti-join (reduce side)

def _antijoin(ctx: Context, args: LevelArgs, report: Any, pid: int, visited: np.ndarray,
              chunks: list[Chunk]) -> tuple[np.ndarray, Chunk | None]:
    """Candidates minus visited: (the grown visited set, the next frontier; None with
    ``args.last``); the level's statistics (and parent links) go to the driver through
    ``report``, an accumulator keyed by ("a", level, partition), so that a retried task
    overwrites instead of adding twice."""
    chunks.sort(key=lambda c: c.source)  # arrival order is not deterministic; sources are

    if chunks:
        fps = np.concatenate([c.fps for c in chunks])
        uniq, first = np.unique(fps, return_index=True)
        if len(visited):
            pos = np.searchsorted(visited, uniq)
            pos[pos == len(visited)] = 0
            fresh = visited[pos] != uniq
            uniq, first = uniq[fresh], first[fresh]
        order = np.sort(first)  # first occurrence wins, new states keep discovery order
    else:
        fps, uniq, order = EMPTY, EMPTY, np.empty(0, dtype=np.int64)

    stats: dict[str, Any] = {"new": len(order), "new_cov": {}, "invariants": []}
    if args.last:
        # Depth limit: new successors are neither kept nor checked; the driver only needs to know
        # whether there were any (then the run is incomplete).
        report.add({("a", args.level, pid): stats})
        return visited, None

    picked = order.tolist()
    new_fps = fps[order]
    parents = np.concatenate([c.parents for c in chunks])[order] if chunks else EMPTY
    actions = (np.concatenate([c.actions for c in chunks])[order] if chunks
               else np.empty(0, dtype=np.int16))
    # The new states stay encoded: the frontier points at the rows of the candidate blobs.
    offsets = np.cumsum([0] + [len(c.fps) for c in chunks])
    segments: list[tuple[bytes, np.ndarray | None]] = []
    for k, c in enumerate(chunks):
        lo, hi = np.searchsorted(order, [offsets[k], offsets[k + 1]])
        if hi > lo:
            rows = order[lo:hi] - offsets[k]
            ((blob, _),) = c.segments
            segments.append((blob, None if hi - lo == len(c.fps) else rows))

    # Coverage of new states by action (declared actions by index, others by name).
    counts = np.bincount(actions[actions >= 0].astype(np.int64), minlength=len(ctx.action_names))
    new_cov = {ctx.action_names[i]: int(n) for i, n in enumerate(counts) if n}
    if (actions < 0).any():
        names = {int(offsets[k]) + row: name for k, c in enumerate(chunks) for row, name in c.undeclared.items()}
        for i in picked:
            if i in names:
                new_cov[names[i]] = new_cov.get(names[i], 0) + 1
    stats["new_cov"] = new_cov

    broken = [b for c in chunks for b in c.broken]
    if broken:
        fresh_fps = set(uniq.tolist())
        stats["invariants"] = sorted({b for b in broken if b[1] in fresh_fps})

    level = args.level + 1
    frontier = Chunk(new_fps, segments, parents, actions, pid)
    if ctx.plan.checkpoint is not None:
        ctx.plan.checkpoint.write_part(level, pid, new_fps, parents, actions,
                                          frontier.states(ctx.machine), ctx.machine)
    merged = np.insert(visited, np.searchsorted(visited, uniq), uniq) if len(uniq) else visited
    if ctx.plan.collect_links:
        stats["links"] = (new_fps, parents)
    report.add({("a", args.level, pid): stats})
    return merged, frontier


def level_partition(broadcast: Any, token: str, join: LevelArgs | None, expand: LevelArgs | None,
                    report: Any, pid: int, records: Iterator) -> Iterator[tuple[int, tuple[str, Any]]]:
    """One task of one level, in one Python pass: the anti-join of the candidates shuffled here
    (``join``; none for the first job, whose input is a frontier) and the expansion of the new
    frontier (``expand``; none when the depth limit only counts the new successors). Yields the
    grown visited set to this same partition and the candidate chunks to theirs: the next level's
    shuffle carries both, so no level data is cached, checkpointed or joined in the JVM, and the
    new frontier never leaves this Python worker."""
    ctx = context(broadcast, token)
    visited = EMPTY
    frontier: list[Chunk] = []
    chunks: list[Chunk] = []
    for key, (tag, payload) in records:
        if key != pid:  # (the partitioning is the identity: this would be a bug, not bad input)
            raise RuntimeError(f"record of partition {key} in partition {pid}")
        if tag == "V":
            visited = payload
        elif tag == "C":
            chunks.append(payload)
        elif tag == "F":
            frontier.append(payload)
    if join is not None:
        visited, new = _antijoin(ctx, join, report, pid, visited, chunks)
        if new is None:
            return
        frontier = [new]
    yield pid, ("V", visited)
    if expand is not None:
        yield from _expand(ctx, expand, report, pid, visited, frontier)


def warm_partition(broadcast: Any, token: str, records: Iterator) -> None:
    """Unpack the run's machine in this Python worker ahead of its first level."""
    for _ in records:
        pass
    context(broadcast, token)


# ---------------------------------------------------------------- resuming from a checkpoint

def load_partition(machine: Machine, store: CheckpointStore, last_level: int, partitions: int,
                   stored_partitions: dict[int, int], pid: int, records: Iterator
                   ) -> Iterator[tuple[int, tuple[str, Any]]]:
    """Rebuild partition ``pid`` (V and F) of the level dataset from the checkpoint files;
    ``stored_partitions`` says how each level's files were split."""
    for _ in records:
        pass
    parts = [store.read_level(lvl, ["fp"], pid, partitions, stored_partitions[lvl])["fp"]
             for lvl in range(1, last_level + 1)]
    visited = np.sort(np.concatenate(parts)) if parts else EMPTY
    top = store.read_level(last_level, ["fp", "parent", "action", "state"], pid, partitions,
                           stored_partitions[last_level], machine=machine)
    yield pid, ("V", visited)
    yield pid, ("F", make_chunk(machine, top["fp"], top["state"], top["parent"], top["action"], pid))
