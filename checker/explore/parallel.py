"""Breadth-first exploration on several processes, partitioned by fingerprint.

Each worker owns the states whose fingerprint ``h`` has ``h % workers == w``: their visited
fingerprints (a ``compact.FingerprintSet``), their parent links (a ``compact.ParentStore``) and,
for the current level, their frontier. The run is level-synchronous, so BFS level order is kept:
every state of level ``d`` is expanded before any of level ``d + 1``, counterexamples stay
shortest, and the counts (distinct, generated, depth) equal the single-process BFS's.

One level, driven by the parent process over one pipe per worker:

1. ``expand``: each worker expands its frontier. A successor's fingerprint picks its owner; each
   worker drops fingerprints it already produced in this level (a level-local set)
   or in the previous level (all of those are visited by now), keeps its own
   candidates and writes the others' to one file per destination in shared memory (/dev/shm),
   which avoids pipe deadlocks between workers and costs a memcpy. Transition properties and
   deadlock are checked here, where the step is known.
2. ``absorb``: each worker reads the candidates sent to it, drops those seen in this level or
   before (one vectorised probe of its fingerprint set) and reports how many are new.
3. ``commit``: the parent hands each worker its share of the room left under ``max_states`` (or
   none at the depth limit); workers add the new states, record parent links, check invariants
   on them and make them the next frontier.

A parent link is the parent's *reference* ``local_index * workers + owner``; a trace's chain of
fingerprints is collected from the workers after the run and re-executed by
``checker.trace.rebuild_trace``, as for the BFS.

Differences from ``bfs`` (documented, not hidden): ``max_states`` and ``max_seconds`` are enforced
per level (the state cap exactly, by sharing the room; the time limit also inside a level, between
chunks). Which of several equally-deep duplicates "discovered" a state may differ from the BFS,
so per-action *distinct* coverage may differ while totals agree. Under ``stop_at_first`` the
violation reported is the shortest one found in the level that found any (the BFS reports the
first in its queue order, which has the same length in every case where only one kind of
violation is reachable at that depth).
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import os
import pickle
import shutil
import tempfile
import time
import traceback
from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..fingerprint import MASK64, UnstableStateError, check_state
from ..machine import Machine
from ..result import Result, Stats, TraceStep, Violation
from ..trace import rebuild_trace
from .common import Ticker, build_coverage, describe_limit, overrides, select_properties
from .compact import FingerprintSet, ParentStore
from .options import ExploreOptions

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from ..progress import Progress

#: frontier states expanded between time-limit checks in a worker
CHUNK = 2048
#: a worker keeps at most this many bytes of parent links in RAM; older levels go to a temp file
PARENT_SPILL_BYTES = 256 << 20
NO_PARENT = int(ParentStore.NO_PARENT)
#: states of the first two levels checked for process-stable types (as the BFS does)
SAMPLE = 64


@dataclass
class _Found:
    """A violation seen by a worker; ``ref`` is the violating (or, for a transition, the source)
    state's reference."""

    name: str
    kind: str
    ref: int
    length: int  # trace length in states, the transition's target included
    step: Any = None
    state: Any = None


@dataclass
class _Setup:
    worker: int
    workers: int
    symmetry: bool
    check_deadlock: bool
    stop_at_first: bool
    exchange_dir: str
    deadline: float | None
    init_fps: list[int] = field(default_factory=list)  # unsigned, this worker's initial states
    init_states: list[Any] = field(default_factory=list)


