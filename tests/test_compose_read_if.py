"""``@rule(read_if=...)``: a read that only some bindings take (a receive rule's: only some
messages). Where the predicate is false the binding's memo key leaves the part out and the effect
receives a stand-in that refuses any use. Checked on a toy server whose fresh requests (no id yet)
read a counter the others do not: the same successors, in the same order, as the machine that reads
it everywhere, fewer memo entries, and one-line errors for bad declarations and for an effect that
uses what it declared unread."""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest
from eoscheck.checker.compose import Actors, Channel, Composed, ComposeError, Delivery, Network, Scalar, rule
from eoscheck.checker.compose.testing import compare_memo, reachable_steps
from eoscheck.checker.explore import ExploreOptions, explore


class Req(NamedTuple):
    client: int
    pid: int  # -1: a fresh request (the server assigns an id from ``issued``)


class Server(Composed):
    """Each client sends up to two requests, the first fresh; the server counts every request in
    ``served`` and hands out ids from ``issued`` to fresh ones only."""

    client = Actors(count="clients", init=0, interned=False)
    requests = Channel(network=Network(Delivery.UNORDERED))
    issued = Scalar(init=0)
    served = Scalar(init=0)

    def __init__(self, clients: int = 3, memoize: bool = True) -> None:
        super().__init__({"clients": clients}, memoize=memoize)

    @rule("Send", params={"c": "client"}, reads=("client[c]",), writes=("client[c]",), sends=("requests",))
    def send(self, c: int, client: int) -> Any:
        if client >= 2:
            return None
        return {"client": client + 1, "requests": Req(c, -1 if client == 0 else c)}

    def handle(self, pid: int, issued: Any, served: int) -> Any:
        out: dict[str, Any] = {"served": min(served + 1, 4)}
        if pid == -1:
            out["issued"] = issued + 1
        return out


class Everywhere(Server):
    @rule("Handle", receive="requests", params=("client", "pid"), reads=("issued", "served"),
          writes=("issued", "served"))
    def handle_all(self, pid: int, issued: int, served: int) -> Any:
        return self.handle(pid, issued, served)


class Fresh(Server):
    @rule("Handle", receive="requests", params=("client", "pid"), reads=("issued", "served"),
          writes=("issued", "served"), read_if={"issued": lambda pid: pid == -1})
    def handle_fresh(self, pid: int, issued: Any, served: int) -> Any:
        return self.handle(pid, issued, served)


class EverywhereIndexed(Server):
    @rule("Handle", receive="requests", params=("client", "pid"), reads=("sender=client[client]", "issued", "served"),
          writes=("issued", "served"))
    def handle_all(self, pid: int, issued: int, served: int) -> Any:
        return self.handle(pid, issued, served)


class FreshIndexed(Server):
    """The same through a read indexed by the message (no key shared by every message: the
    per-message lookups, not ``receive_all``'s)."""

    @rule("Handle", receive="requests", params=("client", "pid"), reads=("sender=client[client]", "issued", "served"),
          writes=("issued", "served"), read_if={"issued": lambda pid: pid == -1})
    def handle_fresh(self, pid: int, issued: Any, served: int) -> Any:
        return self.handle(pid, issued, served)


def _entries(m: Composed, action: str) -> int:
    handle = next(r for r in m._plan.rules if getattr(r, "action", None) == action)
    return sum(len(b.memo) for bs in handle.by_msg.values() for b in bs)


@pytest.mark.parametrize("cls, whole", [(Fresh, Everywhere), (FreshIndexed, EverywhereIndexed)])
def test_read_if_keeps_every_successor_in_order_with_fewer_entries(cls: type[Server], whole: type[Server]) -> None:
    narrow, wide = cls(), whole()
    handle = next(r for r in narrow._plan.rules if getattr(r, "action", None) == "Handle")
    assert (handle.shared_key() is None) == (cls is FreshIndexed)  # both lookup paths are covered
    walked = list(reachable_steps(narrow))
    assert walked == list(reachable_steps(wide))
    assert len(walked) > 100
    states = {s for s, _, _ in walked}
    for s in states:  # the same steps in the same order from every state
        assert narrow.successors(s) == wide.successors(s)
    a = explore(cls(), ExploreOptions(stop_at_first=False)).stats
    b = explore(whole(), ExploreOptions(stop_at_first=False)).stats
    assert (a.distinct, a.generated, a.depth) == (b.distinct, b.generated, b.depth)
    # requests with an id share entries across ``issued``: fewer keys than reading it everywhere
    assert 0 < _entries(narrow, "Handle") < _entries(wide, "Handle")


@pytest.mark.parametrize("cls", [Fresh, FreshIndexed])
def test_read_if_memo_agrees_with_recomputing(cls: type[Server]) -> None:
    report = compare_memo(lambda memoize: cls(memoize=memoize))
    assert report.complete and report.states > 20


def test_an_effect_using_an_unread_part_is_refused() -> None:
    class Cheat(Server):
        @rule("Handle", receive="requests", params=("client", "pid"), reads=("issued", "served"),
              writes=("issued", "served"), read_if={"issued": lambda pid: pid == -1})
        def handle_cheat(self, issued: Any, served: int) -> Any:
            return {"issued": issued + 1, "served": min(served + 1, 4)}

    with pytest.raises(ComposeError, match="read_if leaves it unread"):
        explore(Cheat(), ExploreOptions(stop_at_first=False))


@pytest.mark.parametrize("read_if, message", [
    ({"log": lambda pid: pid == -1}, "read_if names 'log', which it does not read"),
    ({"issued": lambda seq: seq == -1}, "takes seq, which it does not declare"),
    ({"requests": lambda pid: pid == -1}, "the channel it receives from"),
])
def test_bad_read_if_is_one_clear_error(read_if: dict[str, Any], message: str) -> None:
    class Bad(Server):
        @rule("Handle", receive="requests", params=("client", "pid"), reads=("requests", "issued", "served"),
              writes=("issued", "served"), read_if=read_if)
        def handle_bad(self, pid: int, issued: Any, served: int) -> Any:
            return self.handle(pid, issued, served)

    with pytest.raises(ComposeError, match=message):
        Bad()
