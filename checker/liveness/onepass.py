"""Safety and liveness in one walk (TLC's way): the liveness graph's walk checks the invariants,
transition properties and deadlock as the BFS engine does, and the engine's own run is skipped;
with the DFS engine, the engine's own run records the graph (``explore_dfs_with_liveness``).

``graph.build_graph`` walks as ``checker.explore.bfs.explore_bfs`` does (levels, chunks of parents,
the first occurrence of a fingerprint kept, the limits) and checks on the way through the same
expansion core, so this run reports what the engine then the liveness check would: the same first
finding under stop-at-first, the same shortest trace (rebuilt from the graph's BFS tree, which is
the engine's parent links), the same distinct, generated, depth and queue figures, the same limit.
Only when the walk reaches its end without a finding that stops the run are the temporal
properties checked on the graph, as after the engine's run.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

from ..explore.common import Ticker, build_coverage, limit_notes, verdict_of
from ..explore.expand import Expander
from ..fingerprint import observed_collision_probability
from ..machine import Machine
from ..result import Result, Stats
from ..state_view import NO_VIEW
from ..trace import to_violation
from . import prepare, summary_note, temporal_violations
from .graph import build_graph

if TYPE_CHECKING:
    from ..explore.options import ExploreOptions
    from ..progress import Progress

#: how the liveness line of a one-pass run says so
ONE_PASS = " in the safety BFS (one pass)"
ONE_PASS_DFS = " in the safety DFS (one pass)"


def explore_bfs_with_liveness(machine: Machine, options: ExploreOptions, progress: Progress | None = None
                              ) -> Result:
    """The BFS engine's result for ``options`` (no view in force, ``run.two_pass_reason``) with the
    temporal properties ``options.temporal`` checked on the graph the same walk recorded. Asked
    for the ``parallel`` engine (``run.ONE_PASS_ENGINES``) it is the same walk in this process."""
    props, fairness, preds, wanted = prepare(machine, options.temporal)
    # NO_VIEW: the liveness graph is never a view's (run.VIEW_REASON); a run with one has two passes
    expander = Expander(machine, options.properties, symmetry=options.symmetry, view=NO_VIEW,
                        check_deadlock=options.check_deadlock, stop_at_first=options.stop_at_first)
    ticker = Ticker(progress, "bfs", options.max_seconds)
    g = build_graph(machine, fairness, preds, symmetry=options.symmetry, max_states=options.max_states,
                    max_seconds=options.max_seconds, max_depth=options.max_depth, expander=expander,
                    ticker=ticker)
    built = ticker.elapsed()
    violations = [to_violation(machine, g.chain(f.ref), f, expander.fp) for f in expander.found]
    notes = limit_notes(g.limit_hit, options)
    # an incomplete walk (a finding under stop-at-first, a limit) ends the run before liveness
    if g.complete:
        violations += temporal_violations(machine, g, wanted, options.stop_at_first)
        notes.append(summary_note(props, fairness, g, built, ticker.elapsed() - built, ONE_PASS))
    kept = np.frombuffer(g.fps, dtype=np.uint64)[:g.distinct]
    stats = Stats(distinct=g.distinct, generated=g.generated, depth=g.depth, queue=g.queue,
                  elapsed=ticker.elapsed(),
                  coverage=build_coverage(machine, g.coverage, g.new_coverage, g.outside),
                  observed_collision=observed_collision_probability(kept))
    if options.strategy != "bfs":
        notes.append(f"{options.strategy}: no worker process started; the liveness graph is built in one "
                     "process, and that walk is the safety run too (one pass, the bfs engine's result)")
    ticker.finish(stats)
    return Result(verdict=verdict_of(violations, g.limit_hit), strategy=options.strategy, stats=stats,
                  violations=violations, limit_hit=g.limit_hit, notes=notes)


def explore_dfs_with_liveness(machine: Machine, options: ExploreOptions, progress: Progress | None = None
                              ) -> Result:
    """The DFS engine's result for ``options`` (no view in force) with the temporal properties
    checked on the graph its run recorded (``dfs_graph.DfsRecorder``). The temporal properties are
    checked exactly when two passes would have built the liveness graph: the run ended without a
    finding that stops it and without a limit. The lasso is ``check.find_lasso``'s on the same
    graph as the BFS walk's, so it has the BFS one pass's shape and length (shortest stem), not a
    DFS path's (see docs/liveness.md)."""
    from ..explore.dfs import explore_dfs
    from .dfs_graph import DfsRecorder

    props, fairness, preds, wanted = prepare(machine, options.temporal)
    recorder = DfsRecorder(machine, fairness, preds, symmetry=options.symmetry)
    result = explore_dfs(machine, options, progress, recorder=recorder)
    if (result.violations and options.stop_at_first) or result.limit_hit:
        return result
    start = time.perf_counter()
    g = recorder.graph()
    if g is None:  # (the engine reports a depth limit whenever a cut state was never kept)
        raise AssertionError("the DFS run is complete but its graph has an edge to a state it never kept")
    built = result.stats.elapsed + time.perf_counter() - start
    found = temporal_violations(machine, g, wanted, options.stop_at_first)
    result.violations.extend(found)
    if found:
        result.verdict = "violated"
    total = result.stats.elapsed + time.perf_counter() - start
    result.notes.append(summary_note(props, fairness, g, built, total - built, ONE_PASS_DFS))
    result.stats.elapsed = total
    return result
