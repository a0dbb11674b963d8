"""An invariant's memo miss as generated code (``properties._miss_function``): each read decoded
straight from the state and the function called positionally. Its verdicts must be the generic
miss's (a decoder and a keyword dict), for every kind of read, and its errors the same."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest
from eoscheck.checker.compose import ComposeError, Part, invariant
from eoscheck.checker.compose.properties import _Invariant
from eoscheck.checker.compose.testing import compare_memo

from tests.test_compose_machine import Req, Store
from tests.test_compose_successors import _reachable


def _logged(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A wrapper (``functools.wraps``): the mechanism cannot call it positionally."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)
    return wrapper


class Audited(Store):
    """Store with invariants reading each kind of part: every client (inline ints), one client by
    parameter, the interned log, a projection of it, and the clock and the copy budget, which no
    rule writes here (constant slots, left out of the states); one wrapped, one taking **kwargs."""

    log = Part(init=(), projections={"size": len})

    @invariant("Mixed", params={"c": "client"}, reads=("client", "one=client[c]", "log", "now", "copies"))
    def mixed(self, c: int, client: tuple[int, ...], one: int, log: tuple[Req, ...], now: int, copies: int) -> bool:
        """a client's log entries never outnumber its sends (and the clock and budget stay at 0)"""
        assert client[c] == one and now == 0 and copies == 0
        return sum(r.client == c for r in log) <= one

    @invariant("Sized", reads=("size=log:size", "client"))
    def sized(self, client: tuple[int, ...], size: int) -> bool:  # not in the reads' order
        """the log holds at most the requests sent (seeded bug: fewer than sent, once one is)"""
        return size < sum(client) if self.bug and sum(client) else size <= sum(client)

    @invariant("Wrapped", reads=("log",))
    @_logged
    def wrapped(self, log: tuple[Req, ...]) -> bool:
        """the log is at most four long"""
        return len(log) <= 4

    @invariant("Keywords", reads=("log", "client"))
    def keywords(self, **parts: Any) -> bool:
        """the log holds only sent requests"""
        return all(r.seq < parts["client"][r.client] for r in parts["log"])

    def __init__(self, bug: bool = False, memoize: bool = True, **kwargs: Any) -> None:
        self.bug = bug
        super().__init__(memoize=memoize, **kwargs)


def _generated(obj: _Invariant) -> list[bool]:
    return [miss.__code__.co_filename == "<compose invariant miss>" for miss in obj.misses]


def test_a_plain_invariant_s_miss_is_generated_and_a_wrapped_or_keyword_one_is_not() -> None:
    m = Audited()
    objs = m._plan.property_objs
    assert _generated(objs["Mixed"]) == [True, True]  # one per client
    assert _generated(objs["Sized"]) == [True]
    assert _generated(objs["NoDuplicates"]) == [True]
    assert _generated(objs["Wrapped"]) == [False]
    assert _generated(objs["Keywords"]) == [False]
    # the clock and the copy budget are constants: the generated miss reads them from its globals
    assert m._plan.pos[m.slot("now")] is None and m._plan.pos[m.slot("copies")] is None


@pytest.mark.parametrize("bug", [False, True])
def test_generated_misses_give_the_verdicts_of_the_unmemoised_machine(bug: bool) -> None:
    # compare_memo: every reached state's successors and every property's verdict, memoised
    # (generated misses, fused and alone) against memoize=False (no memo: the generic path)
    report = compare_memo(lambda memo: Audited(bug=bug, max_copies=0, memoize=memo))
    assert report.complete
    m = Audited(bug=bug)
    props = m.properties()
    states = _reachable(m)
    verdicts = {name: sum(not p.check(s) for s in states) for name, p in props.items() if p.kind == "invariant"}
    assert verdicts["Mixed"] == 0 and verdicts["Wrapped"] == 0 and verdicts["Keywords"] == 0
    # the seeded bug breaks Sized wherever every request sent is in the log (one at least)
    want = sum(1 for s in states if sum(m.view(s).client) and len(m.view(s).log) == sum(m.view(s).client))
    assert verdicts["Sized"] == (want if bug else 0) and want > 0
    unmemoised = Audited(bug=bug, memoize=False).properties()
    assert all(props[n].check(s) == unmemoised[n].check(s) for n in verdicts for s in states)
    # a fused check (one call for all) says what the checks say one by one
    fused = m.fused_invariants(tuple(verdicts))
    assert fused is not None
    assert all(fused(s) == all(props[n].check(s) for n in verdicts) for s in states)


def test_a_generated_miss_on_an_id_never_interned_fails_with_the_decoder_s_error() -> None:
    m = Audited()
    s0 = next(iter(m.init_states()))
    place = m._plan.pos[m.slot("log")]
    bad = s0[:place] + (987654321,) + s0[place + 1:]
    for name in ("NoDuplicates", "Mixed", "Sized"):
        with pytest.raises(ComposeError, match="never interned"):
            m.properties()[name].check(bad)


def test_a_generated_miss_lets_the_invariant_s_own_errors_through() -> None:
    class Raising(Store):
        @invariant("Raises", reads=("log",))
        def raises(self, log: tuple[Req, ...]) -> bool:
            """looks up a key that is not there"""
            return {}[len(log)]

    m = Raising()
    assert _generated(m._plan.property_objs["Raises"]) == [True]
    with pytest.raises(KeyError):
        m.properties()["Raises"].check(next(iter(m.init_states())))
