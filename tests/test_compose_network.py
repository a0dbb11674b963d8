"""Network semantics of ``checker.compose`` channels against state counts worked out by hand.

The model: a sender sends the values 0 then 1 (``sent`` counts them) over one channel; the
receiver appends each value it receives to its log unless it is already there (so a duplicate
changes nothing). A state is (sent, channel, log[, budget spent]); the counts below enumerate the
fate of each value (in the channel ``c``, delivered ``d``, lost ``l``):

- ORDERED: sent=0: 1; sent=1: (c), (d): 2; sent=2: cc, dc, dd: 3 (``cd`` breaks the order). 6.
- UNORDERED: as ORDERED, plus ``cd`` at sent=2, and ``dd`` in two log orders: 1 + 2 + 5 = 8.
- ORDERED, loss=True: 1 + 3 (c, d, l) + 8 (all 9 fates but ``cd``) = 12.
- ORDERED, loss budget 1: the counter is part of the state, and ``ll`` needs two losses:
  1 + 3 + 7 = 11.
- UNORDERED, loss=True: 1 + 3 + 10 (9 fates, ``dd`` in two orders) = 14.
- DUPLICATING (a set; delivery keeps the message): the channel holds every value sent;
  the log is any sequence of distinct sent values: 1 + 2 + 5 = 8.
- DUPLICATING, loss=True: channel any subset of the values sent, log any sequence of distinct
  sent values: 1 + 2*2 + 4*5 = 25.
- ORDERED, duplication budget 1 (the copy right behind its original): 1 + 5 + 10 = 16;
  sent=1: (0)|(), ()|(0) unspent, (0,0)|(), (0)|(0), ()|(0) spent; sent=2 unspent: the 3 of
  ORDERED; spent: (0,0,1)|(), (0,1)|(0), (1)|(0), ()|(0,1), (0,1,1)|(), (1,1)|(0), (1)|(0,1).
- UNORDERED, duplication budget 1: 1 + 5 + (5 unspent + 14 spent) = 25; spent at sent=2 is one
  extra copy of 0 or of 1 with every order of delivery:
  {0,0,1}|(), {0,1}|(0), {1}|(0), {0,0}|(1), {0}|(1,0), {}|(1,0), {0}|(0,1), {}|(0,1),
  {0,1,1}|(), {1,1}|(0), {0,1}|(1), {1}|(0,1), {1}|(1,0), {0}|(1).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest
from eoscheck.checker.compose import (
    DUPLICATING,
    ORDERED,
    UNORDERED,
    Budget,
    Channel,
    Composed,
    ComposeError,
    Delivery,
    Network,
    Part,
    Scalar,
    precondition,
    rule,
)
from eoscheck.checker.compose.network import ChannelOps
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.intern import Interner


class TwoValues(Composed):
    sent = Scalar(init=0)
    log = Part(init=())
    net = Channel(network="network")
    budget = Budget("budget")

    def __init__(self, network: Network, budget: int = 0, memoize: bool = True) -> None:
        super().__init__({"network": network, "budget": budget}, memoize=memoize)

    @precondition(lambda self, sent: sent < 2)
    @rule("Send", reads=("sent",), writes=("sent",), sends=("net",))
    def send(self, sent: int) -> dict[str, Any]:
        return {"sent": sent + 1, "net": sent}

    @rule("Receive", receive="net", params=("value",), reads=("log",), writes=("log",))
    def receive(self, value: int, log: tuple[int, ...]) -> dict[str, Any]:
        return {} if value in log else {"log": log + (value,)}


@pytest.mark.parametrize("network, budget, states", [
    (ORDERED, 0, 6),
    (UNORDERED, 0, 8),
    (Network(Delivery.ORDERED, loss=True), 0, 12),
    (Network(Delivery.ORDERED, loss="budget"), 1, 11),
    (Network(Delivery.UNORDERED, loss=True), 0, 14),
    (DUPLICATING, 0, 8),
    (Network(Delivery.DUPLICATING, loss=True), 0, 25),
    (Network(Delivery.ORDERED, duplication="budget"), 1, 16),
    (Network(Delivery.UNORDERED, duplication="budget"), 1, 25),
])
def test_state_counts_match_the_hand_computed_ones(network, budget, states):
    result = explore(TwoValues(network, budget), ExploreOptions(check_deadlock=False))
    assert result.verdict == "holds"
    assert result.stats.distinct == states


def test_a_zero_budget_removes_the_generated_rule_and_keeps_the_lossless_count():
    machine = TwoValues(Network(Delivery.ORDERED, loss="budget", duplication="budget"), budget=0)
    assert set(machine.actions) == {"Send", "Receive"}
    assert explore(machine, ExploreOptions(check_deadlock=False)).stats.distinct == 6
    lossy = TwoValues(Network(Delivery.ORDERED, loss="budget", duplication="budget"), budget=1)
    assert set(lossy.actions) == {"Send", "Receive", "Drop_net", "Duplicate_net"}


class Msg(NamedTuple):
    src: int
    n: int


def _ops(network: Network, connection: Any = ("src",)) -> ChannelOps:
    return ChannelOps("net", network, Interner("test.net"), connection, memoize=True)


def test_ordered_delivers_the_oldest_message_of_each_connection():
    ops = _ops(ORDERED)
    ident = ops.table.intern(())
    for m in (Msg(1, 0), Msg(0, 0), Msg(1, 1), Msg(0, 1)):
        ident = ops.send(ident, m)
    # kept grouped by connection, each in send order
    assert ops.table.values[ident] == (Msg(0, 0), Msg(0, 1), Msg(1, 0), Msg(1, 1))
    assert [m for m, _ in ops.deliverable(ident)] == [Msg(0, 0), Msg(1, 0)]
    rest = dict(ops.deliverable(ident))[Msg(1, 0)]
    assert ops.table.values[rest] == (Msg(0, 0), Msg(0, 1), Msg(1, 1))


def test_ordered_channels_forget_how_connections_interleaved_unless_asked():
    for interleaving, same in ((False, True), (True, False)):
        ops = _ops(Network(Delivery.ORDERED, interleaving=interleaving))
        empty = ops.table.intern(())
        a_then_b = ops.send(ops.send(empty, Msg(0, 0)), Msg(1, 0))
        b_then_a = ops.send(ops.send(empty, Msg(1, 0)), Msg(0, 0))
        assert (a_then_b == b_then_a) is same


def test_unordered_and_duplicating_deliver_any_message():
    ops = _ops(UNORDERED)
    ident = ops.send(ops.send(ops.send(ops.table.intern(()), Msg(1, 0)), Msg(0, 0)), Msg(1, 0))
    assert ops.table.values[ident] == (Msg(0, 0), Msg(1, 0), Msg(1, 0))
    # each distinct message once; a copy stays after one is delivered
    assert [(m, ops.table.values[r]) for m, r in ops.deliverable(ident)] == [
        (Msg(0, 0), (Msg(1, 0), Msg(1, 0))), (Msg(1, 0), (Msg(0, 0), Msg(1, 0)))]
    dup = _ops(DUPLICATING)
    ident = dup.send(dup.send(dup.table.intern(()), Msg(1, 0)), Msg(1, 0))
    assert dup.table.values[ident] == (Msg(1, 0),)
    assert dup.deliverable(ident) == ((Msg(1, 0), ident),)


def test_bad_network_declarations_are_refused_with_one_line():
    with pytest.raises(ComposeError, match="not a Network"):
        TwoValues("ordered")  # type: ignore[arg-type]
    with pytest.raises(ComposeError, match="already re-delivers"):
        TwoValues(Network(Delivery.DUPLICATING, duplication="budget"), budget=1)
    with pytest.raises(ComposeError, match="not a Budget"):
        TwoValues(Network(Delivery.ORDERED, loss="nope"))
