"""Model modules given by path (``checker.pathmodel``): ``model = "file.py:ATTR"`` relative to the
spec, a module next to the spec by name, ``--model file.py:ATTR``; machines defined in such a file
run on the parallel engine and unpickle in a fresh interpreter; Spark refuses them in one line.
Bad model files are in tests/test_bad_input.py."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from eoscheck.checker.cli import main
from eoscheck.checker.pathmodel import is_path_model, resolve, split_reference
from eoscheck.checker.registry import (
    Bound,
    ModelDef,
    Switch,
    Variant,
    derive_model,
    find_model,
)
from eoscheck.checker.spec import build_machine, load_spec

# A machine whose states hold a class of the file itself: unpickling a state needs the file.
COUNTER = '''
from typing import NamedTuple
from eoscheck.checker.machine import Machine, Property
from eoscheck.checker.registry import Bound, ModelDef, Variant


class Jar(NamedTuple):
    coins: int
    flips: int


class Coins(Machine):
    actions = {"Add": (), "Flip": ()}

    def __init__(self, limit):
        self.limit = limit

    def init_states(self):
        yield Jar(0, 0)

    def successors(self, s):
        if s.coins < self.limit:
            yield ("Add",), Jar(s.coins + 1, s.flips)
        if s.flips < self.limit:
            yield ("Flip",), Jar(s.coins, s.flips + 1)

    def fields(self, s):
        return {"coins": s.coins, "flips": s.flips}

    def properties(self):
        return {"Few": Property("Few", "never limit coins", "invariant", lambda s: s.coins < self.limit)}


def _build(switches, bounds):
    return Coins(bounds["limit"])


MODELS = [ModelDef(name="mine.coins", doc="coins in a jar", variants={"plain": Variant("as is"), "same": Variant("as is, by another name")},
                   default_variant="plain", switches={}, bounds={"limit": Bound("coins", 3, 1, 30)},
                   properties={"Few": "never limit coins"}, build=_build)]
'''
SPEC = '[bounds]\nlimit = 4\n[expect]\nverdict = "violates"\nproperty = "Few"\n'


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """models/coins.py, specs/by-path.toml (../models/coins.py:MODELS), specs/coins_here.py with
    specs/by-name.toml (coins_here:MODELS); the working directory is elsewhere."""
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "coins.py").write_text(COUNTER)
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "by-path.toml").write_text('model = "../models/coins.py:MODELS"\n' + SPEC)
    (tmp_path / "specs" / "coins_here.py").write_text(COUNTER.replace("mine.coins", "here.coins"))
    (tmp_path / "specs" / "by-name.toml").write_text('model = "coins_here:here.coins"\n' + SPEC)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    monkeypatch.delenv("PYTHONPATH", raising=False)
    return tmp_path


def test_references_split_and_resolve(tmp_path: Path) -> None:
    assert split_reference("a/b.py:MODELS") == ("a/b.py", "MODELS")
    assert split_reference("a/b.py") == ("a/b.py", None)
    assert split_reference("pkg.mod:MODELS") == ("pkg.mod:MODELS", None)
    assert is_path_model("x.py:M") and not is_path_model("kafka.eos") and not is_path_model("a.b:MODELS")
    # a registered name and an importable module stay as they are
    assert resolve("kafka.eos", tmp_path) == "kafka.eos"
    assert resolve("eoscheck.examples.registry:MODELS", tmp_path) == "eoscheck.examples.registry:MODELS"
    assert resolve("sub/m.py:X", tmp_path) == str(tmp_path / "sub" / "m.py") + ":X"


def test_spec_path_is_relative_to_the_spec_not_the_working_directory(tree: Path) -> None:
    spec = load_spec(tree / "specs" / "by-path.toml")
    assert spec.model == str(tree / "models" / "coins.py") + ":MODELS"
    assert find_model(spec.model).name == "mine.coins"
    assert build_machine(spec).limit == 4  # type: ignore[attr-defined]


def test_module_next_to_the_spec_is_found_by_name(tree: Path) -> None:
    spec = load_spec(tree / "specs" / "by-name.toml")
    assert spec.model == str(tree / "specs" / "coins_here.py") + ":here.coins"
    assert find_model(spec.model).name == "here.coins"


def test_a_module_name_not_next_to_the_spec_is_imported_as_usual(tree: Path) -> None:
    (tree / "specs" / "installed.toml").write_text('model = "eoscheck.model.machines.eos_model:MODEL"\n')
    spec = load_spec(tree / "specs" / "installed.toml")
    assert spec.model == "eoscheck.model.machines.eos_model:MODEL"
    assert find_model(spec.model).name == "kafka.eos"


@pytest.mark.parametrize("spec", ["by-path.toml", "by-name.toml"])
def test_check_runs_a_model_file_and_writes_its_counterexample(tree: Path, capsys, spec: str) -> None:
    out = tree / "cx"
    assert main(["check", str(tree / "specs" / spec), "--out", str(out), "--no-progress"]) == 0
    name = spec.removesuffix(".toml")
    assert (out / f"{name}.Few.json").is_file()
    assert "Few (5)" in capsys.readouterr().out  # 0..4 coins: 5 states
    assert not list(tree.rglob("__pycache__")), "nothing written next to the user's files"


def test_model_flag_takes_a_file_relative_to_the_working_directory(tree: Path, capsys) -> None:
    os.chdir(tree)
    code = main(["check", "--model", "models/coins.py", "--bound", "limit=2", "--out", "cx", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 1, out  # an ad hoc run expects every property to hold; Few does not
    assert "mine.coins+limit=2" in out
    assert (tree / "cx" / "mine.coins_limit_2.Few.json").is_file()
    assert main(["list", "models/coins.py:mine.coins"]) == 0
    assert "model models/coins.py:mine.coins: coins in a jar" in capsys.readouterr().out


def test_parallel_engine_runs_a_model_file(tree: Path, capsys) -> None:
    spec = tree / "specs" / "by-path.toml"
    spec.write_text(spec.read_text().replace("limit = 4", "limit = 30"))
    counts = []
    for engine in (["--engine", "bfs"], ["--engine", "parallel", "--workers", "2"]):
        assert main(["check", str(spec), "--out", str(tree / "cx"), "--no-progress", "-v", *engine]) == 0
        out = capsys.readouterr().out
        counts.append([line for line in out.splitlines() if "by-path" in line and "Few (31)" in line])
        assert counts[-1], out
        assert ("2 worker processes" in out) == ("parallel" in engine), out  # the workers did run
    assert counts[0][0].split()[3] == counts[1][0].split()[3]  # the same number of distinct states


def test_a_fresh_interpreter_unpickles_machine_and_states_without_pythonpath(tree: Path) -> None:
    spec = load_spec(tree / "specs" / "by-path.toml")
    machine = build_machine(spec)
    states = list(machine.init_states())
    _step, state = next(iter(machine.successors(states[0])))
    blob = pickle.dumps((machine, state))
    code = ("import pickle, sys; m, s = pickle.loads(sys.stdin.buffer.read()); "
            "print(type(m).__module__.startswith('eoscheck.checker.pathmodel.m_'), type(s).__name__, s.coins, m.limit)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", code], input=blob, capture_output=True, env=env, check=False,
                          cwd=tree / "elsewhere", timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().split() == ["True", "Jar", "1", "4"]


def test_spark_refuses_a_model_file_in_one_line(tree: Path, capsys) -> None:
    spec = tree / "specs" / "by-path.toml"
    assert main(["check", str(spec), "--engine", "spark"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Spark executors cannot import" in err
    spec.write_text(spec.read_text() + '[check]\nstrategy = "spark"\n')
    assert main(["compare", str(spec), "--variants", "plain,same"]) == 2  # refused before any column runs
    assert main(["check", str(spec)]) == 2
    err = capsys.readouterr().err
    assert err.count("Spark executors cannot import") == 2


def _base() -> ModelDef:
    return ModelDef(name="b", doc="", variants={"v": Variant("")}, default_variant="v",
                    switches={"s": Switch("", False)}, bounds={"n": Bound("", 1, 1, 2)},
                    properties={"P": ""}, build=lambda sw, b: None)  # type: ignore[arg-type,return-value]


def test_derive_model_adds_switches_and_variants_and_refuses_clashes() -> None:
    base = _base()
    seen: dict[str, object] = {}
    derived = derive_model(base, name="d", doc="d", switches={"t": Switch("", 0)},
                           variants={"w": Variant("", {"s": True, "t": 2})},
                           build=lambda sw, b: seen.update(sw))  # type: ignore[arg-type,return-value]
    assert set(derived.variants) == {"v", "w"} and set(derived.switches) == {"s", "t"}
    derived.machine("v")
    assert seen == {"s": False, "t": 0}  # a base variant keeps its meaning: the new switch at its default
    derived.machine("w")
    assert seen == {"s": True, "t": 2}
    for kwargs, fragment in [({"switches": {"s": Switch("", 1)}, "variants": {}}, "already a switch"),
                             ({"switches": {}, "variants": {"v": Variant("")}}, "already a variant"),
                             ({"switches": {}, "variants": {"x": Variant("", {"zz": 1})}}, "unknown switch")]:
        with pytest.raises(ValueError, match=fragment):
            derive_model(base, name="d", doc="", build=base.build, **kwargs)  # type: ignore[arg-type]
