"""A message sequence chart (``checker.chart``) drawn in plain ASCII within a width (80 columns).

Lanes are vertical bars, left to right; time runs down. Each step is a title line (its number and
label, wrapped) followed by one line per event::

      1 Drain(client=0, record=0, seq=0, epoch=0)
        |--#1 Produce r0 seq 0------->|
      2 HandleProduce(client=0, record=0, epoch=0, seq=0) -> NONE
        |                             * #1 Produce r0 seq 0
        |<-#2 ProduceResponse NONE----|

Marks: an arrow ``--->`` is a message sent (``--X`` when it is later lost), ``*`` a message
received (``#n`` pairs it with its arrow; ``late`` when one sent after it arrived first), ``X``
a message lost, ``+`` a copy the network made, ``!`` a fault, ``~`` a state change, ``@`` a step
with no message. The text is the same on a terminal and in a pipe; only ``lines_styled`` adds
styles for a terminal.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator

from .chart import Chart, Placed, Row

GUTTER = 8  # step numbers and the left margin
#: room kept right of the last lane for its marks' text
RIGHT_ROOM = 22
MIN_SPACING = 4
#: few lanes: keep them close, leaving the room on the right for the last lane's text
MAX_SPACING = 32
MARKS = {"receive": "*", "lost": "X", "duplicate": "+", "fault": "!", "state": "~", "step": "@"}
LEGEND = "--> sent  --X sent, lost  * received  ! fault  ~ state  @ step  + copy"


class Layout:
    """Where each lane's bar is drawn, for a width."""

    def __init__(self, lanes: list[str], width: int) -> None:
        self.width = width
        n = len(lanes)
        if n <= 1:
            spacing = width - GUTTER
        else:
            spacing = max(MIN_SPACING, min(MAX_SPACING, (width - GUTTER - RIGHT_ROOM) // (n - 1)))
        # lanes that do not fit are not drawn; the chart says so
        fits = 1 if n <= 1 else min(n, (width - GUTTER - 2) // spacing + 1)
        self.lanes = lanes[:fits]
        self.hidden = lanes[fits:]
        self.spacing = spacing
        self.x = {lane: GUTTER + i * spacing for i, lane in enumerate(self.lanes)}

    def bars(self) -> list[str]:
        line = [" "] * self.width
        for x in self.x.values():
            line[x] = "|"
        return line


def _put(line: list[str], start: int, text: str) -> None:
    for i, ch in enumerate(text):
        if 0 <= start + i < len(line):
            line[start + i] = ch


def _fit(text: str, room: int) -> str:
    if room <= 0:
        return ""
    return text if len(text) <= room else text[:max(room - 2, 1)] + ".."


def _event_text(ev: Placed) -> str:
    tag = f"#{ev.msg} " if ev.msg is not None else ""
    if ev.kind == "receive":
        extra = ""
        if ev.late is not None:
            extra += f" (late: #{ev.late} overtook it)"
        if ev.duplicate:
            extra += " (a copy)"
        return f"{tag}{ev.label}{extra}"
    if ev.kind == "lost":
        return f"{tag}lost: {ev.label}"
    if ev.kind == "duplicate":
        return f"{tag}copy made: {ev.label}"
    return ev.label


def _arrow(layout: Layout, ev: Placed) -> str:
    line = layout.bars()
    a, b = layout.x.get(ev.lane), layout.x.get(ev.peer or "")
    text = f"#{ev.msg} {ev.label}"
    head = "X" if ev.lost else ">"
    if a is None or b is None or a == b:
        # an end not drawn (no room for its lane): the text names it
        x = a if a is not None else b if b is not None else GUTTER
        _put(line, x, "o")
        room = layout.width - x - 2
        other = f"to {ev.peer}" if a is not None else f"from {ev.lane}"
        _put(line, x + 2, _fit(f"{text} ({other})", room))
        return "".join(line).rstrip()
    if a < b:
        body = "-" * (b - a - 1)
        body = body[:-1] + head
        inner = _fit(text, len(body) - 4)
        body = "--" + inner + body[2 + len(inner):]
        _put(line, a + 1, body)
    else:
        body = "-" * (a - b - 1)
        body = ("<" if not ev.lost else "X") + body[1:]
        inner = _fit(text, len(body) - 4)
        body = body[:2] + inner + body[2 + len(inner):]
        _put(line, b + 1, body)
    return "".join(line).rstrip()


def _mark(layout: Layout, ev: Placed) -> str:
    line = layout.bars()
    if ev.kind in ("lost", "duplicate"):
        a, b = layout.x.get(ev.peer or ""), layout.x.get(ev.lane)
        ends = [x for x in (a, b) if x is not None]
        x = (min(ends) + max(ends)) // 2 if ends else GUTTER
    else:
        x = layout.x.get(ev.lane, GUTTER)
    _put(line, x, MARKS.get(ev.kind, "@"))
    text = _event_text(ev)
    if ev.lane not in layout.x:
        text = f"[{ev.lane}] {text}"
    right = layout.width - (x + 2)
    left = x - GUTTER - 1
    if len(text) <= right or right >= left:
        _put(line, x + 2, _fit(text, right))
    else:
        shown = _fit(text, left)
        _put(line, x - 1 - len(shown), shown)
    return "".join(line).rstrip()


def _header(chart: Chart, layout: Layout) -> Iterator[str]:
    yield from textwrap.wrap(chart.title, layout.width, subsequent_indent="  ")
    yield _fit(LEGEND, layout.width)
    names = list(layout.x.items())
    room = layout.spacing - 1
    # names that do not fit under their own lane go on a second line, staggered
    if all(len(n) <= room for n, _ in names[:-1]):
        rows = [names]
    else:
        rows = [names[0::2], names[1::2]]
        room = 2 * layout.spacing - 1
    for group in rows:
        line = [" "] * layout.width
        for i, (name, x) in enumerate(group):
            last = x == max(layout.x.values())
            _put(line, x, _fit(name, layout.width - x if last else room))
        yield "".join(line).rstrip()
    if layout.hidden:
        yield _fit(f"(not drawn, no room within {layout.width} columns: {', '.join(layout.hidden)})",
                   layout.width)
    yield "".join(layout.bars()).rstrip()


def _style(ev: Placed) -> str | None:
    if ev.kind in ("lost", "fault") or ev.lost:
        return "red"
    if ev.late is not None or ev.duplicate:
        return "yellow"
    return None


def _row(layout: Layout, row: Row) -> Iterator[tuple[str, str | None]]:
    title = f"{row.index:>{GUTTER - 2}} {row.label}"
    for line in textwrap.wrap(title, layout.width, subsequent_indent=" " * (GUTTER + 2),
                              break_long_words=True) or [title]:
        yield line, "bold"
    for ev in row.events:
        yield (_arrow(layout, ev) if ev.kind == "send" else _mark(layout, ev)), _style(ev)


def lines_styled(chart: Chart, width: int = 80,
                 marks: dict[int, str] | None = None) -> list[tuple[str, str | None]]:
    """The chart's lines, each with a style for a terminal (None: plain). ``marks`` adds a
    highlighted note under the title of the rows it names (by state index)."""
    width = max(width, 40)
    layout = Layout(chart.lanes, width)
    out: list[tuple[str, str | None]] = [(line, "bold") for line in _header(chart, layout)]
    last = len(chart.rows) - 1
    for i, row in enumerate(chart.rows):
        if chart.loop is not None and i == chart.loop:
            if chart.loop == last:
                text = f"{' ' * (GUTTER - 2)}== from state {row.index} on, it stays there forever =="
            else:
                text = f"{' ' * (GUTTER - 2)}== the loop: from state {row.index} to the last, forever =="
            out.append((_fit(text, width), "bold magenta"))
        rows = list(_row(layout, row))
        titles = sum(1 for _, style in rows if style == "bold")
        out.extend(rows[:titles])
        if marks and row.index in marks:
            out.extend((line, "bold green") for line in textwrap.wrap(
                f"<- {marks[row.index]}", width, initial_indent=" " * GUTTER,
                subsequent_indent=" " * (GUTTER + 3)))
        out.extend(rows[titles:])
    if chart.loop is not None and chart.loop != last:
        out.append((_fit(f"{' ' * (GUTTER - 2)}== back to state {chart.rows[chart.loop].index}, "
                         "and round again ==", width), "bold magenta"))
    open_ = [e for r in chart.rows for e in r.events if e.kind == "send" and e.partner is None]
    if open_:
        out.append((_fit(f"still in flight at the end: {', '.join(f'#{e.msg}' for e in open_)}",
                         width), None))
    for note in chart.notes:
        out.extend((line, "dim") for line in textwrap.wrap(f"note: {note}", width))
    return out


def lines(chart: Chart, width: int = 80, marks: dict[int, str] | None = None) -> list[str]:
    """The chart as plain text lines, none longer than ``width`` (at least 40)."""
    return [line for line, _ in lines_styled(chart, width, marks)]