class _Worker:
    """One partition of the state space; runs in its own process and obeys the parent's pipe."""

    def __init__(self, machine: Machine, options: ExploreOptions, setup: _Setup, conn: Connection):
        self.machine = machine
        self.conn = conn
        self.s = setup
        self.w, self.n = setup.worker, setup.workers
        invariants, transitions = select_properties(machine, options.properties)
        self.invariants, self.transitions = invariants, transitions
        self.visited = FingerprintSet()
        self.parents = ParentStore(spill_bytes=PARENT_SPILL_BYTES)
        self.violated: set[str] = set()
        fps = np.array(setup.init_fps, dtype=np.uint64)
        self.visited.add_batch(fps)
        start = self.parents.append_level(fps, np.full(fps.size, -1, dtype=np.int64))
        self.frontier: list[Any] = setup.init_states
        self.frontier_refs = [(start + i) * self.n + self.w for i in range(fps.size)]
        self.cand: tuple[array, array, list[Any], list[str]] | None = None
        self.new_idx: np.ndarray | None = None
        self.cand_fps: np.ndarray | None = None
        self.cand_refs: np.ndarray | None = None
        self.level = 1
        self.prev_seen: set[int] = set()

    # -- pipe protocol
    def serve(self) -> None:
        while True:
            cmd, *args = self.conn.recv()
            if cmd == "expand":
                self.conn.send(self.expand(*args))
            elif cmd == "absorb":
                self.conn.send(self.absorb())
            elif cmd == "commit":
                self.conn.send(self.commit(*args))
            elif cmd == "chain":
                self.conn.send(self.link(*args))
            elif cmd == "nbytes":
                self.conn.send(self.visited.nbytes + self.parents.nbytes)
            elif cmd == "stop":
                self.parents.close()
                return
            else:
                raise ValueError(f"unknown command {cmd!r}")

    def _path(self, level: int, src: int, dst: int) -> str:
        return os.path.join(self.s.exchange_dir, f"{level}-{src}-{dst}.pkl")

    def expand(self, level: int, violated: set[str]) -> dict[str, Any]:
        self.level = level
        self.violated = violated
        machine = self.machine
        successors = machine.successors
        canonical = machine.canonical
        symmetry = self.s.symmetry
        bounded = overrides(machine, "within_bounds")
        within = machine.within_bounds
        is_terminal = machine.is_terminal
        trans = [(n, c) for n, c in self.transitions if n not in violated]
        check_deadlock = self.s.check_deadlock and "deadlock" not in violated
        stop_at_first = self.s.stop_at_first
        nw, me = self.n, self.w
        found: list[_Found] = []
        generated = 0
        seen: set[int] = set()
        seen_add = seen.add
        # Everything produced in the previous level is visited by now (new or not, its owner
        # has it), so successors leading back there are dropped before any buffering.
        before_seen = self.prev_seen
        # per destination: fingerprints (signed hash), parent refs, states, action names
        outs = [(array("q"), array("q"), [], []) for _ in range(nw)]
        fps_by = [o[0].append for o in outs]
        refs_by = [o[1].append for o in outs]
        states_by = [o[2].append for o in outs]
        acts_by = [o[3].append for o in outs]
        gen_cov: Counter[str] = Counter()
        all_actions: list[str] = []  # counted per chunk: Counter.update runs in C
        act_append = all_actions.append
        frontier, refs = self.frontier, self.frontier_refs
        stopped = None
        deadline = self.s.deadline
        for chunk_start in range(0, len(frontier), CHUNK):
            if deadline is not None and time.perf_counter() >= deadline:
                stopped = "time"
                break
            for idx in range(chunk_start, min(chunk_start + CHUNK, len(frontier))):
                state = frontier[idx]
                ref = refs[idx]
                before = generated
                for step, nxt in successors(state):
                    generated += 1
                    action = step[0]
                    act_append(action)
                    if bounded and not within(nxt):
                        continue
                    if trans:
                        for name, check in trans:
                            if name not in self.violated and not check(state, step, nxt):
                                self.violated.add(name)
                                found.append(_Found(name, "transition", ref, level + 1, step, nxt))
                    h = hash(canonical(nxt)) if symmetry else hash(nxt)
                    if h in seen or h in before_seen:
                        continue
                    seen_add(h)
                    d = h % nw
                    fps_by[d](h)
                    refs_by[d](ref)
                    states_by[d](nxt)
                    acts_by[d](action)
                if generated == before and check_deadlock and not is_terminal(state):
                    check_deadlock = False
                    found.append(_Found("deadlock", "deadlock", ref, level))
                if found and stop_at_first:
                    stopped = "violation"
                    break
            gen_cov.update(all_actions)
            all_actions.clear()
            if stopped:
                break
        self.prev_seen = seen
        for d in range(nw):
            if d != me:
                fps, prefs, states, acts = outs[d]
                with open(self._path(level, me, d), "wb") as f:
                    pickle.dump((fps.tobytes(), prefs.tobytes(), states, acts), f,
                                protocol=pickle.HIGHEST_PROTOCOL)
        self.cand = outs[me]
        return {"generated": generated, "gen_cov": dict(gen_cov), "found": found,
                "stopped": stopped}

    def absorb(self) -> int:
        """Merge the candidates sent here with this worker's own; count the new ones."""
        assert self.cand is not None
        fps, refs, states, acts = self.cand
        fp_parts = [np.frombuffer(fps, dtype=np.int64)]
        ref_parts = [np.frombuffer(refs, dtype=np.int64)]
        for src in range(self.n):
            if src == self.w:
                continue
            path = self._path(self.level, src, self.w)
            with open(path, "rb") as f:
                ifps, irefs, istates, iacts = pickle.load(f)
            os.unlink(path)
            fp_parts.append(np.frombuffer(ifps, dtype=np.int64))
            ref_parts.append(np.frombuffer(irefs, dtype=np.int64))
            states.extend(istates)
            acts.extend(iacts)
        all_fps = np.concatenate(fp_parts).view(np.uint64)
        # Another worker may have produced a fingerprint this one also produced: the first
        # occurrence is kept (own candidates come first, then by sender).
        first = np.zeros(all_fps.size, dtype=bool)
        if all_fps.size:
            first[np.unique(all_fps, return_index=True)[1]] = True
        fresh = first & ~self.visited.contains_batch(all_fps)
        self.new_idx = np.flatnonzero(fresh)
        self.cand_fps = all_fps
        self.cand_refs = np.concatenate(ref_parts)
        return int(self.new_idx.size)

    def commit(self, allow: int) -> dict[str, Any]:
        assert self.cand is not None and self.new_idx is not None and self.cand_fps is not None
        _, _, states, acts = self.cand
        new_idx = self.new_idx[:allow]
        new_fps = self.cand_fps[new_idx]
        self.visited.add_batch(new_fps)
        start = self.parents.append_level(new_fps, self.cand_refs[new_idx], external=True)
        picked = new_idx.tolist()
        frontier = [states[i] for i in picked]
        if self.level == 1:
            for state in frontier[:SAMPLE]:
                check_state(state)
        new_cov = dict(Counter([acts[i] for i in picked]))
        found: list[_Found] = []
        nw, me = self.n, self.w
        for name, check in self.invariants:
            if name in self.violated:
                continue
            ok = list(map(check, frontier))
            if not all(ok):
                self.violated.add(name)
                found.append(_Found(name, "invariant", (start + ok.index(False)) * nw + me,
                                    self.level + 1))
        self.frontier = frontier
        self.frontier_refs = [(start + k) * nw + me for k in range(len(frontier))]
        self.cand = None
        self.new_idx = self.cand_fps = self.cand_refs = None
        return {"new": len(frontier), "new_cov": new_cov, "found": found}

    def link(self, local: int) -> tuple[int, int]:
        """(unsigned fingerprint, parent reference or NO_PARENT) of a local state."""
        return self.parents.link(local)


