"""A binding's decoder (``rules._decoder``; without reads of constant slots it is generated code,
``_decoder_code``) against ``read_parts`` on the unpacked state: the same parts, in the same order,
for every binding and reachable state of toy machines with scalar, interned, whole-actor, projected and
unread (``read_if``) reads, the one-line error for a part id this process never interned, and that a
decoder is compiled on its first call only (``_compile_decode``), never for a binding that does not decode."""

from __future__ import annotations

from collections import deque
from typing import Any

import pytest
from eoscheck.checker.compose import Actors, Composed, ComposeError, rule, rules
from eoscheck.checker.compose.rules import _decoder, _Rule, _Unread, read_parts

from tests.test_compose_made import Dial, Marks
from tests.test_compose_read_if import Fresh, FreshIndexed


class Cells(Composed):
    """Interned cells that grow to three marks: rules read one cell, every cell whole (through the
    table), and every cell's size (through a projection)."""

    cell = Actors(count="cells", init=(), projections={"size": len})

    def __init__(self) -> None:
        super().__init__({"cells": 2})

    @rule("Grow", params={"c": "cell"}, reads=("cell[c]",), writes=("cell[c]",))
    def grow(self, c: int, cell: tuple[int, ...]) -> dict[str, Any] | None:
        return {"cell": (*cell, c)} if len(cell) < 3 else None

    @rule("Clear", reads=("cell",), writes=("cell",))
    def clear(self, cell: tuple[tuple[int, ...], ...]) -> dict[str, Any] | None:
        return {"cell": ((),) * len(cell)} if all(len(x) == 3 for x in cell) else None

    @rule("Even", reads=("cell:size",), results=("total",))
    def even(self, cell: tuple[int, ...]) -> dict[str, Any] | None:
        return {"total": sum(cell)} if sum(cell) % 2 == 0 else None


def _states(m: Any) -> list[tuple]:
    todo = deque(m.init_states())
    seen = list(todo)
    found = set(seen)
    while todo:
        s = todo.popleft()
        for _, t in m.successors(s):
            if t not in found:
                found.add(t)
                seen.append(t)
                # the toys are small: a wrong decoder can make one unbounded (fail, do not hang)
                assert len(seen) <= 10_000, "too many states: the decoder misreads"
                todo.append(t)
    return seen


@pytest.mark.parametrize("cls", [Cells, Marks, Dial, Fresh, FreshIndexed])
def test_every_bindings_decoder_reads_what_read_parts_reads(cls: type) -> None:
    m = cls()
    states = _states(m)
    plan = m._plan
    checked = 0
    for r in plan.rules:
        if not isinstance(r, _Rule):
            continue
        bindings = [*r.bindings, *(b for bs in r.by_msg.values() for b in bs)]
        for b in bindings:
            for s in states:
                got = b.decode(s, {})
                want = read_parts(plan.unpack(s), b.reads, {})
                plain = {k: v for k, v in got.items() if not isinstance(v, _Unread)}
                assert list(plain.items()) == list(want.items())
                assert set(got) - set(plain) == set(r.unread(b.params))  # the unread parts: stand-ins
                checked += 1
    assert checked > 20


def test_a_part_id_never_interned_is_one_clear_error() -> None:
    table = {1: "one"}
    decode = _decoder([("x", [0], table, False)])  # no layout: generated code, slot 0 through ``table``
    assert decode((1,), {}) == {"x": "one"}
    with pytest.raises(ComposeError, match="never interned"):
        decode((7,), {})


def _decoders_compiled(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The sources of the decoders compiled from now on, in order."""
    sources: list[str] = []
    run = rules.run_code

    def recording(source: str, filename: str, env: dict[str, Any]) -> None:
        if filename == "<compose decode>":
            sources.append(source)
        run(source, filename, env)

    monkeypatch.setattr(rules, "run_code", recording)
    return sources


def test_a_decoder_is_compiled_on_its_first_call_only(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = _decoders_compiled(monkeypatch)
    decode = _decoder([("x", [0], {1: "one"}, False), ("y", [1], None, False), ("w", [1, 0], None, True)])
    assert compiled == []  # made, not called: nothing generated
    assert decode((1, 5), {}) == {"x": "one", "y": 5, "w": (5, 1)}
    assert decode((1, 6), {"p": 0}) == {"p": 0, "x": "one", "y": 6, "w": (6, 1)}
    assert len(compiled) == 1


def test_building_a_machine_compiles_no_decoder_and_exploring_each_at_most_once(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = _decoders_compiled(monkeypatch)
    m = Cells()
    plan = m._plan
    decoders = [b.decode for r in plan.rules if isinstance(r, _Rule)
                for b in [*r.bindings, *(b for bs in r.by_msg.values() for b in bs)]]
    assert decoders and compiled == []
    _states(m)
    assert 0 < len(compiled) <= len(decoders)
    after = [b.decode for r in plan.rules if isinstance(r, _Rule)
             for b in [*r.bindings, *(b for bs in r.by_msg.values() for b in bs)]]
    assert all(a is d for a, d in zip(after, decoders, strict=True))  # the same function objects
