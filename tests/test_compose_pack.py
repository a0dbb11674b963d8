"""Constant-slot elision (``Composed.pack_constants``): a composed machine's states leave out the
slots no compiled rule writes that every initial state agrees on. A packed machine and the same
machine unpacked must agree state by state: successors (steps, order, logical states), the
constraint, every property, the fused checks, the canonical form and the fields."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from eoscheck.checker.compose import Composed
from eoscheck.checker.compose.rules import _Rule, term_slot
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.registry import find_model
from eoscheck.examples.twophase_composed import ComposedTwoPhase
from eoscheck.model.machines.eos import machine

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from bench_eos import PLAN
from reachable_states import reachable

#: bench_eos's preset rows: kafka.eos's yardstick, the init_producer_id, idempotent_produce presets and
#: the pipeline shape (each has most of its slots constant)
ROWS = [0, 4, 5, 6]


def _build(row: int) -> Any:
    model, variant, bounds, _ = PLAN[row]
    return machine(variant, **bounds) if model == "kafka.eos" else find_model(model).machine(variant, bounds=bounds)


def _pair(row: int, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    packed = _build(row)
    monkeypatch.setattr(Composed, "pack_constants", False)
    plain = _build(row)
    monkeypatch.undo()
    return packed, plain




@pytest.mark.parametrize("row", ROWS)
def test_a_packed_machine_agrees_with_the_unpacked_one_state_by_state(row: int, monkeypatch: pytest.MonkeyPatch) -> None:
    packed, plain = _pair(row, monkeypatch)
    pp, up = packed._plan, plain._plan
    assert up.consts == {} and len(pp.consts) >= pp.width // 3, "the preset keeps most slots constant"
    assert [packed.logical(s) for s in packed.init_states()] == list(plain.init_states())
    props = plain.properties()
    invariants = [n for n, p in props.items() if p.kind == "invariant"]
    transitions = [n for n, p in props.items() if p.kind == "transition"]
    fused = packed.fused_invariants(invariants), plain.fused_invariants(invariants)
    fused_t = packed.fused_transitions(transitions) or {}, plain.fused_transitions(transitions) or {}
    pprops = packed.properties()
    symmetric = plain.has_symmetry()
    states = reachable(plain, 2500)
    assert len(states) >= 2500
    for u in states:
        s = pp.pack(u)
        assert len(s) == len(pp.live) < len(u) and packed.logical(s) == u
        assert [(st, packed.logical(t)) for st, t in packed.successors(s)] == plain.successors(u)
        assert packed.within_bounds(s) == plain.within_bounds(u)
        assert packed.fields(s) == plain.fields(u)
        assert fused[0](s) == fused[1](u)
        for name in invariants:
            assert pprops[name].check(s) == props[name].check(u), name
        if symmetric:
            assert packed.logical(packed.canonical(s)) == plain.canonical(u)
        for (st, t), (_, v) in zip(packed.successors(s), plain.successors(u)):
            for name in transitions:
                assert pprops[name].check(s, st, t) == props[name].check(u, st, v), (name, st)
            if st[0] in fused_t[1]:
                assert fused_t[0][st[0]](s, st, t) == fused_t[1][st[0]](u, st, v), st


@pytest.mark.parametrize("row", [0, 5])
def test_a_packed_run_has_the_unpacked_counts(row: int, monkeypatch: pytest.MonkeyPatch) -> None:
    packed, plain = _pair(row, monkeypatch)
    symmetry = PLAN[row][3]
    a = explore(packed, ExploreOptions(stop_at_first=False, symmetry=symmetry, max_states=20_000))
    b = explore(plain, ExploreOptions(stop_at_first=False, symmetry=symmetry, max_states=20_000))
    assert (a.stats.distinct, a.stats.generated, a.stats.depth, a.verdict) == (
        b.stats.distinct, b.stats.generated, b.stats.depth, b.verdict)


@pytest.mark.parametrize("row", ROWS)
def test_constant_slots_are_dropped_from_memo_keys(row: int, monkeypatch: pytest.MonkeyPatch) -> None:
    packed, plain = _pair(row, monkeypatch)
    consts = packed._plan.consts

    def terms(m: Any) -> list[Any]:
        out = []
        for r in m._plan.rules:
            if isinstance(r, _Rule) and r.receive is None:
                for b in r.bindings:
                    out += [*b.key_slots, *b.gate_slots]
        for obj in m._plan.property_objs.values():
            out += obj.key_slots if hasattr(obj, "key_slots") else [k for *_, ks, _ in obj.bindings for k in ks]
        return out

    assert not any(term_slot(k) in consts for k in terms(packed))
    assert any(term_slot(k) in consts for k in terms(plain)), "no key read a constant slot: the test checks nothing"


def test_a_slot_only_a_dropped_rule_writes_becomes_constant() -> None:
    m = ComposedTwoPhase(3)
    plan = m._plan
    k = m.slot("tm_prepared")
    assert k not in plan.consts
    width = len(next(iter(m.init_states())))
    plan.set_rules([r for r in plan.rules if r.action != "TMRcvPrepared"])
    assert k in plan.consts and plan.consts[k] == 0
    assert len(next(iter(m.init_states()))) == width - 1
    states = reachable(m, 10_000)
    assert len(states) > 10 and all(m.view(s).tm_prepared == 0 for s in states)
    assert not any(r.action == "TMRcvPrepared" for r in plan.rules)


def test_a_constant_part_cannot_be_given_another_value() -> None:
    from eoscheck.checker.compose import ComposeError
    m = ComposedTwoPhase(3)
    m._plan.set_rules([r for r in m._plan.rules if r.action != "TMRcvPrepared"])
    assert m.view(m.state(tm_prepared=0)).tm_prepared == 0
    with pytest.raises(ComposeError, match="tm_prepared: no compiled rule writes it"):
        m.state(tm_prepared=1)


def test_a_constant_without_a_literal_is_bound_by_name() -> None:
    """A plain scalar may hold a value whose repr is not Python (an IntEnum): generated readers bind
    it as a global, and ``slot_source`` without globals refuses it in one line."""
    import enum

    from eoscheck.checker.compose import ComposeError, Scalar, rule

    class Mode(enum.IntEnum):
        SLOW = 1

    class Counter(Composed):
        mode = Scalar(init=Mode.SLOW)
        n = Scalar(init=0)

        @rule("Inc", reads=("n",), writes=("n",))
        def inc(self, n: int) -> dict[str, int] | None:
            return {"n": n + 1} if n < 3 else None

    m = Counter()
    k = m.slot("mode")
    assert m.constant_slots() == {k: Mode.SLOW}
    init = next(iter(m.init_states()))
    assert len(init) == 1
    assert m.slot_reader([k, m.slot("n")])(init) == (Mode.SLOW, 0)
    env: dict[str, Any] = {}
    assert eval(f"lambda s: {m.slot_source(k, 's', env)}", env)(init) is Mode.SLOW
    with pytest.raises(ComposeError, match="has no literal"):
        m.slot_source(k)
    assert m.slot_source(m.slot("n")) == "s[0]"
