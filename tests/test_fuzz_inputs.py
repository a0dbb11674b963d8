"""Hypothesis over what users feed the CLI: spec TOML and counterexample JSON/ITF, generated and
mutated. The promise: any outcome other than a verdict is exit 2 with exactly one line on stderr,
never a traceback, and the input file is left as it was."""

from __future__ import annotations

import json
import os
import random
import stat
from pathlib import Path
from typing import Any

import pytest
from eoscheck.checker.cli import main
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[1]
CEX_FILES = [REPO / "counterexamples" / n for n in (
    "diehard-big-jug-reaches-4.NotSolved.json", "diehard-big-jug-reaches-4.NotSolved.itf.json",
    "kip854-expiry-shorter-than-delivery-timeout.NoDuplicates.itf.json")]
FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                         HealthCheck.too_slow])

MODELS = ["examples.diehard", "examples.twophase", "examples.tcommit", "kafka.idempotent_produce",
          "kafka.init_producer_id", "kafka.eos_pipeline", "no.such.model"]
KEYS = {
    None: ["name", "description", "model", "variant", "switches", "bounds", "check", "expect", "junk"],
    "switches": ["client_version", "deployment", "kip890_verification", "nope"],
    "bounds": ["small", "big", "goal", "rms", "records", "clients", "instances", "max_epoch", "huge"],
    "check": ["properties", "strategy", "deadlock", "continue", "max_states", "max_depth", "max_seconds",
              "symmetry", "walks", "walk_depth", "seed", "workers", "speed"],
    "expect": ["verdict", "property", "length", "why"],
}
SCALARS = st.one_of(
    st.integers(min_value=-3, max_value=25), st.integers(), st.booleans(),
    st.sampled_from(["holds", "violates", "NotSolved", "TCConsistent", "bfs", "dfs", "simulate",
                     "deadlock", "kip360", "per-thread", "", "movie", "tla"] + MODELS),
    st.text(max_size=12), st.floats(allow_nan=False, allow_infinity=False, width=32))
VALUES = st.one_of(SCALARS, st.lists(SCALARS, max_size=3))


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a TOML basic string
    return "[" + ", ".join(toml_value(v) for v in value) + "]"


@st.composite
def spec_texts(draw: Any) -> str:
    lines = [f"model = {json.dumps(draw(st.sampled_from(MODELS)))}"]
    for key in draw(st.lists(st.sampled_from(["name", "variant", "description", "junk"]), max_size=2,
                             unique=True)):
        lines.append(f"{key} = {toml_value(draw(VALUES))}")
    for table in draw(st.lists(st.sampled_from(["switches", "bounds", "check", "expect"]), max_size=4,
                               unique=True)):
        lines.append(f"[{table}]")
        for key in draw(st.lists(st.sampled_from(KEYS[table]), max_size=3, unique=True)):
            lines.append(f"{key} = {toml_value(draw(VALUES))}")
    text = "\n".join(lines) + "\n"
    if draw(st.integers(0, 9)) == 0:  # now and then, damage the text itself
        cut = draw(st.integers(0, len(text)))
        text = text[:cut] + draw(st.text(max_size=5)) + text[cut:]
    return text


def files_of(root: Path) -> dict[str, Any]:
    return {str(p): (p.read_bytes(), stat.S_IMODE(os.stat(p).st_mode)) for p in root.rglob("*") if p.is_file()}


def check_promise(code: int, err: str, allowed: tuple[int, ...]) -> None:
    assert code in allowed, (code, err)
    assert "Traceback" not in err, err
    if code == 2:
        assert err.count("\n") == 1 and err.startswith("eoscheck"), err


@FUZZ
@given(text=spec_texts())
def test_fuzzed_spec_toml(tmp_path, capsys, text):
    specs = tmp_path / "specs"
    specs.mkdir(exist_ok=True)
    path = specs / "fuzz.toml"
    path.write_text(text)
    before = files_of(specs)
    capsys.readouterr()
    # a valid spec runs (bounded, so a large model cannot take long); anything else is exit 2
    code = main(["check", str(path), "--no-progress", "--max-states", "60", "--max-seconds", "5",
                 "--out", str(tmp_path / "cx")])
    _, err = capsys.readouterr()
    event(f"exit {code}")
    check_promise(code, err, (0, 1, 2))
    assert files_of(specs) == before


def mutate(value: Any, rng: random.Random, replacement: Any) -> Any:
    """``value`` with one randomly chosen subtree replaced."""
    if not isinstance(value, (dict, list)) or not value or rng.random() < 0.2:
        return replacement
    if isinstance(value, dict):
        key = rng.choice(list(value))
        if rng.random() < 0.1:
            return {k: v for k, v in value.items() if k != key}  # drop a key
        return {**value, key: mutate(value[key], rng, replacement)}
    i = rng.randrange(len(value))
    return value[:i] + [mutate(value[i], rng, replacement)] + value[i + 1:]


JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8),
              st.sampled_from([{"#bigint": "x"}, {"#bigint": "12"}, {"#map": [[1]]}, {"#map": [[1, 2]]},
                               {"#tup": 1}, {"#set": []}, {"#unserializable": 3}, {"#meta": 1}])),
    lambda children: st.one_of(st.lists(children, max_size=3),
                               st.dictionaries(st.text(max_size=6), children, max_size=3)),
    max_leaves=8)


@pytest.mark.parametrize("source", CEX_FILES, ids=[p.name for p in CEX_FILES])
@FUZZ
@given(seed=st.integers(0, 2**32 - 1), replacement=JSON)
def test_fuzzed_counterexample(tmp_path, capsys, source, seed, replacement):
    data = mutate(json.loads(source.read_text()), random.Random(seed), replacement)
    path = tmp_path / source.name
    path.write_text(json.dumps(data))
    before = files_of(tmp_path)
    capsys.readouterr()
    code = main(["show", str(path), "--width", "60"])
    _, err = capsys.readouterr()
    event(f"exit {code}")
    check_promise(code, err, (0, 2))
    assert files_of(tmp_path) == before