def _worker_main(machine: Machine, options: ExploreOptions, setup: _Setup, conn: Connection) -> None:
    # States are acyclic tuples: the cyclic collector would only walk millions of them for nothing.
    gc.disable()
    try:
        _Worker(machine, options, setup, conn).serve()
    except UnstableStateError as exc:  # a model error the caller reports as such
        try:
            conn.send(("unstable", str(exc)))
        except (OSError, ValueError):
            pass
    except BaseException:  # report anything, including KeyboardInterrupt, to the parent
        try:
            conn.send(("error", traceback.format_exc()))
        except (OSError, ValueError):
            pass
    finally:
        conn.close()


class WorkerError(RuntimeError):
    """A worker process failed; the message carries its traceback."""


def _exchange_dir() -> str:
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    return tempfile.mkdtemp(prefix="eoscheck-parallel-", dir=base)


def explore_parallel(machine: Machine, options: ExploreOptions, progress: Progress | None = None) -> Result:
    workers = max(1, int(options.workers))
    invariants, _ = select_properties(machine, options.properties)  # fails early on unknown names
    symmetry = options.symmetry and overrides(machine, "canonical")
    canonical = machine.canonical
    within = machine.within_bounds
    max_states = options.max_states
    max_depth = options.max_depth
    stop_at_first = options.stop_at_first
    ticker = Ticker(progress, f"parallel x{workers}", options.max_seconds)

    # ---- level 1 in this process, exactly as the BFS does it
    generated = 0
    init_fps: list[int] = []
    init_states: list[Any] = []
    seen: set[int] = set()
    limit_hit: str | None = None
    for state in machine.init_states():
        generated += 1
        if not within(state):
            continue
        h = hash(canonical(state)) if symmetry else hash(state)
        if h in seen:
            continue
        if max_states is not None and len(seen) >= max_states:
            limit_hit = "states"
            break
        seen.add(h)
        init_fps.append(h)
        init_states.append(state)
    for state in init_states[:SAMPLE]:
        check_state(state)
    violated: set[str] = set()
    init_found: list[tuple[str, int]] = []  # (property, index into init_fps)
    for i, state in enumerate(init_states):
        for name, check in invariants:
            if name not in violated and not check(state):
                violated.add(name)
                init_found.append((name, i))
        if init_found and stop_at_first:
            break
    gen_cov: dict[str, int] = {}
    new_cov: dict[str, int] = {}
    distinct = len(init_fps)
    if init_found or limit_hit or not init_fps:
        stats = Stats(distinct=distinct, generated=generated, depth=1 if init_fps else 0,
                      queue=distinct if (init_found or limit_hit) else 0, elapsed=ticker.elapsed(),
                      coverage=build_coverage(machine, gen_cov, new_cov))
        violations = [Violation(name, "invariant", rebuild_trace(machine, [init_fps[i] & MASK64], symmetry),
                                found_length=1) for name, i in init_found]
        return _finish(machine, options, ticker, stats, violations, limit_hit)

    # ---- workers: forked, so the machine is shared without pickling
    ctx = mp.get_context("fork")
    exchange = _exchange_dir()
    conns: list[Connection] = []
    procs: list[mp.process.BaseProcess] = []
    level = 1
    found: list[_Found] = []
    queue = 0
    try:
        for w in range(workers):
            setup = _Setup(w, workers, symmetry, options.check_deadlock, stop_at_first, exchange,
                           ticker.deadline)
            for h, state in zip(init_fps, init_states):
                if h % workers == w:
                    setup.init_fps.append(h & MASK64)
                    setup.init_states.append(state)
            parent_end, child_end = ctx.Pipe()
            proc = ctx.Process(target=_worker_main, args=(machine, options, setup, child_end),
                               name=f"eoscheck-worker-{w}", daemon=True)
            proc.start()
            child_end.close()
            conns.append(parent_end)
            procs.append(proc)
        frontier_size = distinct
        while frontier_size:
            last_level = max_depth is not None and level >= max_depth
            replies = _ask_all(conns, ("expand", level, set(violated)))
            level_found: list[_Found] = []
            stopped = None
            for r in replies:
                generated += r["generated"]
                for a, c in r["gen_cov"].items():
                    gen_cov[a] = gen_cov.get(a, 0) + c
                level_found.extend(r["found"])
                stopped = stopped or r["stopped"]
            counts = _ask_all(conns, ("absorb",))
            if stop_at_first and level_found:
                found.append(min(level_found, key=lambda f: f.length))
                queue = frontier_size
                _ask_all(conns, ("commit", 0))
                break
            _record(level_found, found, violated)
            if last_level:
                allows = [0] * workers
                if sum(counts):
                    limit_hit = "depth"
            elif max_states is not None:
                room = max(max_states - distinct, 0)
                allows = []
                for c in counts:  # share the room in worker order: deterministic
                    allows.append(min(c, room))
                    room -= allows[-1]
                if sum(allows) < sum(counts):
                    limit_hit = "states"
            else:
                allows = counts
            for c, a in zip(conns, allows):
                c.send(("commit", a))
            commits = [_receive(c) for c in conns]
            new_found: list[_Found] = []
            new_total = 0
            for r in commits:
                new_total += r["new"]
                for a, c in r["new_cov"].items():
                    new_cov[a] = new_cov.get(a, 0) + c
                new_found.extend(r["found"])
            distinct += new_total
            if stop_at_first and new_found:
                found.append(new_found[0])
                queue = frontier_size + new_total
                if new_total:
                    level += 1
                break
            _record(new_found, found, violated)
            if stopped == "time" or (ticker.out_of_time() and new_total):
                limit_hit = "time"
                queue = new_total
                if new_total:
                    level += 1
                break
            if limit_hit == "states":
                queue = new_total
                level += 1
                break
            if new_total:
                level += 1
            frontier_size = new_total
            ticker.maybe_update(lambda: Stats(distinct, generated, level, frontier_size,
                                              ticker.elapsed()), level)
        violations = [_to_violation(machine, conns, workers, f, symmetry) for f in found]
        store_bytes = sum(_ask_all(conns, ("nbytes",)))
        _ask_all(conns, ("stop",), expect_reply=False)
        for p in procs:
            p.join(timeout=10)
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
                p.join(timeout=5)
        for c in conns:
            c.close()
        shutil.rmtree(exchange, ignore_errors=True)
    stats = Stats(distinct=distinct, generated=generated, depth=level, queue=queue,
                  elapsed=ticker.elapsed(), coverage=build_coverage(machine, gen_cov, new_cov))
    result = _finish(machine, options, ticker, stats, violations, limit_hit)
    result.notes.append(f"{workers} worker processes; visited set and parent links: "
                        f"{store_bytes / max(distinct, 1):.1f} bytes per distinct state")
    return result


