"""The alternating-bit protocol, twice: by hand (``HandAbp``) and with ``checker.compose``
(``ComposedAbp``), under a network semantics chosen as a parameter.

A sender transmits ``records`` values 0, 1, ... one at a time over a ``data`` channel, each
tagged with the value's parity bit, and retransmits (``Send``) until an ``Ack`` with that bit
comes back on the ``ack`` channel. The receiver accepts a ``Data`` whose bit is the one it
expects (appending the value to its log and flipping the bit) and acknowledges every ``Data``
with its bit. ``InOrder``: the log is 0, 1, ... with nothing repeated or skipped.

ABP is correct over FIFO channels that lose and duplicate messages, and wrong once they reorder:
a stale ``Data`` arriving when the receiver expects its bit again is taken as the next value.
So ``InOrder`` holds under ``ORDERED`` (with any loss or duplication budget) and is violated
under ``UNORDERED`` and ``DUPLICATING`` (where an old message stays deliverable forever) with at
least 3 records. Channels hold at most ``capacity`` messages and the log at most ``records``
values (state constraints, as in TLC models of ABP): retransmission is unbounded, and a receiver
that takes stale messages would otherwise log forever.

``HandAbp`` writes each semantics out explicitly and shares no code with ``checker.compose``:
``tests/test_compose_examples.py`` holds both to the same distinct/generated counts, depths and
verdicts, semantics by semantics.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, NamedTuple

from eoscheck.checker.compose import (
    Budget,
    Channel,
    Composed,
    Delivery,
    Network,
    Part,
    Scalar,
    invariant,
    precondition,
    rule,
    transition,
)
from eoscheck.checker.machine import Machine, Property


class Data(NamedTuple):
    bit: int
    value: int


class Ack(NamedTuple):
    bit: int


ORDER_NAMES = {"ordered": Delivery.ORDERED, "unordered": Delivery.UNORDERED, "duplicating": Delivery.DUPLICATING}

IN_ORDER_DOC = "the receiver's log is 0, 1, 2, ... with nothing repeated or skipped"
ADVANCES_DOC = "the sender never goes back to an earlier value"


def network(delivery: Delivery, lost: int, copies: int) -> Network:
    return Network(delivery, loss="lost" if lost else None, duplication="copies" if copies else None)


class ComposedAbp(Composed):
    #: the chart's lanes: the two ends of the protocol
    chart_parts: ClassVar[Mapping[str, str]] = {"next_value": "sender", "expected": "receiver",
                                                "log": "receiver"}

    next_value = Scalar(init=0, doc="the sender's current value (its bit is value % 2)")
    expected = Scalar(init=0, doc="the bit the receiver expects")
    log = Part(init=(), doc="the values the receiver accepted, in order")
    data = Channel(network="network", label=("bit", "value"), drop="LoseData", duplicate="CopyData")
    ack = Channel(network="network", label=("bit",), drop="LoseAck", duplicate="CopyAck")
    lost = Budget("lost")
    copies = Budget("copies")

    def __init__(self, records: int = 3, delivery: Delivery = Delivery.ORDERED, lost: int = 1, copies: int = 1,
                 capacity: int = 2, memoize: bool = True) -> None:
        self.records, self.capacity = records, capacity
        super().__init__({"network": network(delivery, lost, copies), "lost": lost, "copies": copies},
                         memoize=memoize)
        self._data, self._ack, self._log = self.slot("data"), self.slot("ack"), self.slot("log")

    @precondition(lambda self, next_value: next_value < self.records)
    @rule("Send", reads=("next_value",), sends=("data",))
    def send(self, next_value: int) -> dict[str, Any]:
        return {"data": Data(next_value % 2, next_value)}

    @rule("RcvData", receive="data", params=("bit", "value"), reads=("expected", "log"),
          writes=("expected", "log"), sends=("ack",))
    def receive_data(self, msg: Data, expected: int, log: tuple[int, ...]) -> dict[str, Any]:
        if msg.bit == expected:
            return {"expected": 1 - expected, "log": log + (msg.value,), "ack": Ack(msg.bit)}
        return {"ack": Ack(msg.bit)}

    @rule("RcvAck", receive="ack", params=("bit",), reads=("next_value",), writes=("next_value",))
    def receive_ack(self, bit: int, next_value: int) -> dict[str, Any]:
        return {"next_value": next_value + 1} if bit == next_value % 2 and next_value < self.records else {}

    @invariant("InOrder", reads=("log",))
    def in_order(self, log: tuple[int, ...]) -> bool:
        """the receiver's log is 0, 1, 2, ... with nothing repeated or skipped"""
        return log == tuple(range(len(log)))

    @transition("SenderAdvances", reads=("next_value",), actions=("RcvAck",))
    def sender_advances(self, step: tuple, before: Any, after: Any) -> bool:
        """the sender never goes back to an earlier value"""
        return after.next_value >= before.next_value

    def within_bounds(self, s: tuple) -> bool:
        return (len(self.part_values("data")[s[self._data]]) <= self.capacity
                and len(self.part_values("ack")[s[self._ack]]) <= self.capacity
                and len(self.part_values("log")[s[self._log]]) <= self.records)

    def is_terminal(self, s: tuple) -> bool:
        v = self.view(s)
        return v.next_value == self.records and not v.data and not v.ack


