"""``@rule(passed=...)``: a write computed apart from the memoised effect. Checked on a toy office
whose clerks' arrival ranks a rule reads only to renumber them (kafka.init_producer_id's ghost
``started`` ranks, perf29a): the same state graph as the reference machine whose effects read and
write the ranks themselves, fewer memo entries (states that differ only in the ranks share one,
and their successors still differ there), a read_if that leaves the write out, the memo check
against the unmemoised machine, and one-line errors for bad declarations."""

from __future__ import annotations

from collections import Counter
from typing import Any, NamedTuple

import pytest
from eoscheck.checker.compose import (
    Actors,
    Channel,
    Composed,
    ComposeError,
    Delivery,
    Network,
    Projection,
    Scalar,
    rule,
)
from eoscheck.checker.compose.rules import _Rule
from eoscheck.checker.compose.testing import compare_memo
from eoscheck.checker.explore import ExploreOptions, explore


class Req(NamedTuple):
    c: int
    fresh: int


class Clerk(NamedTuple):
    rank: int  # 0: not arrived; else the order of arrival, renumbered 1..n
    filed: int


def newest(ranks: tuple[int, ...], c: int) -> tuple[int, ...]:
    """Clerk ``c`` arrives now: the newest, the ranks renumbered 1..n."""
    ranks = ranks[:c] + (max(ranks) + 1,) + ranks[c + 1:]
    order = {v: i + 1 for i, v in enumerate(sorted({r for r in ranks if r}))}
    return tuple(order[r] if r else 0 for r in ranks)


def _rank(c: Clerk) -> int:
    return c.rank


def _with_rank(c: Clerk, rank: int) -> Clerk:
    return c._replace(rank=rank)


class Office(Composed):
    """Each clerk files two requests, the first fresh; the desk takes each (fresh: the clerk arrives,
    and the desk either counts it in ``a`` or not, a choice); ``Tick`` moves ``b`` by the clerk that
    ticks, and ``Stamp`` counts ``a`` while a clerk stamps (the ``b`` it leaves is a function of the old)."""

    clerk = Actors(count="clerks", init=Clerk(0, 0), projections={"rank": Projection(_rank, _with_rank)})
    inbox = Channel(network=Network(Delivery.UNORDERED))
    a = Scalar(init=0)
    b = Scalar(init=0)

    def __init__(self, memoize: bool = True) -> None:
        super().__init__({"clerks": 2}, memoize=memoize)

    @rule("File", params={"c": "clerk"}, reads=("clerk[c]",), writes=("clerk[c]",), sends=("inbox",))
    def file(self, c: int, clerk: Clerk) -> Any:
        if clerk.filed >= 2:
            return None
        return {"clerk": clerk._replace(filed=clerk.filed + 1), "inbox": Req(c, int(clerk.filed == 0))}

    def take(self, msg: Req, a: int) -> list[dict[str, Any]]:
        return [{"a": min(a + 1, 3)}, {}] if msg.fresh else [{"a": max(a - 1, 0)}]

    def stamp(self, c: int, a: int) -> Any:
        return {"a": a + 1} if a < 2 and c == 0 else None


def _tick(b: int, c: int) -> int:
    return (b + c + 1) % 3


class Passed(Office):
    @rule("Take", receive="inbox", params=("c", "fresh"), reads=("clerk:rank", "a"), writes=("clerk:rank", "a"),
          read_if={"clerk": lambda fresh: fresh == 1}, passed={"clerk": lambda clerk, c: newest(clerk, c)},
          shapes=(("clerk", "a"), ("clerk",)))
    def take_passed(self, msg: Req, a: int) -> Any:
        return self.take(msg, a)

    @rule("Stamp", params={"c": "clerk"}, reads=("a", "b"), writes=("a", "b"), passed={"b": _tick})
    def stamp_passed(self, c: int, a: int) -> Any:
        return self.stamp(c, a)


class Reference(Office):
    @rule("Take", receive="inbox", params=("c", "fresh"), reads=("clerk:rank", "a"), writes=("clerk:rank", "a"),
          read_if={"clerk": lambda fresh: fresh == 1})
    def take_ref(self, msg: Req, a: int, clerk: tuple[int, ...]) -> Any:
        outs = self.take(msg, a)
        if msg.fresh:
            for d in outs:
                d["clerk"] = newest(clerk, msg.c)
        return outs

    @rule("Stamp", params={"c": "clerk"}, reads=("a", "b"), writes=("a", "b"))
    def stamp_ref(self, c: int, a: int, b: int) -> Any:
        out = self.stamp(c, a)
        if out is not None:
            out["b"] = _tick(b, c)
        return out


