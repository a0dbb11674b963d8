"""Ticker.maybe_update evaluates its stats builder before it returns.

The engines (bfs, dfs, parallel, simulate) pass it lambdas that read the loop's variables, and
ruff's B023 check is silenced at those calls on this ground: a builder kept and called later would
report a later iteration's values.
"""

from __future__ import annotations

from eoscheck.checker.explore.common import Ticker
from eoscheck.checker.progress import Progress
from eoscheck.checker.result import Stats


class Recorder(Progress):
    def __init__(self) -> None:
        self.seen: list[tuple[int, int | None]] = []

    def update(self, stats: Stats, level: int | None = None, note: str = "") -> None:
        self.seen.append((stats.distinct, level))


def test_maybe_update_builds_the_stats_of_the_iteration_that_calls_it() -> None:
    progress = Recorder()
    ticker = Ticker(progress, "test", None)
    for level in range(1, 4):
        ticker._next_update = 0.0  # an update is due at every call
        ticker.maybe_update(lambda: Stats(distinct=10 * level), level)  # noqa: B023 - the point of the test
    assert progress.seen == [(10, 1), (20, 2), (30, 3)]


def test_maybe_update_without_progress_never_builds_stats() -> None:
    calls: list[int] = []
    ticker = Ticker(None, "test", None)
    ticker.maybe_update(lambda: calls.append(1) or Stats())
    assert calls == []
