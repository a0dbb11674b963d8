"""Breadth-first exploration (TLC's default mode): complete, with shortest counterexamples.

Level-synchronous: the frontier holds the states of one level (distance from the initial states);
only fingerprints (``hash`` of the canonical state) and parent links stay in memory for states
already expanded, in flat buffers (``compact.CompactVisited``: a fingerprint table slot plus 12
bytes of parent link per state; ``visited.VisitedSet`` is the plain-Python reference it is tested
against); parent links past ``PARENT_SPILL_BYTES`` go to a temporary file. Counterexample traces
are rebuilt at the end by re-executing the machine along the parent chain
(``checker.trace.rebuild_trace``).

Counting follows TLC: ``generated`` counts the initial states plus every successor the machine
yields (self-loops and states outside the state constraint included); ``distinct`` counts states
kept; ``depth`` is the number of levels reached (a trace of length ``depth`` reaches the deepest
state). Checked per the plan: invariants on each new state, transition properties on every
generated step (before dedup), deadlock on each expanded state with no successors at all that the
machine does not call terminal.

Limits: ``max_states`` caps distinct states, ``max_depth`` caps levels (states at the last level are
still expanded, to check their steps and deadlocks, but their new successors are neither checked
nor kept), ``max_seconds`` is checked between chunks of parents. A run that was cut short by a
limit and found no violation says "incomplete", never "holds".

Determinism: the frontier is a list in discovery order, successors are taken in the machine's
order, and the first occurrence of a fingerprint wins; no set or dict iteration order reaches the
result, so counts and traces are identical in every run and process.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from ..fingerprint import MASK64, check_state
from ..machine import Machine
from ..result import Result, Stats, TraceStep, Violation
from ..trace import rebuild_trace
from .common import Ticker, build_coverage, limit_notes, overrides, select_properties, verdict_of
from .compact import CompactVisited
from .options import ExploreOptions

if TYPE_CHECKING:
    from ..progress import Progress

#: parent links kept in RAM at most (12 bytes per state); older levels go to a temporary file
PARENT_SPILL_BYTES = 512 << 20

#: parents expanded between dedup batches, time-limit checks and progress updates
CHUNK = 2048

#: states of the first two levels checked for process-stable types (check_state) before use
SAMPLE = 64

_NONE = object()  # marks "no successor yet" for deadlock detection without a per-step counter


class _Stop(Exception):
    """Raised inside the hot loop to leave every level of it at once (first violation found)."""


class _Found:
    """A violation seen during the run; its trace is rebuilt once the run is over."""

    __slots__ = ("name", "kind", "fp", "level", "step", "state")

    def __init__(self, name: str, kind: str, fp: int, level: int, step: Any = None, state: Any = None):
        self.name, self.kind, self.fp, self.level = name, kind, fp, level
        # for transition violations: the offending step and its target (the trace ends with them)
        self.step, self.state = step, state


def explore_bfs(machine: Machine, options: ExploreOptions, progress: Progress | None = None) -> Result:
    invariants, transitions = select_properties(machine, options.properties)
    symmetry = options.symmetry and machine.has_symmetry()
    canonical = machine.canonical
    bounded = overrides(machine, "within_bounds")
    within = machine.within_bounds
    is_terminal = machine.is_terminal
    check_deadlock = options.check_deadlock
    stop_at_first = options.stop_at_first
    max_states = options.max_states
    max_depth = options.max_depth
    successors = machine.successors

    visited = CompactVisited(spill_bytes=PARENT_SPILL_BYTES)
    known = visited.known()
    found: list[_Found] = []
    violated: set[str] = set()  # properties already reported (each once under --continue)
    gen_cov: dict[str, int] = {}  # generated per action; their sum is the generated count
    new_cov: dict[str, int] = {}
    generated = 0  # initial states; successors are summed from gen_cov at the end
    level = 1
    limit_hit: str | None = None
    ticker = Ticker(progress, "bfs", options.max_seconds)

    def report(f: _Found) -> None:
        found.append(f)
        violated.add(f.name)
        if stop_at_first:
            raise _Stop

    def live_invariants() -> list:
        return [(n, c) for n, c in invariants if n not in violated]

    def live_transitions() -> list:
        return [(n, c) for n, c in transitions if n not in violated]

    frontier: list[Any] = []
    frontier_fps: list[int] = []
    actions: list[str] = []  # the current chunk's generated steps' actions (counted by Counter, in C)
    next_frontier: list[Any] = []
    chunk_end = 0  # frontier[:chunk_end] is expanded (for the queue figure on a stop)

    try:
        # ---- level 1: the initial states
        init_fps: list[int] = []
        init_states: list[Any] = []
        for state in machine.init_states():
            generated += 1
            if bounded and not within(state):
                continue
            init_fps.append(hash(canonical(state)) if symmetry else hash(state))
            init_states.append(state)
        room = max_states if max_states is not None else None
        for state in init_states[:SAMPLE]:
            check_state(state)
        new, overflow = visited.insert_batch(init_fps, init_fps, room)
        if overflow:
            limit_hit = "states"
        for i in new:
            state = init_states[i]
            frontier.append(state)
            frontier_fps.append(init_fps[i])
            for name, check in invariants:
                if name not in violated and not check(state):
                    report(_Found(name, "invariant", init_fps[i], 1))
        visited.end_level()
        if limit_hit:
            raise _Stop

        # ---- the levels after it
        while frontier:
            last_level = max_depth is not None and level >= max_depth
            invs = live_invariants()
            trans = live_transitions()
            next_frontier = []
            next_fps: list[int] = []
            for chunk_start in range(0, len(frontier), CHUNK):
                cand_fps: list[int] = []
                cand_parents: list[int] = []
                cand_states: list[Any] = []
                cand_steps: list[Any] = []
                fps_append = cand_fps.append
                par_append = cand_parents.append
                st_append = cand_states.append
                step_append = cand_steps.append
                chunk_seen: set[int] = set()  # a state reached twice in the chunk is buffered once
                seen_add = chunk_seen.add
                act_append = actions.append
                chunk_end = min(chunk_start + CHUNK, len(frontier))
                for idx in range(chunk_start, chunk_end):
                    state = frontier[idx]
                    pfp = frontier_fps[idx]
                    nxt = _NONE
                    for step, nxt in successors(state):
                        act_append(step[0])
                        if bounded and not within(nxt):
                            continue
                        if trans:
                            for name, check in trans:
                                if name not in violated and not check(state, step, nxt):
                                    report(_Found(name, "transition", pfp, level, step, nxt))
                        h = hash(canonical(nxt)) if symmetry else hash(nxt)
                        if h in known or h in chunk_seen:  # most successors are old: drop them now
                            continue
                        seen_add(h)
                        fps_append(h)
                        par_append(pfp)
                        st_append(nxt)
                        step_append(step)
                    if (nxt is _NONE and check_deadlock and "deadlock" not in violated
                            and not is_terminal(state)):
                        report(_Found("deadlock", "deadlock", pfp, level))
                _count(gen_cov, actions)
                if last_level:
                    room = 0
                elif max_states is not None:
                    room = max_states - len(visited)
                else:
                    room = None
                new, overflow = visited.insert_batch(cand_fps, cand_parents, room)
                if new:
                    new_states = [cand_states[i] for i in new]
                    if level == 1:
                        for st in new_states[:SAMPLE]:
                            check_state(st)
                    new_fps = [cand_fps[i] for i in new]
                    for i in new:
                        action = cand_steps[i][0]
                        new_cov[action] = new_cov.get(action, 0) + 1
                    next_frontier.extend(new_states)
                    next_fps.extend(new_fps)
                    for name, check in invs:
                        if name not in violated and not all(map(check, new_states)):
                            bad = next(i for i, st in enumerate(new_states) if not check(st))
                            report(_Found(name, "invariant", new_fps[bad], level + 1))
                # Expanded states are no longer needed (traces are rebuilt from fingerprints):
                # dropping them now lowers the peak of two levels' states held at once.
                frontier[chunk_start:chunk_end] = [None] * (chunk_end - chunk_start)
                if overflow:
                    limit_hit = "depth" if last_level else "states"
                    if not last_level:
                        raise _Stop
                if ticker.out_of_time():
                    limit_hit = "time"
                    raise _Stop
                ticker.maybe_update(lambda: Stats(len(visited), generated + sum(gen_cov.values()), level,
                                                  len(frontier) - chunk_end + len(next_frontier),
                                                  ticker.elapsed()), level)
            visited.end_level()
            if next_frontier:
                level += 1
            frontier, frontier_fps = next_frontier, next_fps
            next_frontier = []
            chunk_end = 0
        queue = 0
    except _Stop:
        _count(gen_cov, actions)  # the steps generated in the chunk so far
        # The chunk that stopped the run counts as expanded (its successors were generated).
        queue = len(frontier) - chunk_end + len(next_frontier)
        if next_frontier:
            level += 1
        visited.end_level()

    generated += sum(gen_cov.values())
    stats = Stats(distinct=len(visited), generated=generated, depth=level, queue=queue,
                  elapsed=ticker.elapsed(), coverage=build_coverage(machine, gen_cov, new_cov))
    violations = [_to_violation(machine, visited, f, symmetry) for f in found]
    visited.close()
    ticker.finish(stats)
    return Result(verdict=verdict_of(violations, limit_hit), strategy="bfs", stats=stats,
                  violations=violations, limit_hit=limit_hit, notes=limit_notes(limit_hit, options))


def _count(coverage: dict[str, int], actions: list[str]) -> None:
    """Add ``actions`` to the per-action generated counts and empty it."""
    for action, n in Counter(actions).items():
        coverage[action] = coverage.get(action, 0) + n
    actions.clear()


def _to_violation(machine: Machine, visited: CompactVisited, f: _Found, symmetry: bool) -> Violation:
    chain = [h & MASK64 for h in visited.chain(f.fp, f.level)]
    trace = rebuild_trace(machine, chain, symmetry)
    if f.kind == "transition":
        trace.append(TraceStep(f.step, f.state))
    return Violation(property=f.name, kind=f.kind, trace=trace, found_length=len(trace),
                     shortened_by="bfs (shortest)")
