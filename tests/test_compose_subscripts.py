"""``checker.compose.subscripts``: generated memo lookups rewritten from ``get`` and a ``None`` test to
a subscript in a ``try``, with the same answers, memo contents and misses; the lines it cannot prove
equivalent stay as they are."""

from __future__ import annotations

import dis
from types import CodeType
from typing import Any

import pytest
from eoscheck.checker.compose.subscripts import subscripted

ONE_KEY = """def f(s):
    (s0, s1, ) = s
    k = s0
    g = gm.get(k)
    if g is None:
        g = miss(s, k)
    outs = m.get((s0, s1))
    if outs is None:
        calls.append((s0, s1))
        outs = m[(s0, s1)] = s0 + s1
    return g, outs"""

TWO_KEYS = """def f(s):
    try:
        outs = memo.get((F[s[0]], s[1]))
    except KeyError:
        outs = memo.get((P[s[0]], s[1]))
    if outs is None:
        outs = compute(s)
    return outs"""


def _run(source: str, env: dict[str, Any]) -> Any:
    exec(compile(source, "<test>", "exec"), env)  # noqa: S102
    return env["f"]


def _one_key_env() -> dict[str, Any]:
    calls: list[Any] = []
    gm: dict[int, int] = {}

    def miss(s: tuple, k: int) -> int:
        calls.append(("g", k))
        gm[k] = 10 * k
        return gm[k]

    return {"gm": gm, "m": {}, "miss": miss, "calls": calls}


def test_a_plain_key_lookup_becomes_a_subscript_with_the_same_answers_and_misses() -> None:
    new = subscripted(ONE_KEY)
    assert ".get(" not in new and "gm[k]" in new and "m[(s0, s1)]" in new and new.count("except KeyError:") == 2
    old_env, new_env = _one_key_env(), _one_key_env()
    old, rewritten = _run(ONE_KEY, old_env), _run(new, new_env)
    states = [(1, 2), (1, 2), (3, 4), (1, 5), (3, 4), (0, 0)]
    assert [old(s) for s in states] == [rewritten(s) for s in states]
    for name in ("gm", "m", "calls"):
        assert old_env[name] == new_env[name]
    assert old_env["calls"] == [("g", 1), (1, 2), ("g", 3), (3, 4), (1, 5), ("g", 0), (0, 0)]


def test_a_key_read_through_a_table_keeps_its_second_key_for_a_miss_of_either() -> None:
    new = subscripted(TWO_KEYS)
    assert "memo[(F[s[0]], s[1])]" in new and "memo.get((P[s[0]], s[1]))" in new

    def env() -> dict[str, Any]:
        computed: list[tuple] = []
        memo: dict[Any, Any] = {}
        plain = {1: "b"}  # the fast table knows 1 only (as the full one does); the full one every id

        class Full(dict[int, str]):
            def __missing__(self, key: int) -> str:
                return "abc"[key]

        def compute(s: tuple) -> str:
            computed.append(s)
            memo[(Full()[s[0]], s[1])] = out = f"{s}"
            return out

        return {"memo": memo, "F": plain, "P": Full(), "compute": compute, "computed": computed}

    old_env, new_env = env(), env()
    old, rewritten = _run(TWO_KEYS, old_env), _run(new, new_env)
    states = [(1, 0), (1, 0), (2, 0), (2, 0), (0, 1), (1, 1)]
    assert [old(s) for s in states] == [rewritten(s) for s in states]
    assert old_env["computed"] == new_env["computed"] == [(1, 0), (2, 0), (0, 1), (1, 1)]
    assert old_env["memo"] == new_env["memo"]


def test_lookups_it_cannot_prove_equivalent_are_left_as_they_are() -> None:
    sources = [
        # the key subscripts a table: its own KeyError would be taken for a miss
        "def f(s):\n    outs = m.get(F[s[0]])\n    if outs is None:\n        outs = g(s)\n    return outs",
        # an outcome's cache (a subscripted receiver): new with each outcome, it misses too often
        "def f(s, a):\n    x = s[0]\n    v0 = a[1].get(x)\n    if v0 is None:\n        v0 = a[2](x)\n    return v0",
        # a call in the key
        "def f(s):\n    outs = m.get(getter(s))\n    if outs is None:\n        outs = g(s)\n    return outs",
        # an ``else`` after the None test
        "def f(s):\n    v = m.get(s)\n    if v is None:\n        v = 1\n    else:\n        v = 2\n    return v",
        # another test than ``is None``, or another name
        "def f(s):\n    v = m.get(s)\n    if not v:\n        v = 1\n    return v",
        "def f(s):\n    v = m.get(s)\n    if w is None:\n        v = 1\n    return v",
        # no ``get`` at all
        "def f(s):\n    return s",
    ]
    for source in sources:
        assert subscripted(source) == source


def _gets(code: CodeType) -> int:
    """``get`` method loads in ``code`` and the functions it defines."""
    n = sum(1 for ins in dis.get_instructions(code) if ins.opname == "LOAD_METHOD" and ins.argval == "get")
    return n + sum(_gets(c) for c in code.co_consts if isinstance(c, CodeType))


#: bench_eos.py's plan row 4 (run with symmetry), whose first 4,000 states find violations
ROW4 = {"clients": 2, "max_epoch": 3, "lost_responses": 1, "failovers": 1, "abortable_errors": 2, "transactions": 2,
        "restarts": 1, "new_producer_ids": 3}


def _summary(rewrite: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, int]:
    from eoscheck.checker.compose import machine, properties
    from eoscheck.checker.explore import ExploreOptions, explore
    from eoscheck.checker.registry import find_model

    if not rewrite:
        for module in (machine, properties):
            monkeypatch.setattr(module, "subscripted", lambda source: source)
    m = find_model("kafka.init_producer_id").machine("kafka-shipped", bounds=ROW4)
    r = explore(m, ExploreOptions(stop_at_first=False, symmetry=True, max_states=4000))
    dedup = [d for d in m._plan._dedup.values() if d is not None]
    assert dedup
    monkeypatch.undo()
    summary = (r.verdict, r.stats.distinct, r.stats.generated, r.stats.depth, r.stats.coverage,
               [(v.property, [str(x) for x in v.trace]) for v in r.violations])
    return summary, _gets(dedup[0].expand.__code__)


def test_a_run_with_the_lookups_rewritten_equals_one_without(monkeypatch: pytest.MonkeyPatch) -> None:
    # a fresh process-wide cache would not matter: the texts differ, so each is compiled for itself
    plain, plain_gets = _summary(False, monkeypatch)
    rewritten, gets = _summary(True, monkeypatch)
    assert rewritten == plain
    assert plain[1] == 4000 and plain[2] > 4000 and plain[5]  # some violations, their traces compared
    assert gets < plain_gets  # the rewrite took effect on the generated successors
