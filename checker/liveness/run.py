"""Where liveness joins a run: after the safety engine (if it has anything to check), on its own graph."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..machine import Machine
from ..result import Result

if TYPE_CHECKING:
    from ..explore.options import ExploreOptions
    from ..progress import Progress


def explore_with_liveness(machine: Machine, options: ExploreOptions, progress: Progress | None,
                          dispatch: Callable[[Machine, ExploreOptions, Progress | None], Result]) -> Result:
    """The safety run as ``dispatch`` does it, then the temporal properties ``options.temporal``.

    A safety violation under stop-at-first, or a safety run cut short, ends the run before the
    liveness check (a temporal verdict needs the whole graph)."""
    from . import check_liveness

    wants_safety = options.properties is None or bool(options.properties) or options.check_deadlock
    result: Result | None = None
    if wants_safety:
        result = dispatch(machine, options, progress)
        if (result.violations and options.stop_at_first) or result.limit_hit:
            return result
    live = check_liveness(machine, options.temporal, symmetry=options.symmetry,
                          max_states=options.max_states, max_seconds=options.max_seconds,
                          max_depth=options.max_depth, stop_at_first=options.stop_at_first)
    if result is None:
        if progress is not None:
            progress.finish(live.stats)
        return live
    result.violations.extend(live.violations)
    result.notes.extend(live.notes)
    result.stats.elapsed += live.stats.elapsed  # the run's time is both passes
    if live.violations:
        result.verdict = "violated"
    elif live.verdict == "incomplete" and result.verdict == "holds":
        result.verdict, result.limit_hit = "incomplete", live.limit_hit
    return result
