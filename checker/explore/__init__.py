"""Exploration entry point: one function that dispatches on ``ExploreOptions.strategy``.

The parallel and Spark engines are imported lazily: they pull in multiprocessing set-up and
PySpark, which a plain BFS run should not pay for (PySpark alone takes seconds to import).
"""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING

from ..machine import Machine
from ..result import Result, Stats
from .options import STRATEGIES, ExploreOptions

if TYPE_CHECKING:
    from ..progress import Progress

__all__ = ["ExploreOptions", "explore", "STRATEGIES"]


def explore(machine: Machine, options: ExploreOptions, progress: Progress | None = None) -> Result:
    """Explore ``machine``'s state space as ``options`` says and return the verdict with statistics."""
    strategy = options.strategy
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; valid strategies: {', '.join(STRATEGIES)}")
    # The cyclic GC would repeatedly walk the millions of state tuples an exploration keeps alive
    # (measured: 15-40% of the run, growing with size); engines create no reference cycles, so
    # it is paused for the run and restored after. Not for Spark, whose py4j bridge makes cycles.
    was_enabled = gc.isenabled()
    if strategy != "spark":
        gc.disable()
    try:
        if options.temporal:
            from ..liveness.run import explore_with_liveness
            result = explore_with_liveness(machine, options, progress, _dispatch)
        else:
            result = _dispatch(machine, options, progress)
    except BaseException:
        # Leave the terminal usable (a live display hides the cursor) before the error surfaces.
        if progress is not None:
            progress.finish(Stats())
        raise
    finally:
        if was_enabled:
            gc.enable()
    if options.symmetry and machine.has_symmetry():
        from ..symmetry import describe
        result.symmetry = describe(machine)
    if options.record_graph and getattr(result, "graph", None) is None:
        from ..graph import attach_graph
        attach_graph(machine, options, result)
    return result


def _dispatch(machine: Machine, options: ExploreOptions, progress: Progress | None) -> Result:
    strategy = options.strategy
    if strategy == "bfs":
        from .bfs import explore_bfs
        result = explore_bfs(machine, options, progress)
    elif strategy == "dfs":
        from .dfs import explore_dfs
        result = explore_dfs(machine, options, progress)
    elif strategy == "simulate":
        from .simulate import explore_simulate
        result = explore_simulate(machine, options, progress)
    elif strategy == "parallel":
        from .parallel import explore_parallel
        result = explore_parallel(machine, options, progress)
    elif strategy == "spark":
        from .spark import explore_spark
        result = explore_spark(machine, options, progress)
    else:  # pragma: no cover - explore() validated the name
        raise ValueError(f"unknown strategy {strategy!r}")
    return result
