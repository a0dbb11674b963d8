"""Progress reporters: plain lines for logs, silence when disabled, nothing on stdout."""

from __future__ import annotations

import io

from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.progress import (
    LiveProgress,
    PlainProgress,
    Progress,
    make_progress,
)
from eoscheck.checker.result import Stats
from eoscheck.examples.twophase import TwoPhase


def test_make_progress_picks_by_terminal(monkeypatch):
    assert type(make_progress(enabled=False)) is Progress
    monkeypatch.setattr("sys.stderr", io.StringIO())
    assert isinstance(make_progress(), PlainProgress)

    class FakeTTY(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr("sys.stderr", FakeTTY())
    assert isinstance(make_progress(), LiveProgress)


def test_plain_progress_prints_rate_limited_lines():
    out = io.StringIO()
    progress = PlainProgress(out, interval=0.0)
    progress.start("bfs")
    progress.update(Stats(distinct=1234, generated=5000, depth=3, queue=10, elapsed=2.0), 3)
    line = out.getvalue()
    assert "bfs:" in line and "1,234 distinct" in line and "617 states/s" in line and "queue 10" in line

    slow = PlainProgress(out := io.StringIO(), interval=3600)
    slow.start("bfs")
    for _ in range(100):
        slow.update(Stats(distinct=1, elapsed=1.0))
    assert out.getvalue() == ""


def test_engines_drive_the_progress_interface():
    calls = []

    class Recorder(Progress):
        def start(self, label):
            calls.append(("start", label))

        def update(self, stats, level=None, note=""):
            calls.append(("update", stats.distinct))

        def finish(self, stats):
            calls.append(("finish", stats.distinct))

    for strategy in ("bfs", "dfs", "simulate"):
        calls.clear()
        result = explore(TwoPhase(3), ExploreOptions(strategy=strategy, walks=10), Recorder())
        assert calls[0] == ("start", strategy)
        assert calls[-1] == ("finish", result.stats.distinct)


def test_live_progress_renders_to_a_console():
    live = LiveProgress()
    live.console.file = io.StringIO()
    live.start("bfs")
    live.update(Stats(distinct=10, generated=20, depth=2, elapsed=1.0), 2, "note")
    live.finish(Stats(distinct=10))
    assert live.live is None


def test_progress_is_closed_when_the_model_raises():
    class Boom(TwoPhase):
        def successors(self, s):
            raise RuntimeError("model bug")

    live = LiveProgress()
    live.console.file = io.StringIO()
    try:
        explore(Boom(3), ExploreOptions(), live)
    except RuntimeError:
        pass
    assert live.live is None


def test_progress_names_the_spec(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr("sys.stderr", out)
    progress = make_progress(subject="kip890-tv2")
    assert isinstance(progress, PlainProgress)
    progress.interval = 0.0
    progress.start("bfs")
    progress.update(Stats(distinct=5, elapsed=1.0))
    assert out.getvalue().startswith("kip890-tv2 (bfs): 5 distinct")


def test_live_progress_puts_a_long_label_on_its_own_line():
    from rich.console import Console

    live = LiveProgress()
    live.subject = "zombie-reinit-fences-live-instance-shipped"
    live.label = live.title("parallel x2")
    text = io.StringIO()
    Console(file=text, width=60).print(live._render(Stats(distinct=3, elapsed=1.0), None, ""))
    lines = text.getvalue().splitlines()
    assert lines[0].startswith("zombie-reinit-fences-live-instance-shipped (parallel")
    assert all(len(line) <= 60 for line in lines)


def test_plain_progress_lines_fit_80_columns():
    out = io.StringIO()
    progress = PlainProgress(out, interval=0.0)
    progress.start("kip360-two-producers-shipped (bfs)")
    progress.update(Stats(distinct=340_032, generated=1_013_647, depth=21, queue=19_929, elapsed=5.1), 21)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and all(len(line) <= 80 for line in lines)
    assert lines[0].startswith("kip360-two-producers-shipped (bfs): 340,032 distinct")
