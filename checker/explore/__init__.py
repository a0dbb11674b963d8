"""Exploration entry point: one function that dispatches on ``ExploreOptions.strategy`` through
the registry (``options.STRATEGIES``).

Engines are imported lazily: the parallel and Spark engines pull in multiprocessing set-up and
PySpark, which a plain BFS run should not pay for (PySpark alone takes seconds to import).
"""

from __future__ import annotations

import gc
import importlib
from typing import TYPE_CHECKING

from ..machine import Machine
from ..result import Result, Stats
from .options import STRATEGIES, ExploreOptions

if TYPE_CHECKING:
    from ..progress import Progress

__all__ = ["STRATEGIES", "ExploreOptions", "explore"]


def explore(machine: Machine, options: ExploreOptions, progress: Progress | None = None) -> Result:
    """Explore ``machine``'s state space as ``options`` says and return the verdict with statistics."""
    strategy = options.strategy
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; valid strategies: {', '.join(STRATEGIES)}")
    from ..state_view import resolve_view
    view = resolve_view(machine, options.view)  # an unknown name fails here, before any work
    # The cyclic GC would repeatedly walk the millions of state tuples an exploration keeps alive
    # (measured: 15-40% of the run, growing with size); engines create no reference cycles, so
    # it is paused for the run and restored after. Not for Spark, whose py4j bridge makes cycles.
    was_enabled = gc.isenabled()
    if STRATEGIES[strategy].pause_gc:
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
    result.view = view.describe() if view is not None else None
    if options.record_graph and getattr(result, "graph", None) is None:
        from ..graph import attach_graph
        attach_graph(machine, options, result)
    return result


def _dispatch(machine: Machine, options: ExploreOptions, progress: Progress | None) -> Result:
    strategy = STRATEGIES[options.strategy]
    # a bare name is a module of this package; a dotted one is imported as it is (plug-ins, tests)
    path = strategy.module if "." in strategy.module else f"{__name__}.{strategy.module}"
    module = importlib.import_module(path)
    result: Result = getattr(module, strategy.function)(machine, options, progress)
    return result
