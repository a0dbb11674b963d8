"""Depth-first exploration with an optional depth bound (``ExploreOptions.max_depth``).

Uses far less frontier memory than BFS on deep spaces and finds deep bugs early, but its traces
are not shortest: each violation's trace is shortened afterwards (``checker.trace.shorten_trace``)
and both lengths are reported (``found_length`` and the trace's own length).

Depth is counted in states, as traces are (the initial state is at depth 1). With a bound, a
state first reached deep and later reached by a shorter path is expanded again from the shallower
depth (the visited map keeps the smallest depth per fingerprint): otherwise a plain visited set
would wrongly prune states the bound allows. The verdict is "holds" only if the run finished and
every successor the bound cut off was reached by a shorter path after all (so the visited set is
closed under successors); otherwise "incomplete" with ``limit_hit``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..fingerprint import observed_collision_probability
from ..machine import Machine
from ..result import Result, Stats, TraceStep, ViolationKind
from .common import Ticker, build_coverage, limit_notes, shortened_violation, verdict_of
from .expand import Expander
from .options import ExploreOptions

if TYPE_CHECKING:
    from ..liveness.dfs_graph import DfsRecorder
    from ..progress import Progress

_CHECK_EVERY = 4096  # steps between time-limit checks and progress updates


def explore_dfs(machine: Machine, options: ExploreOptions, progress: Progress | None = None,
                recorder: DfsRecorder | None = None) -> Result:
    """The DFS run; ``recorder`` (``checker.liveness.dfs_graph``) also records the liveness graph on
    the way (one pass with safety): it sees each kept state and each state's first expansion, and
    hands the engine the same items in the same order, so the run is the same."""
    expander = Expander(machine, options.properties, symmetry=options.symmetry, view=options.view,
                        check_deadlock=options.check_deadlock, stop_at_first=options.stop_at_first)
    fpr = expander.fp
    bound = options.max_depth
    max_states = options.max_states
    ticker = Ticker(progress, "dfs", options.max_seconds)

    seen: dict[int, int] = {}  # fingerprint -> smallest depth it was expanded at
    gen_cov: dict[str, int] = {}
    out_cov: dict[str, int] = {}  # of gen_cov, cut by the state constraint
    new_cov: dict[str, int] = {}
    generated = 0  # initial states; successors are summed from gen_cov
    max_seen_depth = 0
    limit_hit: str | None = None
    # fingerprints of successors cut off by the bound; the run is complete only if every one of
    # them was reached later by a path within the bound (then the seen set is closed)
    cut: set[int] = set()
    found: list[tuple[str, ViolationKind, list[TraceStep]]] = []
    reported = 0  # expander.found[:reported] have their traces in ``found``
    # stack frames: [state, step that led here, successor iterator, depth]
    stack: list[list[Any]] = []

    def expand(state: Any, h: int, d: int, first: bool) -> Iterator[tuple[Any, Any, int]]:
        if recorder is None:
            return expander.expand_one(state, h, d, gen_cov, outside=out_cov)
        if first:  # a new node: record it, and its edges on this (its first) expansion
            recorder.add(state, h)
            return recorder.expand(state, h, expander.expand_one(state, h, d, gen_cov, out_of_bounds=True,
                                                                 outside=out_cov))
        return expander.expand_one(state, h, d, gen_cov, outside=out_cov)

    def path() -> list[TraceStep]:
        return [TraceStep(f[1], f[0]) for f in stack]

    def take_findings() -> bool:
        """Give the expander's new findings their traces (the stack is the path to them);
        True if the run must stop."""
        nonlocal reported
        for p in expander.found[reported:]:
            trace = path()
            if p.kind == "transition":
                trace.append(TraceStep(p.step, p.state))
            found.append((p.name, p.kind, trace))
        reported = len(expander.found)
        return expander.stopped

    stop = False
    init_generated, inits, init_fps = expander.init_states()
    expander.check_sample(inits)
    if recorder is not None:
        recorder.initial(init_fps)
    generated += init_generated
    for init, h in zip(inits, init_fps):
        if stop:
            break
        # an initial state already reached deeper, as another initial state's successor, is
        # expanded again from depth 1: the bound allows more below it from here
        first = h not in seen
        if not first and (bound is None or seen[h] <= 1):
            continue
        fpr.check(init)
        if first and max_states is not None and len(seen) >= max_states:
            limit_hit = "states"
            break
        seen[h] = 1
        stack.append([init, None, expand(init, h, 1, first), 1])
        max_seen_depth = max(max_seen_depth, 1)
        if first:
            expander.check_invariants([init], [h], 1)
            stop = take_findings()
        steps = 0
        while stack and not stop:
            frame = stack[-1]
            item = next(frame[2], None)
            if len(expander.found) > reported:  # a transition on the way, or a deadlock at the end
                stop = take_findings()
                if stop:
                    break
            if item is None:
                stack.pop()
                continue
            step, nxt, h = item
            d = frame[3] + 1
            old = seen.get(h)
            if old is not None and (bound is None or old <= d):
                continue
            if bound is not None and d > bound:
                cut.add(h)
                continue
            if old is None:
                if max_states is not None and len(seen) >= max_states:
                    limit_hit = "states"
                    break
                action = step[0]
                new_cov[action] = new_cov.get(action, 0) + 1
            seen[h] = d
            stack.append([nxt, step, expand(nxt, h, d, old is None), d])
            max_seen_depth = max(max_seen_depth, d)
            if old is None:
                expander.check_invariants([nxt], [h], d)
                stop = take_findings()
            steps += 1
            if steps % _CHECK_EVERY == 0:
                expander.check_sample([nxt], 16)  # the fingerprint's domain, deep in the run too
                if ticker.out_of_time():
                    limit_hit = "time"
                    break
                ticker.maybe_update(lambda: Stats(len(seen), generated + sum(gen_cov.values()),
                                                  max_seen_depth, len(stack), ticker.elapsed()),  # noqa: B023 - maybe_update calls it at once
                                    None, f"stack {len(stack)}")
        if limit_hit or stop:
            break

    if limit_hit is None and any(h not in seen for h in cut):
        limit_hit = "depth"
    generated += sum(gen_cov.values())
    stats = Stats(distinct=len(seen), generated=generated, depth=max_seen_depth, queue=len(stack),
                  elapsed=ticker.elapsed(), coverage=build_coverage(machine, gen_cov, new_cov, out_cov),
                  observed_collision=observed_collision_probability(list(seen)))
    violations = [shortened_violation(machine, name, kind, trace, fpr)
                  for name, kind, trace in found]
    ticker.finish(stats)
    return Result(verdict=verdict_of(violations, limit_hit), strategy="dfs", stats=stats,
                  violations=violations, limit_hit=limit_hit,
                  notes=limit_notes(limit_hit, options, depth_bound=bound))

