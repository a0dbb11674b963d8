"""Where liveness joins a run: in the BFS engine's own walk when it can (``onepass``), in the DFS
engine's run (it records the graph, ``dfs_graph``), on each random walk for ``simulate``
(``walks``: lassos of the walks, never an exhaustive graph), else (``spark``, a view, recorded
edges) after the safety engine (if it has anything to check), on a graph of its own.

The ``parallel`` engine takes the one-pass walk too (in this process): the liveness graph is built
by one process whichever engine checks safety, and that walk *is* a BFS safety run, so starting
workers beside it only adds their work; the result is the BFS one pass's (``parallel``'s own
differences from the BFS, documented in ``checker.explore.parallel``, do not arise).

A run with a view keeps two passes: the liveness graph is never the view's (see ``VIEW_REASON``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..machine import Machine
from ..result import Result, Stats
from ..state_view import resolve_view
from .graph import LivenessError

if TYPE_CHECKING:
    from ..explore.options import ExploreOptions
    from ..progress import Progress


#: engines whose safety run the one-pass BFS walk reproduces (a single-process BFS)
ONE_PASS_ENGINES = ("bfs", "parallel")
#: engines that check the temporal properties in one pass of their own: the DFS records the graph
#: as it runs (``onepass.explore_dfs_with_liveness``)
OWN_ONE_PASS = ("dfs",)
#: engines that judge the temporal properties on each random walk (``checker.liveness.walks``)
WALK_ENGINES = ("simulate",)

#: why a view keeps two passes (the run's note and docs/liveness.md say it)
VIEW_REASON = ("a view may merge states that behave differently, so a temporal verdict on the view's "
               "graph could miss or invent a violation: the liveness graph is explored without it")


def two_pass_reason(machine: Machine, options: ExploreOptions) -> str | None:
    """Why a run that checks safety and liveness explores twice (None: it explores once)."""
    if options.strategy not in ONE_PASS_ENGINES + OWN_ONE_PASS:
        return f"the {options.strategy} engine keeps no graph for it"
    # The safety run deduplicates on the view (a spec's or --view's, else the machine's default);
    # the liveness graph cannot (VIEW_REASON), so the two graphs differ and one walk is not both.
    view = resolve_view(machine, options.view)
    if view is not None:
        return f"the view {view.name!r} is applied to the safety run only; {VIEW_REASON}"
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

    if options.strategy in WALK_ENGINES:
        # judged on the walks (liveness-only runs too): an exhaustive graph is what simulate avoids
        from ..explore.simulate import explore_simulate
        return explore_simulate(machine, options, progress, temporal=True)
    wants_safety = options.properties is None or bool(options.properties) or options.check_deadlock
    reason = two_pass_reason(machine, options) if wants_safety else None
    if wants_safety and one_pass and reason is None:
        from .onepass import explore_bfs_with_liveness, explore_dfs_with_liveness
        try:
            if options.strategy in OWN_ONE_PASS:
                return explore_dfs_with_liveness(machine, options, progress)
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
                            "the bfs, parallel and dfs engines check both in one pass)")
    result.stats.elapsed += live.stats.elapsed  # the run's time is both passes
    if live.violations:
        result.verdict = "violated"
    elif live.verdict == "incomplete" and result.verdict == "holds":
        result.verdict, result.limit_hit = "incomplete", live.limit_hit
    return result
