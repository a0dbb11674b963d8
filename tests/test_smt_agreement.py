"""One definition, two engines: every shared rule read as a Z3 term agrees with its execution on
Python ints, on random inputs of the real widths (biased to the boundaries where rules branch)."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest
import z3
from eoscheck.checker.ops import CONCRETE
from eoscheck.checker.smt.ops import Z3OPS, evaluate, narrow
from eoscheck.model.obligations import MUTATIONS, VARIANTS
from eoscheck.model.proof_rules import MAX_EPOCH, MAX_SEQ, RULES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: the mutated rule sets re-check every InitProducerId variant per example: fewer examples
MUTATION_SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def values(width: int, kind: str) -> st.SearchStrategy[Any]:
    if kind == "bool":
        return st.booleans()
    lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
    edges = [lo, lo + 1, -2, -1, 0, 1, 2, hi - 1, hi]
    if width == 16:
        edges += [MAX_EPOCH - 2, MAX_EPOCH - 1, MAX_EPOCH]
    if width == 32:
        edges += [MAX_SEQ - 2, MAX_SEQ - 1]
    small = st.integers(min_value=-3, max_value=8)
    return st.one_of(st.sampled_from(edges), small, st.integers(min_value=lo, max_value=hi))


def symbol(name: str, width: int, kind: str) -> Any:
    return z3.Bool(name) if kind == "bool" else z3.BitVec(name, width)


@cache
def symbolic(rule_name: str) -> tuple[dict[str, Any], Any]:
    """The rule's Z3 term, built once: the same function the explorer runs, on Z3OPS."""
    rule = RULES[rule_name]
    variables = {name: symbol(name, width, kind) for name, width, kind in rule.args}
    return variables, rule.func(Z3OPS, **variables)


def as_tuple(result: Any) -> tuple[Any, ...]:
    return tuple(result) if isinstance(result, tuple) else (result,)


def normalise(value: Any) -> Any:
    return bool(value) if isinstance(value, bool) else int(value)


@pytest.mark.parametrize("rule_name", sorted(RULES))
def test_rule_reads_the_same_on_ints_and_on_bit_vectors(rule_name: str) -> None:
    rule = RULES[rule_name]
    variables, term = symbolic(rule_name)
    arg_strategy = st.fixed_dictionaries({name: values(width, kind) for name, width, kind in rule.args})

    @SETTINGS
    @given(arg_strategy)
    def check(args: dict[str, Any]) -> None:
        concrete = as_tuple(rule.func(CONCRETE, **args))
        symbolic_value = as_tuple(evaluate(term, {variables[n]: v for n, v in args.items()}))
        assert [normalise(v) for v in symbolic_value] == [normalise(v) for v in concrete], args

    check()