def _record(level_found: list[_Found], found: list[_Found], violated: set[str]) -> None:
    """Under --continue: keep the first (shortest) violation of each property."""
    for f in sorted(level_found, key=lambda f: f.length):
        if f.name not in violated:
            violated.add(f.name)
            found.append(f)


def _finish(machine: Machine, options: ExploreOptions, ticker: Ticker, stats: Stats,
            violations: list[Violation], limit_hit: str | None) -> Result:
    if violations:
        verdict = "violated"
    elif limit_hit:
        verdict = "incomplete"
    else:
        verdict = "holds"
    notes = []
    if limit_hit:
        value = {"states": options.max_states, "depth": options.max_depth,
                 "time": options.max_seconds}[limit_hit]
        notes.append(describe_limit(limit_hit, value))
    ticker.finish(stats)
    return Result(verdict=verdict, strategy="parallel", stats=stats, violations=violations,
                  limit_hit=limit_hit, notes=notes)


def _ask(conn: Connection, message: tuple) -> Any:
    conn.send(message)
    return _receive(conn)


def _receive(conn: Connection) -> Any:
    try:
        reply = conn.recv()
    except EOFError:
        raise WorkerError("a worker process exited unexpectedly") from None
    if isinstance(reply, tuple) and len(reply) == 2 and reply[0] == "error":
        raise WorkerError(f"worker failed:\n{reply[1]}")
    if isinstance(reply, tuple) and len(reply) == 2 and reply[0] == "unstable":
        raise UnstableStateError(reply[1])
    return reply


def _ask_all(conns: list[Connection], message: tuple, expect_reply: bool = True) -> list[Any]:
    for c in conns:
        c.send(message)
    return [_receive(c) for c in conns] if expect_reply else []


def _chain(conns: list[Connection], workers: int, ref: int) -> list[int]:
    out: list[int] = []
    while ref != NO_PARENT:
        fp, ref = _ask(conns[ref % workers], ("chain", ref // workers))
        out.append(fp)
    out.reverse()
    return out


def _to_violation(machine: Machine, conns: list[Connection], workers: int, f: _Found,
                  symmetry: bool) -> Violation:
    trace = rebuild_trace(machine, _chain(conns, workers, f.ref), symmetry)
    if f.kind == "transition":
        trace.append(TraceStep(f.step, f.state))
    return Violation(property=f.name, kind=f.kind, trace=trace, found_length=len(trace),
                     shortened_by="bfs (shortest)")