class HandAbp(Machine):
    """ABP as a plain ``Machine``: state ``(next_value, expected, log, data, ack, lost, copies)``
    with the channels as tuples, each network semantics written out below."""

    actions: Mapping[str, tuple[str, ...]] = {"Send": (), "RcvData": ("bit", "value"), "RcvAck": ("bit",),
                                              "LoseData": ("bit", "value"), "LoseAck": ("bit",),
                                              "CopyData": ("bit", "value"), "CopyAck": ("bit",)}

    def __init__(self, records: int = 3, delivery: Delivery = Delivery.ORDERED, lost: int = 1, copies: int = 1,
                 capacity: int = 2) -> None:
        self.records, self.delivery, self.max_lost, self.max_copies = records, delivery, lost, copies
        self.capacity = capacity
        if delivery is Delivery.DUPLICATING:
            self.max_copies = 0  # a set re-delivers by itself

    def init_states(self) -> Iterator[tuple]:
        yield (0, 0, (), (), (), 0, 0)

    # --- the semantics, written out

    def _add(self, chan: tuple, msg: Any) -> tuple:
        if self.delivery is Delivery.ORDERED:
            return chan + (msg,)  # one connection per channel: send order
        if self.delivery is Delivery.UNORDERED:
            return tuple(sorted(chan + (msg,)))
        return tuple(sorted(set(chan) | {msg}))

    def _deliverable(self, chan: tuple) -> list[tuple[Any, tuple]]:
        if not chan:
            return []
        if self.delivery is Delivery.ORDERED:
            return [(chan[0], chan[1:])]
        if self.delivery is Delivery.DUPLICATING:
            return [(m, chan) for m in chan]
        out = []
        for m in sorted(set(chan)):
            i = chan.index(m)
            out.append((m, chan[:i] + chan[i + 1:]))
        return out

    def _losses(self, chan: tuple) -> list[tuple[Any, tuple]]:
        out, seen = [], set()
        for i, m in enumerate(chan):
            rest = chan[:i] + chan[i + 1:]
            if rest not in seen:
                seen.add(rest)
                out.append((m, rest))
        return out

    def _copies(self, chan: tuple) -> list[tuple[Any, tuple]]:
        out, seen = [], set()
        for i, m in enumerate(chan):
            if m in seen:
                continue
            seen.add(m)
            out.append((m, chan[:i + 1] + chan[i:] if self.delivery is Delivery.ORDERED
                        else tuple(sorted(chan + (m,)))))
        return out

    def successors(self, s: tuple) -> Iterator[tuple[tuple, tuple]]:
        value, expected, log, data, ack, lost, copies = s
        if value < self.records:  # Send
            yield ("Send",), (value, expected, log, self._add(data, Data(value % 2, value)), ack, lost, copies)
        for m, rest in self._deliverable(data):  # RcvData
            new_ack = self._add(ack, Ack(m.bit))
            if m.bit == expected:
                yield ("RcvData", *m), (value, 1 - expected, log + (m.value,), rest, new_ack, lost, copies)
            else:
                yield ("RcvData", *m), (value, expected, log, rest, new_ack, lost, copies)
        for m, rest in self._deliverable(ack):  # RcvAck
            new_value = value + 1 if m.bit == value % 2 and value < self.records else value
            yield ("RcvAck", *m), (new_value, expected, log, data, rest, lost, copies)
        if lost < self.max_lost:
            for m, rest in self._losses(data):
                yield ("LoseData", *m), (value, expected, log, rest, ack, lost + 1, copies)
            for m, rest in self._losses(ack):
                yield ("LoseAck", *m), (value, expected, log, data, rest, lost + 1, copies)
        if copies < self.max_copies:
            for m, more in self._copies(data):
                yield ("CopyData", *m), (value, expected, log, more, ack, lost, copies + 1)
            for m, more in self._copies(ack):
                yield ("CopyAck", *m), (value, expected, log, data, more, lost, copies + 1)

    def within_bounds(self, s: tuple) -> bool:
        return len(s[3]) <= self.capacity and len(s[4]) <= self.capacity and len(s[2]) <= self.records

    def is_terminal(self, s: tuple) -> bool:
        return s[0] == self.records and not s[3] and not s[4]

    def properties(self) -> Mapping[str, Property]:
        return {"InOrder": Property("InOrder", IN_ORDER_DOC, "invariant", lambda s: s[2] == tuple(range(len(s[2])))),
                "SenderAdvances": Property("SenderAdvances", ADVANCES_DOC, "transition",
                                           lambda s, step, t: t[0] >= s[0])}

    def fields(self, s: tuple) -> dict[str, Any]:
        return {"sender.next_value": s[0], "receiver.expected": s[1], "receiver.log": list(s[2]),
                "network.data": [list(m) for m in s[3]], "network.ack": [list(m) for m in s[4]],
                "faults.lost": s[5], "faults.copies": s[6]}
