"""Message sequence charts of a trace: a small vocabulary of events and how a trace becomes a chart.

A chart has *lanes* (actors, ordered left to right) and, per step of the trace, the *events* the
step consists of. The vocabulary knows nothing of any protocol:

- ``send(a, b, label, key)``: a message leaves lane ``a`` for lane ``b``;
- ``receive(b, label, key)``: lane ``b`` takes the message sent under ``key`` (the oldest one
  still in flight; the sender is the send's lane), optionally marked ``duplicate``;
- ``lost(label, key)``: the message under ``key`` is lost on its way;
- ``duplicate(label, key)``: the network makes a second copy of the message under ``key``;
- ``fault(lane, label)``: a failure on a lane (a crash, a timeout, a failover);
- ``state(lane, label)``: a lane's state changes (``epoch 0 -> 1``);
- ``step(lane, label)``: a local step with no message (the step's name, as a mark).

A machine describes one step as such events through ``Machine.chart_step(step, before, after)``
(optional; ``Machine.chart_lanes()`` orders the lanes). Without it, ``generic_events`` derives
one lane per top-level state field that changes (``client[0].epoch`` belongs to ``client[0]``),
with the step's name as a mark and each changed field as a state change.

``build_chart`` numbers the messages (``#1``, ``#2``...), pairs each receive or loss with its send,
and marks a message *late* when one sent after it on the same pair of lanes was received first.
A receive whose send is not in the trace (a message in flight in the initial state) gets a number
of its own and no arrow tail.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .counterexample import Counterexample
    from .machine import Machine
    from .result import TraceStep

EventKind = Literal["send", "receive", "lost", "duplicate", "fault", "state", "step"]
#: the lane of a message whose sender is not in the trace
OUTSIDE = "(before the trace)"
#: a state change's label is cut to this many characters (a chart is not a state dump)
STATE_LABEL_MAX = 60


@dataclass(frozen=True)
class ChartEvent:
    """One thing that happens in a step. Build them with the functions below."""

    kind: EventKind
    lane: str | None  # send: the sender; receive: the receiver; lost/duplicate: None
    label: str
    peer: str | None = None  # send: the receiver
    key: Hashable = None  # pairs receive / lost / duplicate with a send
    duplicate: bool = False  # receive: this copy was made by the network


def send(src: str, dst: str, label: str, key: Hashable) -> ChartEvent:
    return ChartEvent("send", src, label, peer=dst, key=key)


def receive(dst: str, label: str, key: Hashable, duplicate: bool = False) -> ChartEvent:
    return ChartEvent("receive", dst, label, key=key, duplicate=duplicate)


def lost(label: str, key: Hashable) -> ChartEvent:
    return ChartEvent("lost", None, label, key=key)


def duplicate(label: str, key: Hashable) -> ChartEvent:
    return ChartEvent("duplicate", None, label, key=key)


def fault(lane: str, label: str) -> ChartEvent:
    return ChartEvent("fault", lane, label)


def state(lane: str, label: str) -> ChartEvent:
    return ChartEvent("state", lane, label)


def step(lane: str, label: str) -> ChartEvent:
    return ChartEvent("step", lane, label)


# ------------------------------------------------------------------------------------ the chart


@dataclass
class Placed:
    """An event placed on the chart: lanes resolved, its message numbered and paired."""

    kind: EventKind
    lane: str  # where it is drawn (a send: its sender; a receive/lost: the message's receiver)
    label: str
    peer: str | None = None  # send/receive/lost: the other end of the message
    msg: int | None = None  # the message's number
    late: int | None = None  # receive: the number of a later message that overtook this one
    duplicate: bool = False
    #: send: the (row, event) index of its receive or loss; receive/lost: of its send
    partner: tuple[int, int] | None = None
    lost: bool = False  # send: the message was lost


@dataclass
class Row:
    """One state of the trace: the step that led to it and what happened."""

    index: int
    label: str  # the step's label; "Initial state" for index 0
    events: list[Placed] = field(default_factory=list)


@dataclass
class Chart:
    title: str
    lanes: list[str]
    rows: list[Row]
    #: a lasso: the last state is followed by ``rows[loop]`` forever; None: a finite trace
    loop: int | None = None
    #: what was read from the trace: "machine" (the model's own events), "compose" (derived from
    #: the declarations), "fields" (the changed state fields)
    source: str = "fields"
    notes: list[str] = field(default_factory=list)

    def messages(self) -> int:
        return sum(1 for r in self.rows for e in r.events if e.kind == "send")


def build_chart(title: str, steps: Sequence[tuple[int, str, Sequence[ChartEvent]]],
                order: Sequence[str] = (), loop: int | None = None, source: str = "fields") -> Chart:
    """Place every step's events: number messages, pair them, order the lanes.

    ``order`` puts the lanes it names first, in that order; the others follow in the order they
    first appear."""
    rows: list[Row] = []
    #: key -> numbers of the messages in flight under it, oldest first, with where they were sent
    in_flight: dict[Hashable, list[tuple[int, tuple[int, int]]]] = {}
    #: key -> the last message received under it, and where it was sent
    history: dict[Hashable, tuple[int, tuple[int, int]]] = {}
    ends: dict[int, tuple[str, str]] = {}  # message number -> (sender, receiver)
    delivered: list[int] = []  # message numbers, in the order they were received
    number = 0
    for r, (index, label, events) in enumerate(steps):
        row = Row(index, label)
        rows.append(row)
        for ev in events:
            where = (r, len(row.events))
            if ev.kind == "send":
                number += 1
                ends[number] = (ev.lane or OUTSIDE, ev.peer or OUTSIDE)
                in_flight.setdefault(ev.key, []).append((number, where))
                row.events.append(Placed("send", ev.lane or OUTSIDE, ev.label, ev.peer, number))
            elif ev.kind == "duplicate":
                queue = in_flight.get(ev.key)
                if not queue:
                    continue  # a copy of a message the chart never saw sent: nothing to draw
                original = queue[0][0]
                number += 1
                ends[number] = ends[original]
                queue.append((number, where))
                src, dst = ends[original]
                row.events.append(Placed("duplicate", src, ev.label, dst, number, duplicate=True))
            elif ev.kind in ("receive", "lost"):
                queue = in_flight.get(ev.key)
                if not queue and ev.kind == "receive" and ev.key in history:
                    # a message taken again (a duplicating network keeps it): a copy of the last
                    msg, sent_at = history[ev.key]
                    number += 1
                    ends[number] = ends[msg]
                    src, dst = ends[msg]
                    msg, copy = number, True
                elif queue:
                    msg, sent_at = queue.pop(0)
                    history[ev.key] = (msg, sent_at)
                    src, dst = ends[msg]
                    sender = rows[sent_at[0]].events[sent_at[1]]
                    sender.partner = where
                    sender.lost = ev.kind == "lost"
                    copy = sender.duplicate or ev.duplicate
                else:
                    number += 1
                    msg, sent_at, copy = number, None, ev.duplicate
                    src, dst = OUTSIDE, (ev.lane or OUTSIDE)
                    ends[msg] = (src, dst)
                if ev.kind == "receive":
                    dst = ev.lane or dst
                late = None
                if ev.kind == "receive":
                    overtaken = [m for m in delivered if m > msg and ends[m] == ends[msg]]
                    late = overtaken[0] if overtaken else None
                    delivered.append(msg)
                row.events.append(Placed(ev.kind, dst, ev.label, src, msg, late=late,
                                         duplicate=copy, partner=sent_at))
            else:
                row.events.append(Placed(ev.kind, ev.lane or OUTSIDE, ev.label))
    lanes = _lanes(rows, order)
    return Chart(title, lanes, rows, loop=loop, source=source)


def _lanes(rows: Sequence[Row], order: Sequence[str]) -> list[str]:
    seen: list[str] = []
    for row in rows:
        for ev in row.events:
            for lane in (ev.lane, ev.peer):
                if lane is not None and lane not in seen:
                    seen.append(lane)
    first = [lane for lane in order if lane in seen]
    rest = [lane for lane in seen if lane not in first and lane != OUTSIDE]
    return first + rest + ([OUTSIDE] if OUTSIDE in seen else [])


# ------------------------------------------------------------------------- events without a hook


def lane_of(name: str) -> str:
    """The lane a state field belongs to: its name up to the first dot (``client[0].epoch``:
    ``client[0]``)."""
    return name.split(".", 1)[0]


def short(value: Any, limit: int = 24) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def change_label(name: str, old: Any, new: Any, whole: bool = False) -> str:
    """``field: old -> new``; a list that grew or shrank says what was added or removed. The
    field is named without its lane (``epoch`` for ``client[0].epoch``) unless ``whole``."""
    local = name.split(".", 1)[1] if "." in name and not whole else name
    if isinstance(old, list) and isinstance(new, list):
        added = [x for x in new if x not in old]
        removed = [x for x in old if x not in new]
        parts = [f"+{short(x)}" for x in added] + [f"-{short(x)}" for x in removed]
        if parts:
            text = f"{local}: {' '.join(parts)}"
            return text if len(text) <= STATE_LABEL_MAX else text[:STATE_LABEL_MAX - 3] + "..."
    return f"{local}: {short(old)} -> {short(new)}"


def changed_fields(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, tuple[Any, Any]]:
    keys = list(dict.fromkeys([*before, *after]))
    return {k: (before.get(k), after.get(k)) for k in keys if before.get(k) != after.get(k)}


def state_events(before: Mapping[str, Any], after: Mapping[str, Any],
                 lanes: Mapping[str, str] | None = None, skip: Sequence[str] = ()) -> list[ChartEvent]:
    """A state change per changed field. ``lanes`` renames a field's lane (``client[0]`` ->
    ``producer[0]``; a lane that several are renamed to names each field whole); fields whose name
    starts with one of ``skip`` are left out (the messages in flight, which the arrows show)."""
    rename = dict(lanes or {})
    targets = Counter(rename.values())
    out = []
    for name, (old, new) in changed_fields(before, after).items():
        if any(name.startswith(p) for p in skip):
            continue
        lane = lane_of(name)
        drawn = rename.get(lane, lane)
        shared = targets[drawn] > 1 or (lane in rename and drawn in before and drawn != lane)
        out.append(state(drawn, change_label(name, old, new, whole=shared)))
    return out


def message_events(action: str, before: Sequence[Hashable], after: Sequence[Hashable],
                   ends: Callable[[Any], tuple[str, str]], label: Callable[[Any], str],
                   received_by: Collection[str]) -> tuple[list[ChartEvent], list[ChartEvent]]:
    """The messages a step took from and added to one channel (the messages in flight before and
    after it), as (receives and losses, sends). A message taken by one of the ``received_by``
    actions is received by its destination; taken by any other step, it is lost (named after the
    step). ``ends(msg)`` is (sender lane, receiver lane)."""
    taken = Counter(before) - Counter(after)
    added = Counter(after) - Counter(before)
    gone = [receive(ends(m)[1], label(m), m) if action in received_by
            else lost(f"{label(m)} ({action})", m) for m in taken.elements()]
    sent = [send(*ends(m), label(m), m) for m in added.elements()]
    return gone, sent


def generic_events(label: str, before: Mapping[str, Any], after: Mapping[str, Any]) -> list[ChartEvent]:
    """A step of a machine without a chart hook: its name as a mark on the first lane that changes,
    then a state change per changed field."""
    changes = state_events(before, after)
    name = label.split("(", 1)[0]
    if not changes:
        return [ChartEvent("step", None, name)]
    first = changes[0].lane
    assert first is not None
    return [step(first, name), *changes]


# ------------------------------------------------------------------------------------ from traces


def chart_of_trace(machine: Machine, trace: Sequence[TraceStep], title: str,
                   loop: int | None = None) -> Chart:
    """The chart of a trace of ``machine`` (the machine's own events where it describes its steps)."""
    steps: list[tuple[int, str, Sequence[ChartEvent]]] = [(0, "Initial state", [])]
    source = "fields"
    notes: list[str] = []
    for i in range(1, len(trace)):
        st = trace[i].step
        assert st is not None
        label = machine.format_step(st)
        try:
            events = machine.chart_step(st, trace[i - 1].state, trace[i].state)
        except Exception as exc:  # noqa: BLE001 - a broken hook costs its steps, not the chart
            notes.append(f"step {i}: the model's chart hook failed ({type(exc).__name__}: {exc}); "
                         "drawn from the state fields")
            events = None
        if events is None:
            events = generic_events(label, machine.fields(trace[i - 1].state),
                                    machine.fields(trace[i].state))
        else:
            source = getattr(machine, "chart_source", "machine")
        steps.append((i, label, events))
    chart = build_chart(title, steps, machine.chart_lanes(), loop=loop, source=source)
    chart.notes.extend(notes)
    return chart


def chart_of_fields(cex: Counterexample, title: str) -> Chart:
    """The chart of a counterexample file read as fields only (no machine to ask)."""
    steps: list[tuple[int, str, Sequence[ChartEvent]]] = [(0, "Initial state", [])]
    for i in range(1, len(cex.steps)):
        s = cex.steps[i]
        steps.append((i, s.label, generic_events(s.label, cex.steps[i - 1].state, s.state)))
    return build_chart(title, steps, loop=cex.loop, source="fields")


def title_of(cex: Counterexample) -> str:
    kind = "loops" if cex.loop is not None else "violated"
    known = [x for x in (cex.model, cex.variant) if x and x != "?"]
    where = f"; {', '.join(known)}" if known else ""
    return f"{cex.spec}: {cex.property} {kind} ({cex.length} states{where})"


def chart_of_counterexample(cex: Counterexample) -> Chart:
    """The chart of a counterexample file.

    When the file names a model this installation has, the machine is rebuilt from the file's
    switches and bounds and the trace replayed on it (each step found among the successors by its
    label and fields), so the model's own chart events are used. Otherwise (another tool's ITF
    trace, a model not installed, a trace the model no longer produces) the chart is derived from
    the fields, and a note says why."""
    title = title_of(cex)
    machine, why = _machine_of(cex)
    if machine is not None:
        try:
            trace, why = replay(machine, cex)
        except Exception as exc:  # noqa: BLE001 - a file the model cannot step through: fall back
            trace, why = None, f"replaying the file on {cex.model} failed ({type(exc).__name__})"
        if trace is not None:
            chart = chart_of_trace(machine, trace, title, loop=cex.loop)
            # a file's labels are what the run printed: keep them
            for row, s in zip(chart.rows, cex.steps):
                row.label = s.label
            return chart
    chart = chart_of_fields(cex, title)
    chart.notes.append(f"drawn from the state fields: {why}")
    return chart


def _machine_of(cex: Counterexample) -> tuple[Machine | None, str]:
    from .registry import UnknownModelError, find_model

    try:
        md = find_model(cex.model)
    except UnknownModelError:
        return None, f"model {cex.model!r} is not installed"
    except Exception as exc:  # noqa: BLE001 - a broken model module: fall back, say so
        return None, f"model {cex.model!r} did not load ({type(exc).__name__})"
    try:
        switches = {**{n: s.default for n, s in md.switches.items()}, **cex.switches}
        bounds = {**{n: b.default for n, b in md.bounds.items()}, **cex.bounds}
        return md.build(switches, bounds), ""
    except Exception as exc:  # noqa: BLE001 - a file from another version of the model
        return None, f"model {cex.model!r} rejected the file's configuration ({type(exc).__name__})"


def replay(machine: Machine, cex: Counterexample) -> tuple[list[TraceStep] | None, str]:
    """The machine states of the file's trace, or None and why not. A state matches the file's
    by its fields (our JSON) or its typed fields (an ITF file)."""
    from .result import TraceStep

    start = next((s for s in machine.init_states() if _same(machine, s, cex.steps[0].state)), None)
    if start is None:
        return None, f"no initial state of {cex.model} has the file's fields"
    trace = [TraceStep(None, start)]
    for cs in cex.steps[1:]:
        nxt = next(((st, s) for st, s in machine.successors(trace[-1].state)
                    if machine.format_step(st) == cs.label and _same(machine, s, cs.state)), None)
        if nxt is None:
            return None, f"{cex.model} does not take step {cs.index} ({cs.label}) as the file says"
        trace.append(TraceStep(nxt[0], nxt[1]))
    return trace, ""


def _same(machine: Machine, s: Any, want: Mapping[str, Any]) -> bool:
    if machine.fields(s) == want:
        return True
    typed = machine.itf_fields(s)
    if typed is None:
        return False
    from .itf import ITFValueError, encode
    # an ITF state defines every variable: one a state leaves out (None) is written "undefined"
    ours = {k: v for k, v in typed.items() if v is not None}
    theirs = {k: v for k, v in want.items()
              if not (isinstance(v, str) and v.startswith("undefined:") and typed.get(k) is None)}
    if ours.keys() != theirs.keys():
        return False
    try:  # field by field: the file's order of fields is not ours
        return all(encode(v) == encode(theirs[k]) for k, v in ours.items())
    except (ITFValueError, TypeError, ValueError):
        return False
