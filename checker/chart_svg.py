"""A message sequence chart (``checker.chart``) as inline SVG, for the HTML review report.

Time runs down. Each step is a grey band with its number and label; under it, one slot per
event. A message is an arrow from its sender's lane at the slot where it was sent to its
receiver's lane at the slot where it was received, so a message that waits while others pass
it slants across them (a late one is drawn orange); a lost message ends in a red cross halfway;
a message still in flight at the end runs dashed to the bottom. Faults are red boxes on their
lane, state changes grey boxes, steps without a message dots. A lasso's loop is a bracket on
the left. The SVG holds no script and no reference outside itself.
"""

from __future__ import annotations

from html import escape

from .chart import Chart, Placed

LANE_GAP = 260
LEFT = 150  # room for the loop bracket and the first lane's text
TOP = 60
SLOT = 22
BAND = 24
TEXT_MAX = 64

BLUE = "#1f5fbf"
RED = "#c62828"
ORANGE = "#e67e00"
GREEN = "#2e7d32"
GREY = "#666666"


def _t(text: str, limit: int = TEXT_MAX) -> str:
    return escape(text if len(text) <= limit else text[:limit - 1] + "\u2026")


def render_svg(chart: Chart, marks: dict[int, str] | None = None) -> str:
    """The chart as one ``<svg>`` element; ``marks`` puts a highlighted note on rows (by state
    index), e.g. the step where two configurations part ways."""
    marks = marks or {}
    lanes = chart.lanes or ["(no actor)"]
    x = {lane: LEFT + i * LANE_GAP for i, lane in enumerate(lanes)}
    width = LEFT + (len(lanes) - 1) * LANE_GAP + 600
    # y of every event slot, and of every step band
    y = TOP + 10
    band_y: list[int] = []
    slot_y: dict[tuple[int, int], int] = {}
    for r, row in enumerate(chart.rows):
        band_y.append(y)
        y += BAND + (SLOT if row.index in marks else 0)
        for e in range(len(row.events)):
            slot_y[(r, e)] = y + SLOT // 2
            y += SLOT
        y += 4
    bottom = y + 20
    out: list[str] = [
        (f'<svg xmlns="http://www.w3.org/2000/svg" class="msc" width="{width}" height="{bottom + 10}" '
        f'viewBox="0 0 {width} {bottom + 10}" role="img" aria-label="{escape(chart.title)}">'),
        "<defs>",
        *(f'<marker id="head-{name}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" '
          f'markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{color}"/>'
          "</marker>" for name, color in (("msg", BLUE), ("late", ORANGE))),
        "</defs>",
        f'<rect x="0" y="0" width="{width}" height="{bottom + 10}" fill="#ffffff"/>',
    ]
    for lane, lx in x.items():
        out.append(f'<line x1="{lx}" y1="{TOP}" x2="{lx}" y2="{bottom}" stroke="#9e9e9e" '
                   'stroke-width="1.5"/>')
        out.append(f'<rect x="{lx - 95}" y="12" width="190" height="30" rx="4" fill="#e3ecf9" '
                   f'stroke="{BLUE}"/>')
        out.append(f'<text x="{lx}" y="32" text-anchor="middle" class="lane">{_t(lane, 26)}</text>')
    for r, row in enumerate(chart.rows):
        by = band_y[r]
        fill = "#fff3e0" if chart.loop is not None and r >= chart.loop else "#f2f2f2"
        out.append(f'<rect x="4" y="{by}" width="{width - 8}" height="{BAND - 4}" fill="{fill}"/>')
        out.append(f'<text x="10" y="{by + 15}" class="step"><tspan font-weight="bold">'
                   f'{row.index}</tspan> {_t(row.label, 150)}</text>')
        if row.index in marks:
            out.append(f'<rect x="4" y="{by + BAND - 4}" width="{width - 8}" height="{SLOT}" '
                       f'fill="#e8f5e9" stroke="{GREEN}"/>')
            out.append(f'<text x="10" y="{by + BAND + 11}" class="mark" fill="{GREEN}">'
                       f'\u2190 {_t(marks[row.index], 150)}</text>')
        for e, ev in enumerate(row.events):
            out.extend(_event(chart, ev, x, slot_y, (r, e), bottom))
    if chart.loop is not None and chart.rows:
        top_y, end_y = band_y[chart.loop], bottom - 14
        out.append(f'<path d="M30,{top_y} L20,{top_y} L20,{end_y} L30,{end_y}" fill="none" '
                   'stroke="#8e24aa" stroke-width="2"/>')
        out.append(f'<text x="24" y="{end_y + 12}" class="note" fill="#8e24aa">loop: back to '
                   f'{chart.rows[chart.loop].index}, forever</text>')
    out.append("</svg>")
    return "\n".join(out)