def _graph(m: Composed) -> dict[str, list[tuple[Any, str]]]:
    """Every reachable state (shown by its fields: two machines' interned ids may differ) -> its steps
    and successors, in order."""
    seen: dict[tuple, None] = dict.fromkeys(m.init_states())
    todo = list(seen)
    out: dict[str, list[tuple[Any, str]]] = {}
    while todo:
        s = todo.pop()
        steps = m.successors(s)
        out[repr(m.fields(s))] = [(step, repr(m.fields(t))) for step, t in steps]
        for _, t in steps:
            if t not in seen:
                seen[t] = None
                todo.append(t)
    return out


def _rule(m: Composed, action: str) -> _Rule:
    return next(r for r in m._plan.rules if isinstance(r, _Rule) and r.action == action)


def test_passed_writes_make_the_reference_graph() -> None:
    passed, ref = _graph(Passed()), _graph(Reference())
    assert len(ref) > 40
    assert passed == ref
    # the ranks move: some fresh request arrives while the other clerk has arrived, some while not
    assert any("'clerk[0].rank': 2" in s for s in ref) and any("'clerk[1].rank': 2" in s for s in ref)


def test_states_differing_only_in_the_passed_part_share_a_memo_entry() -> None:
    p, r = Passed(), Reference()
    _graph(p), _graph(r)
    take_p, take_r = _rule(p, "Take"), _rule(r, "Take")
    # a fresh request's binding: keyed on ``a`` alone with ``passed`` (the ranks out of the key)
    fresh = [b for bs in take_p.by_msg.values() for b in bs if b.params["fresh"]]
    assert fresh and all(b.derive and len(b.key_slots) == 1 for b in fresh)
    assert all(not b.derive for bs in take_p.by_msg.values() for b in bs if not b.params["fresh"])
    computed = Counter(len(b.memo) for bs in take_p.by_msg.values() for b in bs)
    reference = Counter(len(b.memo) for bs in take_r.by_msg.values() for b in bs)
    assert sum(n * k for n, k in computed.items()) < sum(n * k for n, k in reference.items())
    # one entry served states whose ranks differ, and their successors' ranks differ as ``newest`` says
    b = fresh[0]
    cache = b.derive_args[0]
    assert len({x for x in cache}) >= 2 and len(set(cache.values())) >= 2
    stamp = _rule(p, "Stamp")
    assert all(len(b.key_slots) == 1 and b.derive for b in stamp.bindings)


def test_explore_counts_match_the_reference() -> None:
    a = explore(Passed(), ExploreOptions(stop_at_first=False))
    b = explore(Reference(), ExploreOptions(stop_at_first=False))
    assert (a.stats.distinct, a.stats.generated) == (b.stats.distinct, b.stats.generated)
    assert a.stats.distinct > 40


def test_memoised_matches_unmemoised() -> None:
    report = compare_memo(lambda memoize: Passed(memoize=memoize))
    assert report.states > 40


def _office(**kw: Any) -> type[Office]:
    class Bad(Office):
        @rule("Take", receive="inbox", params=("c", "fresh"), reads=("clerk:rank", "a"),
              writes=kw.pop("writes", ("clerk:rank", "a")), **kw)
        def take_bad(self, msg: Req, a: int, clerk: Any = None) -> Any:
            if clerk is not None and msg.fresh:
                return {"a": clerk[0]}  # uses the stand-in
            return {"a": a}

    return Bad


@pytest.mark.parametrize(("kw", "message"), [
    ({"passed": {"b": _tick}}, "passed names 'b', which it does not both read and write"),
    ({"passed": {"clerk": newest}, "writes": ("a",)}, "passed names 'clerk', which it does not both read and write"),
    ({"passed": {"clerk": lambda clerk, d: clerk}}, "passed 'clerk' of rule Take"),
])
def test_bad_declarations_are_one_line_errors(kw: dict[str, Any], message: str) -> None:
    with pytest.raises(ComposeError, match=message.replace("[", r"\[").replace("]", r"\]")):
        _office(**kw)()


def test_the_effect_cannot_use_or_return_the_passed_part() -> None:
    bad = _office(passed={"clerk": lambda clerk, c: clerk})()
    with pytest.raises(ComposeError, match="which it declares passed"):
        explore(bad, ExploreOptions(stop_at_first=False))

    class Returns(Office):
        @rule("Take", receive="inbox", params=("c", "fresh"), reads=("clerk:rank", "a"), writes=("clerk:rank", "a"),
              passed={"clerk": lambda clerk, c: clerk})
        def take_returns(self, msg: Req, a: int) -> Any:
            return {"a": a, "clerk": (1, 1)}

    with pytest.raises(ComposeError, match="returned clerk, which it does not declare"):
        explore(Returns(), ExploreOptions(stop_at_first=False))
