"""Progress of a running exploration on stderr: live in a terminal, periodic lines in CI logs.

Engines call ``update`` at most a few times per second (see ``explore.common.Ticker``); the plain
reporter prints at most one line every ``interval`` seconds (5 s by default) so logs stay short.
Nothing goes to stdout, which belongs to results (tables, JSON).
"""

from __future__ import annotations

import sys
import textwrap
import time
from typing import IO, Any

from .result import Stats

#: the run in progress, as last reported to any reporter: (title, stats, level); None between runs
_current: tuple[str, Stats, int | None] | None = None


def _remember(title: str, stats: Stats | None, level: int | None = None) -> None:
    global _current
    _current = None if stats is None else (title, stats, level)


def interrupted_at() -> str | None:
    """Where the run stood when it was interrupted, for the CLI's one line (TLC prints its counts
    on Ctrl-C too): "in SPEC (bfs) after 1,234 distinct states, depth 9, 2.5 s". None when no
    exploration was under way (between specs, or before the first one started)."""
    if _current is None:
        return None
    title, stats, level = _current
    depth = level if level is not None else stats.depth
    return (f"in {title} after {stats.distinct:,} distinct states, depth {depth}, "
            f"{stats.elapsed:.1f} s")


class Progress:
    """Silent reporter; also the interface the others implement.

    ``subject`` (the spec's name) leads every line: engines only know their own label ("bfs"),
    and a run over a directory of specs must say which one is running.
    """

    subject: str = ""

    def title(self, label: str) -> str:
        return f"{self.subject} ({label})" if self.subject else label

    def start(self, label: str) -> None:
        _remember(self.title(label), Stats())

    def update(self, stats: Stats, level: int | None = None, note: str = "") -> None:
        if _current is not None:
            _remember(_current[0], stats, level)

    def finish(self, stats: Stats) -> None:
        # explore() also finishes the display while an interrupt unwinds: keep the counts then,
        # for the line the CLI prints
        if sys.exc_info()[0] is None:
            _remember("", None)


def _summary(label: str, stats: Stats, level: int | None, note: str) -> str:
    parts = [f"{label}:", f"{stats.distinct:,} distinct", f"{stats.generated:,} generated",
             f"{stats.states_per_second:,.0f} states/s", f"depth {stats.depth}",
             f"queue {stats.queue:,}", f"{stats.elapsed:.1f} s"]
    if level is not None and level != stats.depth:
        parts.append(f"level {level}")
    if note:
        parts.append(note)
    # a log line stays within 80 columns: what does not fit goes on indented continuation lines
    return textwrap.fill(" ".join(parts[:1]) + " " + ", ".join(parts[1:]), width=80,
                         subsequent_indent="    ", break_long_words=False, break_on_hyphens=False)


class PlainProgress(Progress):
    """One line per ``interval`` seconds, for logs that are not a terminal."""

    def __init__(self, stream: IO[str] | None = None, interval: float = 5.0):
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.label = ""
        self._next = 0.0

    def start(self, label: str) -> None:
        super().start(label)
        self.label = self.title(label)
        self._next = time.monotonic() + self.interval

    def update(self, stats: Stats, level: int | None = None, note: str = "") -> None:
        super().update(stats, level, note)
        now = time.monotonic()
        if now >= self._next:
            self._next = now + self.interval
            print(_summary(self.label, stats, level, note), file=self.stream, flush=True)

    def finish(self, stats: Stats) -> None:
        super().finish(stats)
        # Only runs long enough to have printed progress get a closing line; short runs stay quiet.
        if stats.elapsed >= self.interval:
            print(_summary(self.label, stats, None, "done"), file=self.stream, flush=True)


class LiveProgress(Progress):
    """A rich live table on stderr, redrawn in place."""

    def __init__(self) -> None:
        from rich.console import Console

        self.console = Console(stderr=True)
        self.live: Any = None
        self.label = ""

    def _render(self, stats: Stats, level: int | None, note: str):
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        # The label (spec and engine) on a line of its own: a long spec name must not widen the
        # table past the terminal.
        table = Table.grid(padding=(0, 2))
        for _ in range(5):
            table.add_column(justify="right")
        table.add_row("distinct", "states/s", "depth", "queue", "elapsed")
        table.add_row(f"{stats.distinct:,}", f"{stats.states_per_second:,.0f}",
                      str(level if level is not None else stats.depth), f"{stats.queue:,}",
                      f"{stats.elapsed:.1f} s")
        parts: list = [Text(self.label, style="bold", overflow="ellipsis", no_wrap=True), table]
        if note:
            parts.append(Text(note, style="dim", overflow="ellipsis", no_wrap=True))
        return Group(*parts)

    def start(self, label: str) -> None:
        from rich.live import Live

        super().start(label)
        self.label = self.title(label)
        self.live = Live(self._render(Stats(), None, "starting"), console=self.console,
                         refresh_per_second=4, transient=True)
        self.live.start()

    def update(self, stats: Stats, level: int | None = None, note: str = "") -> None:
        super().update(stats, level, note)
        if self.live is not None:
            self.live.update(self._render(stats, level, note))

    def finish(self, stats: Stats) -> None:
        super().finish(stats)
        if self.live is not None:
            self.live.stop()
            self.live = None


def make_progress(enabled: bool = True, subject: str = "") -> Progress:
    """Live display when stderr is a terminal, plain periodic lines when not, silence when disabled.
    ``subject`` names what runs (the spec) in every line."""
    progress: Progress
    if not enabled:
        progress = Progress()
    elif sys.stderr.isatty():
        progress = LiveProgress()
    else:
        progress = PlainProgress()
    progress.subject = subject
    return progress
