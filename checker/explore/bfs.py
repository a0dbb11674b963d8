"""Breadth-first exploration (TLC's default mode): complete, with shortest counterexamples.

Level-synchronous: the frontier holds the states of one level (distance from the initial states);
only fingerprints (``checker.fingerprint``: of the canonical state, or of its view) and parent
links stay in memory for states already expanded, in flat buffers (``compact.CompactVisited``: a fingerprint table slot plus 12
bytes of parent link per state; ``visited.VisitedSet`` is the plain-Python reference it is tested
against); parent links past ``PARENT_SPILL_BYTES`` go to a temporary file. Counterexample traces
are rebuilt at the end by re-executing the machine along the parent chain
(``checker.trace.rebuild_trace``). The frontier names its states by their discovery index in
the compact store (``CompactVisited.name_by_index``), so a level's parent links are stored as
they come; by fingerprint where the store cannot (``VisitedSet``) or edges are recorded.

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

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..machine import Machine
from ..result import Result, Stats
from ..trace import to_violation
from .common import Ticker, build_coverage, limit_notes, verdict_of
from .compact import CompactVisited
from .expand import Expander, add_counts, count_all, count_new
from .options import ExploreOptions
from .stores import EdgeStore, LevelQueue, LevelStore

if TYPE_CHECKING:
    from ..progress import Progress

#: parent links kept in RAM at most (12 bytes per state); older levels go to a temporary file
PARENT_SPILL_BYTES = 512 << 20

#: parents expanded between dedup batches, time-limit checks and progress updates
CHUNK = 2048

#: states and successors of each level checked for stable types and the fingerprint's domain
SAMPLE = 64


class _Stop(Exception):
    """Raised to leave every level of the loop at once (first violation found)."""


def _compact_store() -> LevelStore:
    # no recent levels: the BFS filters duplicates through its own per-level sets (``explore_bfs``)
    return CompactVisited(recent_levels=0, spill_bytes=PARENT_SPILL_BYTES)


#: the BFS's visited set and parent links (``stores.LevelStore``); ``visited.VisitedSet`` fits too
STORE: Callable[[], LevelStore] = _compact_store


def explore_bfs(machine: Machine, options: ExploreOptions, progress: Progress | None = None) -> Result:
    expander = Expander(machine, options.properties, symmetry=options.symmetry, view=options.view,
                        check_deadlock=options.check_deadlock, stop_at_first=options.stop_at_first)
    fpr = expander.fp
    max_states = options.max_states
    max_depth = options.max_depth

    visited = STORE()
    # The early duplicate filter, as a parallel worker keeps it: the fingerprints of this level's
    # candidates (``seen``, which ``expand_chunk`` fills) and of the previous level's (``known``).
    # Every one of them was inserted into ``visited`` (or the run stops), so dropping a successor
    # found there is exact, and the candidates of a level stay distinct across its chunks. Kept
    # here rather than in the store: a store's rolling set of its recent levels costs an insert per
    # new state and, two levels later, a list of fresh ints and a removal per state, in a set of
    # three levels (perf25b: about 500 instructions per state on kafka.eos; a worker pays none).
    known: set[int] = set()
    seen: set[int] = set()
    edges = EdgeStore() if options.record_edges else None
    # states named by their discovery index where the store can (edges name parents by fingerprint)
    name_by_index: Callable[[], bool] | None = getattr(visited, "name_by_index", None)
    by_index = edges is None and name_by_index is not None and name_by_index()
    next_index: Callable[[], int] = getattr(visited, "next_index", lambda: 0)
    found = expander.found
    gen_cov: dict[str, int] = {}  # generated per action; their sum is the generated count
    new_cov: dict[str, int] = {}
    out_cov: dict[str, int] = {}  # of gen_cov, cut by the state constraint
    generated = 0  # initial states; successors are summed from gen_cov at the end
    level = 1
    limit_hit: str | None = None
    ticker = Ticker(progress, "bfs", options.max_seconds)
    queue = LevelQueue([], [])
    chunk_edges: list[tuple[int, int, object]] | None = [] if edges is not None else None

    try:
        # ---- level 1: the initial states
        generated, init_states, init_fps = expander.init_states()
        room = max_states if max_states is not None else None
        expander.check_sample(init_states, SAMPLE)
        base = next_index() if by_index else 0
        new, overflow = visited.insert_batch(init_fps, [-1] * len(init_fps) if by_index else init_fps, room)
        if overflow:
            limit_hit = "states"
        for j, i in enumerate(new):
            state = init_states[i]
            ref = base + j if by_index else init_fps[i]
            queue.states.append(state)
            queue.refs.append(ref)
            # state by state: the first initial state breaking any property is the one reported
            expander.check_invariants([state], [ref], 1)
            if expander.stopped:
                raise _Stop
        visited.end_level()
        if limit_hit:
            raise _Stop

        # ---- the levels after it
        while queue.states:
            last_level = max_depth is not None and level >= max_depth
            expander.check_sample(queue.states[:SAMPLE], SAMPLE)
            for chunk_start, chunk_end in queue.chunks(CHUNK):
                states, refs = queue.take(chunk_start, chunk_end)
                cand = expander.expand_chunk(states, refs, level, known, seen, edges=chunk_edges, dedup=True)
                if edges is not None and chunk_edges:
                    edges.add(chunk_edges)
                    chunk_edges.clear()
                add_counts(gen_cov, cand.gen_cov)
                if cand.outside:
                    add_counts(out_cov, cand.outside)
                if cand.stopped:
                    raise _Stop
                if last_level:
                    room = 0
                elif max_states is not None:
                    room = max_states - len(visited)
                else:
                    room = None
                # a level's candidates are distinct: ``seen`` keeps each fingerprint once
                base = next_index() if by_index else 0
                new, overflow = visited.insert_batch(cand.fps, cand.parents, room, distinct=True)
                if len(new) == len(cand.states):
                    # every candidate is new (the usual chunk: the filter dropped the level's and
                    # the previous level's duplicates): the candidate lists as they are
                    new_states = cand.states
                    new_refs = list(range(base, base + len(new))) if by_index else cand.fps
                    count_all(new_cov, cand.steps)
                elif new:
                    new_states = list(map(cand.states.__getitem__, new))
                    new_refs = list(range(base, base + len(new))) if by_index else list(map(cand.fps.__getitem__, new))
                    count_new(new_cov, cand.steps, new)
                if new:
                    queue.push(new_states, new_refs)
                    expander.check_invariants(new_states, new_refs, level + 1)
                    if expander.stopped:
                        raise _Stop
                queue.release(chunk_start, chunk_end)
                if overflow:
                    limit_hit = "depth" if last_level else "states"
                    if not last_level:
                        raise _Stop
                if ticker.out_of_time():
                    limit_hit = "time"
                    raise _Stop
                ticker.maybe_update(lambda level=level: Stats(len(visited), generated + sum(gen_cov.values()),  # type: ignore[misc]
                                                              level, queue.left(), ticker.elapsed()), level)
            visited.end_level()
            known, seen = seen, set()
            if queue.next_states:
                level += 1
            queue.advance()
        left = 0
    except _Stop:
        # The chunk that stopped the run counts as expanded (its successors were generated).
        left = queue.left()
        if queue.next_states:
            level += 1
        visited.end_level()

    generated += sum(gen_cov.values())
    stats = Stats(distinct=len(visited), generated=generated, depth=level, queue=left,
                  elapsed=ticker.elapsed(), coverage=build_coverage(machine, gen_cov, new_cov, out_cov),
                  observed_collision=visited.observed_collision())
    violations = [to_violation(machine, visited.chain_index(f.ref) if by_index else visited.chain(f.ref, f.level),  # type: ignore[attr-defined]
                               f, fpr) for f in found]
    visited.close()
    ticker.finish(stats)
    result = Result(verdict=verdict_of(violations, limit_hit), strategy="bfs", stats=stats,
                    violations=violations, limit_hit=limit_hit, notes=limit_notes(limit_hit, options))
    result.edges = edges
    return result
