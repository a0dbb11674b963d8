"""Chart events of a composed machine's step, derived from its declarations (``checker.chart``).

- The rule that made the step names the lane: its first written (else read) actor part indexed by
  a parameter (``producer[t]`` with ``t=0``: lane ``producer[0]``), else its first written part.
- A message added to a channel is a send from that lane to the lane of the rule that receives it
  (a receive rule whose ``match`` takes it, with the parameters the message gives; several such
  lanes: one arrow to each). A message taken from a channel by a receive rule is a receive (on a
  duplicating network the message stays; the one the step's parameters name is received). The
  channel's generated loss and duplication rules are lost and duplicated messages.
- A rule that ``spends`` a budget marks a fault; every other changed field is a state change on
  its part's lane.

``Composed.chart_parts`` maps parts to lanes, so a model names its actors without writing code:
``{"txn": "coordinator", "producer": "producer[]"}`` puts every ``txn`` actor on one lane
``coordinator`` and ``producer[i]`` on lane ``producer[i]``; an unmapped part is its own lane.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..chart import (
    ChartEvent,
    change_label,
    changed_fields,
    fault,
    lost,
    receive,
    send,
    short,
    state,
    step,
)
from ..chart import duplicate as duplicated
from .declare import ComposeError
from .parts import Actors, Budget, Channel

if TYPE_CHECKING:
    from .machine import Composed
    from .rules import _ChannelRule, _Rule

_FIELD = re.compile(r"([A-Za-z_]\w*)(?:\[(\d+)\])?")


def part_lane(machine: Composed, part: str, index: int | None) -> str:
    mapped = machine.chart_parts.get(part)
    if mapped is None:
        return part if index is None else f"{part}[{index}]"
    if mapped.endswith("[]"):
        return mapped[:-2] if index is None else f"{mapped[:-2]}[{index}]"
    return mapped


def field_lane(machine: Composed, name: str) -> str | None:
    """The lane of a field of ``Composed.fields`` (None: a budget counter or a channel)."""
    if name.startswith("faults."):
        return None
    m = _FIELD.match(name)
    if m is None or m.group(1) not in machine._plan.decls:
        return name.split(".", 1)[0]
    decl = machine._plan.decls[m.group(1)]
    if isinstance(decl, (Channel, Budget)):
        return None
    return part_lane(machine, m.group(1), int(m.group(2)) if m.group(2) is not None else None)


def rule_lane(machine: Composed, rule: _Rule, params: Mapping[str, Any]) -> str:
    """The actor a rule's step belongs to: an actor its parameters index (written, else read),
    else the first part it writes (a clock included), else the first part it reads."""
    refs = [*rule.writes, *rule.reads]
    for ref in refs:
        if isinstance(ref.decl, Actors) and ref.param is not None and isinstance(params.get(ref.param), int):
            return part_lane(machine, ref.name, params[ref.param])
    for group in (rule.writes, rule.reads):
        for ref in group:
            if not isinstance(ref.decl, (Channel, Budget)):
                return part_lane(machine, ref.name, None)
    return rule.action


def message_label(machine: Composed, channel: str, msg: Any) -> str:
    decl = machine._plan.decls[channel]
    show = getattr(decl, "show", None)
    if show is not None:
        try:
            shown = show((msg,))
        except Exception:  # noqa: BLE001 - a show written for whole channels only: fall back
            shown = None
        if isinstance(shown, (list, tuple)) and len(shown) == 1:
            return str(shown[0])
    if hasattr(msg, "_fields"):
        inner = ", ".join(f"{f}={short(getattr(msg, f), 12)}" for f in msg._fields)
        return f"{type(msg).__name__}({inner})"
    return short(msg, 40)


def receivers(machine: Composed, channel: str, msg: Any) -> list[str]:
    """The lanes whose receive rules would take ``msg`` (each once, in rule order)."""
    from .rules import _Rule

    found: list[str] = []
    for rule in machine._plan.rules:
        if not isinstance(rule, _Rule) or rule.spec.receive != channel:
            continue
        if rule.spec.match is not None and not rule.spec.match(msg):
            continue
        params = {p: getattr(msg, p, None) for p in rule.from_msg}
        static = [p for p in rule.param_names if p not in rule.from_msg]
        if static:
            # the rule tries every value of these parameters: each is a receiver
            for combo in rule.combos:
                lane = rule_lane(machine, rule, {**params, **combo})
                if lane not in found:
                    found.append(lane)
            continue
        lane = rule_lane(machine, rule, params)
        if lane not in found:
            found.append(lane)
    return found


def _channel(machine: Composed, s: tuple, name: str) -> Counter[Any]:
    return Counter(getattr(machine.view(s), name))


def _msg_key(channel: str, msg: Any, lane: str) -> tuple[str, Any, str]:
    return (channel, msg, lane)


def step_events(machine: Composed, st: tuple, before: tuple, after: tuple) -> list[ChartEvent]:
    from .rules import _ChannelRule, _Rule

    plan = machine._plan
    label = machine.format_step(st)
    rules = [r for r in plan.rules if r.action == st[0]]
    if not rules:
        return [ChartEvent("step", None, label)]
    names = machine.actions.get(st[0], ())
    params = dict(zip(names, st[1:]))
    rule = rules[0] if len(rules) == 1 else _rule_of(rules, params, machine.logical(before), machine.logical(after))
    if isinstance(rule, _ChannelRule):
        return _channel_rule_events(machine, rule, label, before, after)
    assert isinstance(rule, _Rule)
    lane = rule_lane(machine, rule, params)
    events: list[ChartEvent] = []
    # the step's title carries its whole label; the mark names the action on its lane
    if rule.spec.spends is not None:
        events.append(fault(lane, st[0]))
    else:
        events.append(step(lane, st[0]))
    channels = [n for n, d in plan.decls.items() if isinstance(d, Channel)]
    if rule.spec.receive is not None:
        ch = rule.spec.receive
        gone = _channel(machine, before, ch) - _channel(machine, after, ch)
        taken = list(gone.elements())
        if not taken:  # a duplicating network keeps the message: find the one the step names
            taken = [m for m in _channel(machine, before, ch)
                     if (rule.spec.match is None or rule.spec.match(m))
                     and all(getattr(m, p, None) == params.get(p) for p in rule.from_msg)][:1]
        for msg in taken:
            events.append(receive(lane, message_label(machine, ch, msg), _msg_key(ch, msg, lane)))
    for ch in channels:
        added = _channel(machine, after, ch) - _channel(machine, before, ch)
        for msg in added.elements():
            text = message_label(machine, ch, msg)
            for dst in receivers(machine, ch, msg) or [ch]:
                events.append(send(lane, dst, text, _msg_key(ch, msg, dst)))
    events.extend(_state_changes(machine, before, after))
    return events


def _rule_of(rules: Sequence[_Rule | _ChannelRule], params: Mapping[str, Any], before: tuple,
             after: tuple) -> _Rule | _ChannelRule:
    """Of several rules sharing the step's action, the one that made it: the first whose received
    channel, written parts and spent budget changed the most slots (a rule indexed out of range by
    the step's parameters, or whose budget is unchanged, cannot have made it). ``before`` and
    ``after`` are logical states (``Composed.logical``): the rules name logical slots."""
    from .rules import _Rule

    changed = {i for i, (a, b) in enumerate(zip(before, after)) if a != b}

    def score(rule: _Rule | _ChannelRule) -> int:
        if not isinstance(rule, _Rule):
            return 0
        try:
            slots = {k for ref in rule.writes for k in ref.slots(params)}
        except (KeyError, ComposeError):
            return -1
        if rule.receive is not None:
            if rule.receive_slot not in changed:
                return -1
            slots.add(rule.receive_slot)
        if rule.budget_slot >= 0:
            if rule.budget_slot not in changed:
                return -1
            slots.add(rule.budget_slot)
        return len(slots & changed)
    return max(rules, key=score)  # the first of the best: max keeps the earliest on ties


def _channel_rule_events(machine: Composed, rule: _ChannelRule, label: str, before: tuple,
                         after: tuple) -> list[ChartEvent]:
    ch = rule.ops.name
    old, new = _channel(machine, before, ch), _channel(machine, after, ch)
    events: list[ChartEvent] = []
    if rule.kind == "drop":
        for msg in (old - new).elements():
            for dst in receivers(machine, ch, msg) or [ch]:
                events.append(lost(label, _msg_key(ch, msg, dst)))
    else:
        for msg in (new - old).elements():
            for dst in receivers(machine, ch, msg) or [ch]:
                events.append(duplicated(label, _msg_key(ch, msg, dst)))
    return events


def _state_changes(machine: Composed, before: tuple, after: tuple) -> list[ChartEvent]:
    out = []
    for name, (old, new) in changed_fields(machine.fields(before), machine.fields(after)).items():
        lane = field_lane(machine, name)
        if lane is not None:
            # a lane of several parts names the part a field belongs to
            shared = not name.startswith(lane)
            out.append(state(lane, change_label(name, old, new, whole=shared)))
    return out


def lanes(machine: Composed) -> Sequence[str]:
    """Lanes in the order of ``chart_parts``, then the other parts in declaration order."""
    plan = machine._plan
    order: list[str] = []
    names = [*(p for p in machine.chart_parts if p in plan.decls), *plan.decls]
    for name in dict.fromkeys(names):
        decl = plan.decls[name]
        if isinstance(decl, (Channel, Budget)):
            continue
        if isinstance(decl, Actors):
            count = plan.slots[name][1]
            candidates = [part_lane(machine, name, i) for i in range(count)]
        else:
            candidates = [part_lane(machine, name, None)]
        order.extend(c for c in candidates if c not in order)
    return order
