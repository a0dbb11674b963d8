"""The per-process cache of compiled generated code (``checker.compose.code_cache``): a second build
of one configuration compiles nothing, machines share code objects but never globals, and machines
that differ in a bound or switch keep their own behaviour whatever was built before them."""

from __future__ import annotations

import pytest
from eoscheck.checker.compose import code_cache
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.examples.twophase import TwoPhase
from eoscheck.examples.twophase_composed import ComposedTwoPhase
from eoscheck.model.machines.eos import machine as eos_machine


def _summary(m: object) -> tuple[str, int, int, int, list[str]]:
    r = explore(m, ExploreOptions(stop_at_first=False))  # type: ignore[arg-type]
    return (r.verdict, r.stats.distinct, r.stats.generated, r.stats.depth, sorted({v.property for v in r.violations}))


def test_second_build_compiles_nothing_and_shares_code_not_globals() -> None:
    first = ComposedTwoPhase(3)
    misses = code_cache.compiled.cache_info().misses
    second = ComposedTwoPhase(3)
    assert code_cache.compiled.cache_info().misses == misses
    assert first._plan.source == second._plan.source
    one, two = first._plan._compile_successors(), second._plan._compile_successors()
    assert one is not two and one.__code__ is two.__code__
    assert one.__globals__ is not two.__globals__


def test_kafka_eos_second_build_compiles_nothing() -> None:
    eos_machine("kafka-4.0", restarts=1)
    misses = code_cache.compiled.cache_info().misses
    eos_machine("kafka-4.0", restarts=1)
    assert code_cache.compiled.cache_info().misses == misses


def test_a_bound_changes_the_text_and_each_machine_keeps_its_own() -> None:
    one = eos_machine("kafka-4.0", lost_responses=0)
    two = eos_machine("kafka-4.0", lost_responses=1)
    assert one._plan.source != two._plan.source
    assert "LoseResponse" in two.actions and "LoseResponse" not in one.actions


@pytest.mark.parametrize("rms", [2, 3])
def test_verdicts_and_counts_do_not_depend_on_what_was_built_before(rms: int) -> None:
    # each configuration, built after the others (cache warm) and alone (cache emptied), agrees
    # with itself and with the hand-written machine
    configs = [dict(rms=rms), dict(rms=rms, seeded_bug=True), dict(rms=rms + 1)]
    warm = [_summary(ComposedTwoPhase(**c)) for c in configs]  # type: ignore[arg-type]
    cold = []
    for c in configs:
        code_cache.compiled.cache_clear()
        cold.append(_summary(ComposedTwoPhase(**c)))  # type: ignore[arg-type]
    assert warm == cold
    assert warm[0][1:4] == _summary(TwoPhase(rms))[1:4]
    assert warm[0][0] == "holds" and warm[1][0] == "violated"


def test_compiled_is_compile() -> None:
    source = "def f(x):\n    return x + 1\n"
    code = code_cache.compiled(source, "<test>")
    assert code is code_cache.compiled(source, "<test>")
    assert code.co_consts == compile(source, "<test>", "exec").co_consts
    assert code is not code_cache.compiled(source, "<other>")  # the file name is part of the key
    env: dict[str, object] = {}
    code_cache.run(source, "<test>", env)
    assert env["f"](1) == 2  # type: ignore[operator]
