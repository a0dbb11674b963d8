"""Where liveness joins a run: in the BFS engine's own walk when it can (``onepass``), else after
the safety engine (if it has anything to check), on a graph of its own."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..machine import Machine
from ..result import Result, Stats
from .graph import LivenessError

if TYPE_CHECKING:
    from ..explore.options import ExploreOptions
    from ..progress import Progress


def two_pass_reason(options: ExploreOptions) -> str | None:
    """Why a run that checks safety and liveness explores twice (None: it explores once)."""
    if options.strategy != "bfs":
        return f"the {options.strategy} engine keeps no graph for it"
    if options.view is not None:
        return f"the view {options.view!r} is not applied to the liveness graph"
    if options.record_edges:
        return "the run records its edges"
    return None


def explore_with_liveness(machine: Machine, options: ExploreOptions, progress: Progress | None,
                          dispatch: Callable[[Machine, ExploreOptions, Progress | None], Result], *,
                          one_pass: bool = True) -> Result:
    """The safety run as ``dispatch`` does it, and the temporal properties ``options.temporal``.

    With the BFS engine both are one walk (``onepass``); otherwise (or ``one_pass=False``, which
    the tests compare it with) the safety run comes first, then the liveness graph is explored. A
    safety violation under stop-at-first, or a safety run cut short, ends the run before the
    liveness check (a temporal verdict needs the whole graph)."""
    from . import check_liveness

    wants_safety = options.properties is None or bool(options.properties) or options.check_deadlock
    reason = two_pass_reason(options) if wants_safety else None
    if wants_safety and one_pass and reason is None:
        from .onepass import explore_bfs_with_liveness
        try:
            return explore_bfs_with_liveness(machine, options, progress)
        except LivenessError:
            # The liveness check refuses this machine/options. Two passes would have reported a
            # safety verdict that ends the run first: run the engine for it, else refuse.
            if progress is not None:
                progress.finish(Stats())
            safety = dispatch(machine, options, progress)
            if (safety.violations and options.stop_at_first) or safety.limit_hit:
                return safety
            raise
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
    if one_pass and reason is not None:
        result.notes.append(f"liveness: explored twice, safety then the liveness graph ({reason}; "
                            "the bfs engine checks both in one pass)")
    result.stats.elapsed += live.stats.elapsed  # the run's time is both passes
    if live.violations:
        result.verdict = "violated"
    elif live.verdict == "incomplete" and result.verdict == "holds":
        result.verdict, result.limit_hit = "incomplete", live.limit_hit
    return result
