"""Counterexample files: JSON round trip, ITF structure, atomic/safe writes, one-line load errors."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest
from eoscheck.checker.counterexample import (
    FORMAT,
    VERSION,
    CexStep,
    Counterexample,
    CounterexampleError,
    counterexample_from_violation,
    load_counterexample,
    to_json,
    write_counterexample,
)
from eoscheck.checker.itf import decode, encode, to_itf
from eoscheck.checker.machine import Machine, Property
from eoscheck.checker.result import Result, Stats, TraceStep, Violation


class Pair(Machine):
    """Two clients bump their epochs; ``Bounded`` fails once client 0 reaches 2."""

    actions: Mapping[str, tuple[str, ...]] = {"Bump": ("client", "by")}

    def init_states(self):
        return [((0, 0), 2**60)]

    def successors(self, state):
        epochs, big = state
        for c in range(2):
            nxt = list(epochs)
            nxt[c] += 1
            yield ("Bump", c, 1), (tuple(nxt), big + 1)

    def properties(self):
        return {"Bounded": Property("Bounded", "client 0's epoch stays below 2", "invariant",
                                    lambda s: s[0][0] < 2)}

    def fields(self, state):
        epochs, big = state
        return {"client[0].epoch": epochs[0], "client[1].epoch": epochs[1], "log.offset": big,
                "log.pair": (epochs[0], epochs[1]), "log.list": [epochs[0]], "flag": epochs[0] > 0}


class FakeSpec:
    name = "pair-bug"
    model = "toy.pair"
    variant = "plain"
    switches: Mapping[str, object] = {"mode": "fast", "strict": True}
    bounds: Mapping[str, int] = {"clients": 2}


def make_cex() -> Counterexample:
    m = Pair()
    s0 = ((0, 0), 2**60)
    s1 = ((1, 0), 2**60 + 1)
    s2 = ((1, 1), 2**60 + 2)
    s3 = ((2, 1), 2**60 + 3)
    trace = [TraceStep(None, s0), TraceStep(("Bump", 0, 1), s1), TraceStep(("Bump", 1, 1), s2),
             TraceStep(("Bump", 0, 1), s3)]
    violation = Violation("Bounded", "invariant", trace, found_length=6,
                          shortened_by="bfs over trace neighbourhood")
    result = Result("violated", "dfs", Stats(distinct=10, generated=20, depth=4), [violation])
    return counterexample_from_violation(m, FakeSpec(), violation, result)


def test_from_violation_names_steps_and_fields():
    cex = make_cex()
    assert cex.length == 4 and cex.found_length == 6
    assert cex.property_doc == "client 0's epoch stays below 2" and cex.kind == "invariant"
    assert cex.steps[0].action is None and cex.steps[0].label == "Initial state"
    assert cex.steps[1].label == "Bump(client=0, by=1)"
    assert cex.steps[2].params == {"client": 1, "by": 1}
    assert cex.steps[3].state["client[0].epoch"] == 2
    assert cex.engine["strategy"] == "dfs" and cex.engine["distinct"] == 10
    assert cex.switches == {"mode": "fast", "strict": True} and cex.bounds == {"clients": 2}


def test_json_round_trip(tmp_path):
    cex = make_cex()
    paths = write_counterexample(cex, tmp_path / "out")
    assert [p.name for p in paths] == ["pair-bug.Bounded.json", "pair-bug.Bounded.itf.json"]
    data = json.loads(paths[0].read_text())
    assert data["format"] == FORMAT and data["version"] == VERSION and data["length"] == 4
    loaded = load_counterexample(paths[0])
    # JSON has no tuples: compare against the JSON form of the original
    assert to_json(loaded) == json.loads(json.dumps(to_json(cex)))
    assert loaded.steps[3].state["log.pair"] == [2, 1]
    # no temporary files are left behind
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(p.name for p in paths)


def test_rewrite_is_identical(tmp_path):
    cex = make_cex()
    first = [p.read_bytes() for p in write_counterexample(cex, tmp_path)]
    second = [p.read_bytes() for p in write_counterexample(cex, tmp_path)]
    assert first == second


def test_itf_structure():
    itf = to_itf(make_cex())
    assert itf["#meta"]["format"] == "ITF" and itf["#meta"]["generator"] == "eoscheck"
    assert itf["#meta"]["eoscheck"]["property"] == "Bounded"
    assert itf["vars"] == ["client[0].epoch", "client[1].epoch", "log.offset", "log.pair",
                           "log.list", "flag"]
    assert [s["#meta"]["index"] for s in itf["states"]] == [0, 1, 2, 3]
    assert itf["states"][1]["#meta"]["label"] == "Bump(client=0, by=1)"
    last = itf["states"][3]
    assert last["client[0].epoch"] == {"#bigint": "2"}  # every integer, not only beyond 2^53
    assert last["log.offset"] == {"#bigint": str(2**60 + 3)}
    assert last["log.pair"] == {"#tup": [{"#bigint": "2"}, {"#bigint": "1"}]}
    assert last["log.list"] == [{"#bigint": "2"}]
    assert last["flag"] is True
    for state in itf["states"]:
        assert set(state) == set(itf["vars"]) | {"#meta"}


def test_itf_value_encoding_round_trip():
    big = lambda n: {"#bigint": str(n)}
    assert encode(0) == big(0) and encode(-(2**53)) == big(-(2**53))
    assert encode({1: "a"}) == {"#map": [[big(1), "a"]]}
    assert encode({"client[0]": 1}) == {"#map": [["client[0]", big(1)]]}  # not a field name
    assert encode({}) == {"#map": []}
    assert encode(frozenset({2, 1})) == {"#set": [big(1), big(2)]}
    assert encode({"x": (1, True)}) == {"x": {"#tup": [big(1), True]}}
    assert encode(None) == {"#unserializable": "None"}
    assert decode(encode({"x": (1, 2**70), "m": {3: [4]}})) == {"x": [1, 2**70], "m": {"3": [4]}}


def test_itf_loads_for_the_viewer(tmp_path):
    cex = make_cex()
    _, itf_path = write_counterexample(cex, tmp_path)
    loaded = load_counterexample(itf_path)
    assert loaded.spec == "pair-bug" and loaded.property == "Bounded" and loaded.length == 4
    assert loaded.steps[1].label == "Bump(client=0, by=1)" and loaded.steps[1].action == "Bump"
    assert loaded.steps[3].state["log.offset"] == 2**60 + 3


def test_foreign_itf_trace_loads(tmp_path):
    path = tmp_path / "quint.itf.json"
    path.write_text(json.dumps({"#meta": {"source": "bank.qnt"}, "vars": ["x"], "states": [
        {"#meta": {"index": 0}, "x": {"#bigint": "1"}},
        {"#meta": {"index": 1}, "x": {"#bigint": "2"}, "mbt::actionTaken": "deposit"}]}))
    cex = load_counterexample(path)
    assert cex.spec == "bank.qnt" and cex.property == "?"
    assert [s.label for s in cex.steps] == ["Initial state", "deposit"]
    assert cex.steps[1].state["x"] == 2


def test_never_overwrites_a_foreign_file(tmp_path):
    cex = make_cex()
    mine = tmp_path / "pair-bug.Bounded.json"
    mine.write_text('{"my": "notes"}')
    with pytest.raises(CounterexampleError) as err:
        write_counterexample(cex, tmp_path)
    assert str(err.value).startswith(f"{mine}: exists and is not an eoscheck counterexample")
    assert mine.read_text() == '{"my": "notes"}'
    assert not (tmp_path / "pair-bug.Bounded.itf.json").exists()


def good_json() -> dict:
    return json.loads(json.dumps(to_json(make_cex())))


def _mutate(mutation):
    data = good_json()
    mutation(data)
    return json.dumps(data)


LOAD_ERRORS = [
    ("{not json", "not a JSON file (Expecting property name"),
    ("[1, 2]", "not an eoscheck counterexample (the top level is a list"),
    ('{"hello": 1}', 'not an eoscheck counterexample (no "format" field'),
    ('{"format": "tlc-trace"}', "not an eoscheck counterexample (format 'tlc-trace'"),
    (_mutate(lambda d: d.update(version=2)), "unsupported counterexample version 2 (this eoscheck reads version 1)"),
    (_mutate(lambda d: d.pop("property")), "missing field 'property'"),
    (_mutate(lambda d: d.update(bounds=[])), "field 'bounds' must be an object, got an array"),
    (_mutate(lambda d: d.update(found_length=True)), "field 'found_length' must be an integer, got a boolean"),
    (_mutate(lambda d: d.update(steps=[])), "field 'steps' is empty"),
    (_mutate(lambda d: d["steps"][2].pop("label")), "missing field 'steps[2].label'"),
    (_mutate(lambda d: d["steps"][1].update(state="x")), "field 'steps[1].state' must be an object, got a string"),
    (_mutate(lambda d: d["steps"][2].update(index=7)), "field 'steps[2].index' is 7, expected 2"),
    (_mutate(lambda d: d["steps"][1].update(action=None)), "field 'steps[1].action' must be a string"),
    (_mutate(lambda d: d.update(length=9)), "field 'length' is 9 but 'steps' holds 4 states"),
    ('{"vars": "x", "states": []}', "not a valid ITF trace ('vars' must be an array"),
]


@pytest.mark.parametrize("text,fragment", LOAD_ERRORS)
def test_load_errors_are_one_line(tmp_path, text, fragment):
    path = tmp_path / "c.json"
    path.write_text(text)
    with pytest.raises(CounterexampleError) as err:
        load_counterexample(path)
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"{path}: ")
    assert fragment in message, message


def test_load_missing_and_binary(tmp_path):
    with pytest.raises(CounterexampleError, match="no such file"):
        load_counterexample(tmp_path / "absent.json")
    binary = tmp_path / "b.json"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\xff")
    with pytest.raises(CounterexampleError, match="not a JSON file"):
        load_counterexample(binary)


def test_hand_built_counterexample_writes(tmp_path):
    # The Z3 helper builds CexStep lists directly from solver models.
    cex = Counterexample(spec="z3", model="m", variant="v", switches={}, bounds={},
                         property="P", property_doc="", kind="invariant",
                         engine={"strategy": "z3"}, found_length=2, shortened_by="",
                         steps=[CexStep(0, None, "Initial state", {}, {"x": 0}),
                                CexStep(1, "A", "A()", {}, {"x": 1})])
    json_path, _ = write_counterexample(cex, tmp_path)
    assert load_counterexample(json_path).steps[1].state == {"x": 1}
    assert Path(json_path).name == "z3.P.json"
