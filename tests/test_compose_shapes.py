"""``@rule(shapes=...)``: the writes and sends of a rule's usual outcomes, built in place by the
generated successors instead of the shapes the machine picks from the declaration alone. Checked on
a toy desk whose rules' outcomes write few of their declared parts (the shapes the machine would
pick never occur): the same successors in the same order as without the declaration and as the
reference that calls every outcome's builder, the declared shapes' builders never called while an
undeclared one still is, and one-line errors for bad declarations."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from types import CodeType, FrameType
from typing import Any, NamedTuple

import pytest
from eoscheck.checker.compose import Actors, Channel, Composed, ComposeError, Delivery, Network, Scalar, rule
from eoscheck.checker.compose.rules import _BUILDERS, _Rule
from eoscheck.checker.compose.testing import compare_memo, reachable_steps
from eoscheck.checker.explore import ExploreOptions, explore


class Req(NamedTuple):
    c: int
    n: int


class Desk(Composed):
    """Each clerk files two requests (the first with a note in ``e``, the second without one); the
    desk takes each: a first request bumps ``a`` (clerk 1's also ``b``, and it is answered) unless
    the other's came first (then it is only answered), and a second request bumps ``d`` alone."""

    clerk = Actors(count="clerks", init=0, interned=False)
    inbox = Channel(network=Network(Delivery.UNORDERED))
    outbox = Channel(network=Network(Delivery.UNORDERED))
    a = Scalar(init=0)
    b = Scalar(init=0)
    d = Scalar(init=0)
    e = Scalar(init=0)

    def __init__(self, memoize: bool = True) -> None:
        super().__init__({"clerks": 2}, memoize=memoize)

    def file(self, c: int, clerk: int) -> Any:
        if clerk >= 2:
            return None
        if clerk == 0:
            return {"clerk": 1, "inbox": Req(c, 0)}
        return {"clerk": 2}  # the second request is filed later (``Refile``)

    def take(self, msg: Req, a: int, b: int, d: int) -> Any:
        if msg.n == 1:
            return {"d": min(d + 1, 2)}
        if a >= 1:
            return {"outbox": msg.c}
        if msg.c == 0:
            return {"a": a + 1}
        return {"a": a + 1, "b": min(b + 1, 1), "outbox": msg.c}

    @rule("Refile", params={"c": "clerk"}, reads=("clerk[c]",), writes=("clerk[c]",), sends=("inbox",))
    def refile(self, c: int, clerk: int) -> Any:
        return {"clerk": 3, "inbox": Req(c, 1)} if clerk == 2 else None


class Plain(Desk):
    @rule("File", params={"c": "clerk"}, reads=("clerk[c]",), writes=("clerk[c]", "e"), sends=("inbox",))
    def file_plain(self, c: int, clerk: int) -> Any:
        return self.file(c, clerk)

    @rule("Take", receive="inbox", params=("c", "n"), reads=("a", "b", "d"), writes=("a", "b", "d", "e"),
          sends=("outbox",))
    def take_plain(self, msg: Req, a: int, b: int, d: int) -> Any:
        return self.take(msg, a, b, d)


#: Take's ``d`` alone is left to its builder
FILE_SHAPES = (("clerk", "inbox"), ("clerk",))
TAKE_SHAPES = (("a",), ("a", "b", "outbox"), ("outbox",))


class Shaped(Desk):
    @rule("File", params={"c": "clerk"}, reads=("clerk[c]",), writes=("clerk[c]", "e"), sends=("inbox",),
          shapes=FILE_SHAPES)
    def file_shaped(self, c: int, clerk: int) -> Any:
        return self.file(c, clerk)

    @rule("Take", receive="inbox", params=("c", "n"), reads=("a", "b", "d"), writes=("a", "b", "d", "e"),
          sends=("outbox",), shapes=TAKE_SHAPES)
    def take_shaped(self, msg: Req, a: int, b: int, d: int) -> Any:
        return self.take(msg, a, b, d)


def _rule(m: Composed, action: str) -> _Rule:
    return next(r for r in m._plan.rules if isinstance(r, _Rule) and r.action == action)


def _builder_calls(m: Composed) -> Counter[tuple[Any, ...]]:
    """The builder calls of a full exploration of ``m``, by builder shape (``_BUILDERS``' key)."""
    calls: Counter[CodeType] = Counter()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_name == "build":
            calls[frame.f_code] += 1

    sys.setprofile(profile)
    try:
        explore(m, ExploreOptions(stop_at_first=False))
    finally:
        sys.setprofile(None)
    by_code = {fn.__code__: key for key, fn in _BUILDERS.items()}
    return Counter({by_code[code]: n for code, n in calls.items() if code in by_code})


def _states(m: Composed) -> Iterator[tuple]:
    return iter({s for s, _, _ in reachable_steps(m)} | set(m.init_states()))


def test_declared_shapes_are_built_in_place_in_their_order() -> None:
    shaped, plain = Shaped(), Plain()
    take, file_ = _rule(shaped, "Take"), _rule(shaped, "File")
    receive, width = shaped._plan.placed(take.receive_slot), len(shaped._plan.live)
    declared = take._declared_shapes(receive, -1)
    assert [len(w) + len(x) for w, x, _, _ in declared] == [1, 3, 1]
    # every declared shape has its test, in order; the plain machine's never occur (its full shape
    # and its writes-only shape: no outcome writes ``e``), so they are not the declared machine's
    source = shaped._plan.source
    at = [source.index(f"build is {take.tag}R{'' if i == 0 else f'_{i}'}:") for i in range(3)]
    assert at == sorted(at)
    assert f"build is {take.tag}R_3:" not in source
    env = shaped._plan._env
    assert [env[f"{take.tag}R{'' if i == 0 else f'_{i}'}"] for i in range(3)] == [
        _BUILDERS[(width, *shape)] for shape in declared]
    b = file_.bindings[0]
    assert [env[f"{file_.tag}B0{'' if i == 0 else f'_{i}'}"] for i in range(2)] == [
        _BUILDERS[(width, *file_._shape(b, names))] for names in FILE_SHAPES]
    assert "build is" in plain._plan.source


def test_declared_shapes_keep_every_successor_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    shaped, plain = Shaped(), Plain()
    # the reference: every step line calls the outcome's builder
    monkeypatch.setattr(_Rule, "_apply_shapes", lambda self, env, shapes, name, call: [call])
    ref = Plain()
    assert "build is" not in ref._plan.source
    states = list(_states(ref))
    assert len(states) > 50
    # every machine interns the same values to the same ids on its own walk (the walk fills its tables)
    assert sorted(_states(shaped)) == sorted(_states(plain)) == sorted(states)
    for s in states:
        assert shaped.successors(s) == plain.successors(s) == ref.successors(s)
    stats = [explore(m, ExploreOptions(stop_at_first=False)).stats for m in (Shaped(), Plain(), ref)]
    assert len({(x.distinct, x.generated, x.depth) for x in stats}) == 1


def test_only_undeclared_shapes_call_their_builder() -> None:
    shaped, plain = Shaped(), Plain()
    take = _rule(shaped, "Take")
    receive, width = shaped._plan.placed(take.receive_slot), len(shaped._plan.live)
    declared = {(width, *shape) for shape in take._declared_shapes(receive, -1)}
    file_ = _rule(shaped, "File")
    declared |= {(width, *file_._shape(b, names)) for b in file_.bindings for names in FILE_SHAPES}
    d_alone = (width, (shaped._plan.pos[shaped.slot("d")],), (), receive, -1)
    with_shapes, without = _builder_calls(shaped), _builder_calls(plain)
    assert not declared & with_shapes.keys()
    assert with_shapes[d_alone] > 0  # the undeclared shape is still built, by its builder
    assert declared <= without.keys()  # without the declaration, those successors were calls
    assert sum(with_shapes.values()) < sum(without.values())


def test_declared_shapes_memo_agrees_with_recomputing() -> None:
    report = compare_memo(lambda memoize: Shaped(memoize=memoize))
    assert report.complete and report.states > 20


@pytest.mark.parametrize("receive, shapes, message", [
    (True, (("a", "log"),), "shapes names log, which it does not write or send"),
    (False, (("inbox", "outbox"),), "shapes names outbox, which it does not write or send"),
    (True, (("clerk",),), "a write indexed by a parameter"),
])
def test_bad_shapes_are_one_clear_error(receive: bool, shapes: tuple[tuple[str, ...], ...], message: str) -> None:
    if receive:
        class Bad(Desk):
            @rule("Take", receive="inbox", params=("c", "n"), reads=("a", "b", "d"),
                  writes=("a", "b", "d", "clerk[c]"), sends=("outbox",), shapes=shapes)
            def take_bad(self, msg: Req, a: int, b: int, d: int) -> Any:
                return self.take(msg, a, b, d)
    else:
        class Bad(Desk):  # type: ignore[no-redef]
            @rule("File", params={"c": "clerk"}, reads=("clerk[c]",), writes=("clerk[c]",), sends=("inbox",),
                  shapes=shapes)
            def file_bad(self, c: int, clerk: int) -> Any:
                return self.file(c, clerk)

    with pytest.raises(ComposeError, match=message):
        Bad()