def test_every_rule_is_covered_and_has_declared_widths() -> None:
    # The agreement above runs over RULES; make sure the five shared rules are all in it.
    families = {name.split(".")[0] for name in RULES}
    assert {"init_producer_id_decision", "fence_producer_epoch", "bump_idempotent_epoch", "in_sequence",
            "increment_sequence"} <= families
    for rule in RULES.values():
        assert rule.args and all(kind in ("int", "bool") for _, _, kind in rule.args)
        for _, width, kind in rule.args:
            assert (width == 1) if kind == "bool" else width in (16, 32, 64)


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_mutated_rule_sets_agree_too(mutation: str) -> None:
    # A mutation moves a rule's parameter beyond the field's width (max_epoch 2^20, max_seq 2^33):
    # the Z3 reading must still agree with Python's, or its counterexamples would be artefacts.
    rules = MUTATIONS[mutation][1]
    e, hf, pid = z3.BitVec("e", 16), z3.Bool("hf"), z3.BitVec("pid", 64)
    seq, inc = z3.BitVec("seq", 32), z3.BitVec("inc", 32)
    fence_t = rules.fence(Z3OPS, e, hf)
    bump_t = rules.idempotent_bump(Z3OPS, pid, e)
    inc_t = rules.increment(Z3OPS, seq, inc)
    init_vars = {name: symbol(name, width, kind)
                 for name, width, kind in RULES["init_producer_id_decision.kip360_shipped"].args}
    init_t = {v: rules.init_pid(Z3OPS, v, **init_vars) for v in VARIANTS}
    init_args = st.fixed_dictionaries({name: values(width, kind) for name, width, kind
                                       in RULES["init_producer_id_decision.kip360_shipped"].args})

    @MUTATION_SETTINGS
    @given(values(16, "int"), st.booleans(), values(64, "int"), values(32, "int"), values(32, "int"), init_args)
    def check(ev: int, hv: bool, pv: int, sv: int, iv: int, args: dict[str, Any]) -> None:
        assert evaluate(fence_t, {e: ev, hf: hv}) == rules.fence(CONCRETE, ev, hv)
        assert [normalise(x) for x in evaluate(bump_t, {pid: pv, e: ev})] == \
            [normalise(x) for x in rules.idempotent_bump(CONCRETE, pv, ev)]
        assert evaluate(inc_t, {seq: sv, inc: iv}) == rules.increment(CONCRETE, sv, iv)
        for variant, term in init_t.items():
            got = evaluate(term, {init_vars[n]: v for n, v in args.items()})
            assert [int(x) for x in got] == [int(x) for x in rules.init_pid(CONCRETE, variant, **args)]

    check()


# --- the operations themselves -----------------------------------------------------------------

OPS2 = ["eq", "ne", "lt", "le", "gt", "ge", "add", "sub"]


@pytest.mark.parametrize("op", OPS2)
@SETTINGS
@given(a=values(16, "int"), b=values(64, "int"))
def test_binary_ops_agree_across_mixed_widths(op: str, a: int, b: int) -> None:
    x, y = z3.BitVec("x", 16), z3.BitVec("y", 64)
    term = getattr(Z3OPS, op)(x, y)
    assert normalise(evaluate(term, {x: a, y: b})) == normalise(getattr(CONCRETE, op)(a, b))
    # and with a Python int on one side, as rules write constants
    term2 = getattr(Z3OPS, op)(x, b)
    assert normalise(evaluate(term2, {x: a})) == normalise(getattr(CONCRETE, op)(a, b))


@SETTINGS
@given(a=values(32, "int"), b=values(32, "int"), width=st.sampled_from([8, 16, 32]))
def test_wrap_add_is_java_overflow(a: int, b: int, width: int) -> None:
    x, y = z3.BitVec("x", 32), z3.BitVec("y", 32)
    assert evaluate(Z3OPS.wrap_add(x, y, width), {x: a, y: b}) == CONCRETE.wrap_add(a, b, width)


def test_add_widens_instead_of_wrapping() -> None:
    e = z3.BitVec("e", 16)
    assert evaluate(Z3OPS.add(e, 1), {e: MAX_EPOCH}) == MAX_EPOCH + 1
    assert evaluate(narrow(Z3OPS.add(e, 1), 16), {e: MAX_EPOCH}) == -(MAX_EPOCH + 1)


def test_constants_keep_their_value_beyond_the_nominal_width() -> None:
    e = z3.BitVec("e", 16)
    big = Z3OPS.const(2**20, 16)
    assert evaluate(Z3OPS.lt(e, big), {e: MAX_EPOCH}) is True
    assert evaluate(Z3OPS.const(-1, 16), {}) == -1


def test_ite_over_named_tuples_keeps_the_type() -> None:
    from eoscheck.model.coordinator.init_producer_id import InitPidOutcome

    c = z3.Bool("c")
    a = InitPidOutcome(0, 1, 2, 3, 4)
    b = InitPidOutcome(9, 8, 7, 6, 5)
    out = Z3OPS.ite(c, a, b)
    assert isinstance(out, InitPidOutcome)
    assert evaluate(out, {c: True}) == a and evaluate(out, {c: False}) == b