def _label(x: float, y: float, text: str, color: str, anchor: str = "start") -> str:
    return (f'<text x="{x:.0f}" y="{y:.0f}" text-anchor="{anchor}" fill="{color}" class="ev" '
            f'stroke="#ffffff" stroke-width="3" paint-order="stroke">{_t(text)}</text>')


def _event(chart: Chart, ev: Placed, x: dict[str, int], slot_y: dict[tuple[int, int], int],
           where: tuple[int, int], bottom: int) -> list[str]:
    y = slot_y[where]
    lx = x.get(ev.lane, LEFT)
    tag = f"#{ev.msg} " if ev.msg is not None else ""
    tip = f"<title>{escape(tag + ev.label)}</title>"
    if ev.kind == "send":
        dst = x.get(ev.peer or "", lx + LANE_GAP // 2)
        x2: float
        y2: float
        if ev.partner is None:
            x2, y2, color, extra = dst, bottom - 4, BLUE, ' stroke-dasharray="6 4"'
            head = 'marker-end="url(#head-msg)"'
        else:
            x2, y2 = dst, slot_y[ev.partner]
            partner = chart.rows[ev.partner[0]].events[ev.partner[1]]
            late = partner.late is not None
            color = ORANGE if late else BLUE
            extra = ""
            head = f'marker-end="url(#head-{"late" if late else "msg"})"'
            if ev.lost:
                x2, y2, color, head = (lx + dst) / 2, (y + y2) / 2, RED, ""
        parts = [(f'<g class="msg">{tip}<line x1="{lx}" y1="{y}" x2="{x2:.0f}" y2="{y2:.0f}" '
                 f'stroke="{color}" stroke-width="2"{extra} {head}/>')]
        if ev.lost:
            parts.append(f'<path d="M{x2 - 6:.0f},{y2 - 6:.0f} L{x2 + 6:.0f},{y2 + 6:.0f} '
                         f'M{x2 - 6:.0f},{y2 + 6:.0f} L{x2 + 6:.0f},{y2 - 6:.0f}" stroke="{RED}" '
                         'stroke-width="3"/>')
        right = dst >= lx
        parts.append(_label(lx + (8 if right else -8), y - 4, tag + ev.label, color,
                            "start" if right else "end"))
        parts.append("</g>")
        return ["".join(parts)]
    if ev.kind == "receive":
        color = ORANGE if ev.late is not None or ev.duplicate else BLUE
        text = tag + ev.label
        if ev.late is not None:
            text += f" (late: #{ev.late} overtook it)"
        if ev.duplicate:
            text += " (a copy)"
        return [f'<g class="recv">{tip}<circle cx="{lx}" cy="{y}" r="4" fill="{color}"/>'
                + _label(lx + 9, y + 4, text, color) + "</g>"]
    if ev.kind in ("lost", "duplicate"):
        return [f'<g class="{ev.kind}">{tip}'
                + _label(lx + 9, y + 4, f"{tag}{'lost' if ev.kind == 'lost' else 'copied'}: "
                         f"{ev.label}", RED if ev.kind == "lost" else ORANGE) + "</g>"]
    if ev.kind == "fault":
        return [f'<g class="fault">{tip}<rect x="{lx - 7}" y="{y - 7}" width="14" height="14" '
                f'fill="{RED}"/>' + _label(lx + 11, y + 4, "\u26a0 " + ev.label, RED) + "</g>"]
    if ev.kind == "state":
        return [f'<g class="state">{tip}<rect x="{lx - 5}" y="{y - 5}" width="10" height="10" '
                f'fill="#bdbdbd" stroke="{GREY}"/>' + _label(lx + 9, y + 4, ev.label, GREY) + "</g>"]
    return [f'<g class="stepmark">{tip}<circle cx="{lx}" cy="{y}" r="3" fill="#424242"/>'
            + _label(lx + 9, y + 4, ev.label, "#424242") + "</g>"]
