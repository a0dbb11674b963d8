"""ITF as the format stands (ADR-015 as revised, itf-py 0.5): every integer a #bigint, typed
values (#tup, #set, #map, records), every variable in every state, an optional lasso loop; our
files pass itf-py's parser, and malformed ITF is one line for ``eoscheck show``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import itf_py
import pytest
from eoscheck.checker.counterexample import CexStep, Counterexample, load_counterexample
from eoscheck.checker.itf import decode, encode, to_itf

REPO = Path(__file__).resolve().parents[1]
COMMITTED = sorted((REPO / "counterexamples").rglob("*.itf.json"))
KAFKA = [p for p in COMMITTED if json.loads(p.read_text())["#meta"]["eoscheck"]["model"].startswith("kafka.")]


def plain_numbers(value: Any, where: str = "") -> list[str]:
    """Where a JSON number stands for an integer (no longer allowed)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return []
    if isinstance(value, (int, float)):
        return [where]
    if isinstance(value, list):
        return [w for i, v in enumerate(value) for w in plain_numbers(v, f"{where}[{i}]")]
    return [w for k, v in value.items() if k != "#meta" for w in plain_numbers(v, f"{where}.{k}")]


@pytest.mark.parametrize("path", COMMITTED, ids=[p.name for p in COMMITTED])
def test_committed_itf_files_pass_itf_py_and_are_typed(path):
    data = json.loads(path.read_text())
    trace = itf_py.trace_from_json(data)
    assert trace.vars == data["vars"] and len(trace.states) == len(data["states"])
    for state in trace.states:
        assert set(state.values) == set(trace.vars)  # every state carries every variable
    assert plain_numbers(data["states"]) == []


@pytest.mark.parametrize("path", KAFKA, ids=[p.name for p in KAFKA])
def test_kafka_traces_carry_records_not_descriptions(path):
    data = json.loads(path.read_text())
    for state in data["states"]:
        for name, value in state.items():
            if name == "#meta" or not isinstance(value, list):
                continue
            # a list of parts (log entries, requests, batches) is a list of records, not of
            # one-line descriptions such as "pid 1: epoch 0, ..."
            assert not any(isinstance(v, str) and any(ch.isdigit() for ch in v) for v in value), (name, value)


def test_encoding_is_what_itf_py_reads_back():
    value = {"t": (1, True), "s": frozenset({3, 1}), "m": {2: "x"}, "seq": [-(2**70), 0], "r": {"a": 1}}
    back = itf_py.value_from_json(encode(value))
    assert back.t == (1, True) and back.s == frozenset({1, 3}) and dict(back.m) == {2: "x"}
    assert list(back.seq) == [-(2**70), 0] and back.r.a == 1
    # and what itf-py writes, we read
    assert decode(itf_py.value_to_json((5, frozenset({2})))) == [5, [2]]


def test_record_keys_itf_py_cannot_name_become_a_map():
    for key in ("client[0]", "_hidden", "class", "1st"):
        encoded = encode({key: 1})
        assert "#map" in encoded
        itf_py.value_from_json(encoded)  # would raise if written as a record


def cex(states: list[dict[str, Any]], data: list[dict[str, Any] | None] | None = None) -> Counterexample:
    data = data or [None] * len(states)
    steps = [CexStep(i, None if i == 0 else "Step", "Initial state" if i == 0 else "Step()", {}, s, d)
             for i, (s, d) in enumerate(zip(states, data))]
    return Counterexample("toy", "m", "v", {}, {}, "P", "", "invariant", {}, len(steps), "", steps)


def test_a_variable_a_state_leaves_out_is_still_there():
    itf = to_itf(cex([{"a": 1}, {"a": 2, "b": 3}]))
    assert itf["vars"] == ["a", "b"]
    assert itf["states"][0]["b"] == {"#unserializable": "undefined: this state does not define the variable"}
    itf_py.trace_from_json(itf)


def test_typed_data_goes_to_itf_and_descriptions_stay_in_json():
    trace = cex([{"log": ["pid 1 epoch 0"]}], [{"log": [{"pid": 1, "epoch": 0}]}])
    itf = to_itf(trace)
    assert itf["states"][0]["log"] == [{"pid": {"#bigint": "1"}, "epoch": {"#bigint": "0"}}]


def test_loop_index_makes_a_lasso():
    trace = cex([{"a": 0}, {"a": 1}, {"a": 2}])
    itf = to_itf(trace, loop=1)
    assert itf["loop"] == 1 and itf_py.trace_from_json(itf).loop == 1
    assert "loop" not in to_itf(trace)
    with pytest.raises(ValueError, match="outside the trace"):
        to_itf(trace, loop=3)


def test_our_itf_reads_back_with_integers(tmp_path):
    path = tmp_path / "x.itf.json"
    path.write_text(json.dumps(to_itf(cex([{"a": 2**60, "p": (1, 2)}]))))
    loaded = load_counterexample(path)
    assert loaded.steps[0].state == {"a": 2**60, "p": [1, 2]}


DEEP = 200_000


@pytest.mark.parametrize("value,fragment", [
    ({"#map": [[1]]}, "#map entry 0 must be a [key, value] pair"),
    ({"#map": 7}, "#map must hold an array"),
    ({"#bigint": "12x"}, "#bigint must be a string of decimal digits"),
    ({"#bigint": 12}, "#bigint must be a string of decimal digits"),
    # a valid number, but longer than eoscheck reads: the line says so (it said only "decimal digits")
    ({"#bigint": "9" * 5000}, "#bigint must be a string of decimal digits (at most 4000)"),
    ({"#tup": "ab"}, "#tup must hold an array"),
    ({"#set": {"a": 1}}, "#set must hold an array"),
])
def test_malformed_itf_value_is_one_line_for_show(tmp_path, capsys, value, fragment):
    from eoscheck.checker.cli import main

    path = tmp_path / "bad.itf.json"
    path.write_text(json.dumps({"vars": ["x"], "states": [{"#meta": {"index": 0}, "x": value}]}))
    assert main(["show", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and fragment in err and "states[0].x" in err, err


@pytest.mark.parametrize("opening,closing", [("[", "]"), ('{"a":', "}")])
def test_200000_deep_json_is_one_line_for_show(tmp_path, capsys, opening, closing):
    from eoscheck.checker.cli import main

    path = tmp_path / "deep.json"
    path.write_text('{"vars": ["x"], "states": [{"x": ' + opening * DEEP + "1" + closing * DEEP + "}]}")
    assert main(["show", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nested too deeply" in err, err
