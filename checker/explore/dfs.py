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

from typing import TYPE_CHECKING, Any

from ..fingerprint import check_state
from ..machine import Machine
from ..result import Result, Stats, TraceStep
from .common import (Ticker, build_coverage, limit_notes, select_properties,
                     shortened_violation, verdict_of)
from .options import ExploreOptions

if TYPE_CHECKING:
    from ..progress import Progress

_CHECK_EVERY = 4096  # steps between time-limit checks and progress updates


def explore_dfs(machine: Machine, options: ExploreOptions, progress: Progress | None = None) -> Result:
    invariants, transitions = select_properties(machine, options.properties)
    symmetry = options.symmetry and machine.has_symmetry()
    canonical = machine.canonical
    within = machine.within_bounds
    successors = machine.successors
    is_terminal = machine.is_terminal
    bound = options.max_depth
    max_states = options.max_states
    ticker = Ticker(progress, "dfs", options.max_seconds)

    seen: dict[int, int] = {}  # fingerprint -> smallest depth it was expanded at
    gen_cov: dict[str, int] = {}
    new_cov: dict[str, int] = {}
    generated = 0
    max_seen_depth = 0
    limit_hit: str | None = None
    # fingerprints of successors cut off by the bound; the run is complete only if every one of
    # them was reached later by a path within the bound (then the seen set is closed)
    cut: set[int] = set()
    found: list[tuple[str, str, list[TraceStep]]] = []
    violated: set[str] = set()
    # stack frames: [state, step that led here, successor iterator, depth, successors seen]
    stack: list[list[Any]] = []

    def path() -> list[TraceStep]:
        return [TraceStep(f[1], f[0]) for f in stack]

    def report(name: str, kind: str, trace: list[TraceStep]) -> bool:
        """Record a violation; True if the run must stop."""
        found.append((name, kind, trace))
        violated.add(name)
        return options.stop_at_first

    stop = False
    for init in machine.init_states():
        generated += 1
        if stop or not within(init):
            continue
        h = hash(canonical(init)) if symmetry else hash(init)
        if h in seen:
            continue
        check_state(init)
        if max_states is not None and len(seen) >= max_states:
            limit_hit = "states"
            break
        seen[h] = 1
        stack.append([init, None, iter(successors(init)), 1, 0])
        max_seen_depth = max(max_seen_depth, 1)
        for name, check in invariants:
            if name not in violated and not check(init):
                stop = report(name, "invariant", path()) or stop
        steps = 0
        while stack and not stop:
            frame = stack[-1]
            state, _, it, depth, _ = frame
            nxt_pair = next(it, None)
            if nxt_pair is None:
                if (frame[4] == 0 and options.check_deadlock and "deadlock" not in violated
                        and not is_terminal(state)):
                    stop = report("deadlock", "deadlock", path())
                stack.pop()
                continue
            frame[4] += 1
            step, nxt = nxt_pair
            generated += 1
            action = step[0]
            gen_cov[action] = gen_cov.get(action, 0) + 1
            if not within(nxt):
                continue
            for name, check in transitions:
                if name not in violated and not check(state, step, nxt):
                    stop = report(name, "transition", path() + [TraceStep(step, nxt)]) or stop
            if stop:
                break
            h = hash(canonical(nxt)) if symmetry else hash(nxt)
            d = depth + 1
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
                new_cov[action] = new_cov.get(action, 0) + 1
            seen[h] = d
            stack.append([nxt, step, iter(successors(nxt)), d, 0])
            if d > max_seen_depth:
                max_seen_depth = d
            if old is None:
                for name, check in invariants:
                    if name not in violated and not check(nxt):
                        stop = report(name, "invariant", path()) or stop
            steps += 1
            if steps % _CHECK_EVERY == 0:
                if ticker.out_of_time():
                    limit_hit = "time"
                    break
                ticker.maybe_update(lambda: Stats(len(seen), generated, max_seen_depth, len(stack),
                                                  ticker.elapsed()), None, f"stack {len(stack)}")
        if limit_hit or stop:
            break

    if limit_hit is None and any(h not in seen for h in cut):
        limit_hit = "depth"
    stats = Stats(distinct=len(seen), generated=generated, depth=max_seen_depth, queue=len(stack),
                  elapsed=ticker.elapsed(), coverage=build_coverage(machine, gen_cov, new_cov))
    violations = [shortened_violation(machine, name, kind, trace, symmetry)
                  for name, kind, trace in found]
    ticker.finish(stats)
    return Result(verdict=verdict_of(violations, limit_hit), strategy="dfs", stats=stats,
                  violations=violations, limit_hit=limit_hit,
                  notes=limit_notes(limit_hit, options, depth_bound=bound))
