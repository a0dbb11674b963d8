"""The eoscheck command end to end: exit codes, one-line errors, files written, nothing clobbered."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import types
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path

import networkx as nx
import pytest
from eoscheck.checker.cli import main
from eoscheck.checker.counterexample import load_counterexample
from eoscheck.checker.machine import Machine, Property
from eoscheck.checker.registry import Bound, ModelDef, Variant

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "specs" / "examples"

DIEHARD = '''
model = "examples.diehard"
[check]
properties = ["NotSolved"]
[expect]
verdict = "violates"
property = "NotSolved"
length = {length}
'''
TWOPHASE = 'model = "examples.twophase"\n[bounds]\nrms = 3\n'


def spec_file(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.toml"
    path.write_text(text)
    return path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([*argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code: int, err: str, *fragments: str) -> None:
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("eoscheck"), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, err


def test_check_met_writes_counterexample_summary_and_junit(tmp_path, capsys):
    specs = tmp_path / "specs"
    die = spec_file(specs, "die", DIEHARD.format(length=7))
    spec_file(specs, "tp", TWOPHASE)
    before = die.read_text()
    out_dir = tmp_path / "cx"
    code, out, _ = run(capsys, "check", str(specs), "--out", str(out_dir), "--no-progress", "-v",
                       "--json", str(tmp_path / "s.json"), "--junit", str(tmp_path / "j.xml"))
    assert code == 0, out
    assert die.read_text() == before  # the user's spec is never touched
    cx = out_dir / "die.NotSolved.json"
    assert f"eoscheck show {cx}" in out
    assert (out_dir / "die.NotSolved.itf.json").exists()
    loaded = load_counterexample(cx)
    assert loaded.length == 7 and loaded.property == "NotSolved" and loaded.steps[-1].state["jugs.big"] == 4
    assert "288 distinct states found" in out  # TLC's count for TwoPhase with 3 RMs
    assert "2 of 2 spec(s) met their expected verdict" in out
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["ok"] is True and [s["spec"] for s in summary["specs"]] == ["die", "tp"]
    assert summary["specs"][0]["got"]["violations"][0]["counterexample"][0] == str(cx)
    assert summary["specs"][1]["stats"]["distinct"] == 288
    root = ET.parse(tmp_path / "j.xml").getroot()
    assert root.get("tests") == "2" and root.get("failures") == "0"


def test_wrong_expected_length_fails_with_exit_1(tmp_path, capsys):
    path = spec_file(tmp_path, "die", DIEHARD.format(length=6))
    code, out, _ = run(capsys, "check", str(path), "--out", str(tmp_path / "cx"), "--quiet",
                       "--junit", str(tmp_path / "j.xml"))
    assert code == 1
    assert "the trace has 7 states where the spec expects 6" in out
    failures = ET.parse(tmp_path / "j.xml").getroot().findall("./testsuite/testcase/failure")
    assert len(failures) == 1 and "expects 6" in failures[0].get("message")


def test_expected_violation_not_found_fails(tmp_path, capsys):
    text = TWOPHASE + '[expect]\nverdict = "violates"\nproperty = "TCConsistent"\n'
    code, out, _ = run(capsys, "check", str(spec_file(tmp_path, "tp", text)), "--quiet",
                       "--out", str(tmp_path / "cx"))
    assert code == 1 and "every checked property holds" in out
    assert not (tmp_path / "cx").exists() or not any((tmp_path / "cx").iterdir())


def test_cli_flags_override_the_spec(tmp_path, capsys):
    # A state limit makes the run incomplete, which never counts as "holds".
    code, out, _ = run(capsys, "check", str(spec_file(tmp_path, "tp", TWOPHASE)),
                       "--max-states", "50", "--no-progress", "--out", str(tmp_path / "cx"))
    assert code == 1 and "incomplete" in out and "holds is not proven" in out


def test_dfs_engine_trace_is_shortened(tmp_path, capsys):
    path = spec_file(tmp_path, "die", DIEHARD.format(length=7))
    code, out, _ = run(capsys, "check", str(path), "--engine", "dfs", "--max-depth", "30",
                       "--quiet", "--out", str(tmp_path / "cx"))
    assert code == 0, out
    cex = load_counterexample(tmp_path / "cx" / "die.NotSolved.json")
    assert cex.length == 7 and cex.engine["strategy"] == "dfs"
    assert cex.found_length >= cex.length


def test_graph_is_written(tmp_path, capsys):
    path = spec_file(tmp_path, "tp", TWOPHASE)
    graph = tmp_path / "g.graphml"
    code, out, _ = run(capsys, "check", str(path), "--graph", str(graph), "--quiet",
                       "--out", str(tmp_path / "cx"))
    assert code == 0, out
    assert nx.read_graphml(graph).number_of_nodes() == 288


def test_example_specs_all_meet_their_expectations(tmp_path, capsys):
    code, out, _ = run(capsys, "check", str(EXAMPLES), "--quiet", "--out", str(tmp_path))
    assert code == 0, out
    assert len(list(EXAMPLES.glob("*.toml"))) >= 3


@pytest.mark.parametrize("argv,fragments", [
    (["check", "nowhere.toml"], ["nowhere.toml: no such file or directory"]),
    (["check"], ["the following arguments are required: SPEC|DIR"]),
    (["check", "x.toml", "--engine", "astar"], ["invalid choice: 'astar'"]),
    (["check", "x.toml", "--max-states", "0"], ["--max-states", "must be at least 1"]),
    (["check", "x.toml", "--max-seconds", "soon"], ["'soon' is not a number"]),
    (["frobnicate"], ["invalid choice: 'frobnicate'"]),
    (["show", "nowhere.json"], ["nowhere.json: no such file"]),
    (["list", "no.such.model"], ["unknown model 'no.such.model'"]),
])
def test_usage_errors_are_one_line(capsys, argv, fragments):
    code, _, err = run(capsys, *argv)
    assert_one_line_error(code, err, *fragments)


def test_bad_spec_stops_before_running_anything(tmp_path, capsys):
    specs = tmp_path / "specs"
    spec_file(specs, "a-good", TWOPHASE)
    bad = spec_file(specs, "b-bad", 'model = "examples.twophase"\n[bounds]\nrms = 99\n')
    code, out, err = run(capsys, "check", str(specs), "--out", str(tmp_path / "cx"))
    assert_one_line_error(code, err, f"{bad}:3: bound 'rms' = 99 is out of range 1..10")
    assert out == ""  # nothing ran


def test_empty_directory_and_duplicate_names(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run(capsys, "check", str(empty))
    assert_one_line_error(code, err, "no *.toml spec files")
    a = spec_file(tmp_path / "a", "x", TWOPHASE)
    b = spec_file(tmp_path / "b", "y", 'name = "x"\n' + TWOPHASE)
    code, _, err = run(capsys, "check", str(a), str(b))
    assert_one_line_error(code, err, "spec name 'x' is also used by")


def test_reports_never_overwrite_a_spec(tmp_path, capsys):
    path = spec_file(tmp_path, "tp", TWOPHASE)
    for flag in ("--json", "--junit"):
        code, _, err = run(capsys, "check", str(path), flag, str(path))
        assert_one_line_error(code, err, "would overwrite a spec file")
    assert path.read_text() == TWOPHASE


def test_foreign_file_in_out_dir_is_not_overwritten(tmp_path, capsys):
    path = spec_file(tmp_path, "die", DIEHARD.format(length=7))
    out_dir = tmp_path / "cx"
    out_dir.mkdir()
    foreign = out_dir / "die.NotSolved.json"
    foreign.write_text("my notes\n")
    code, _, err = run(capsys, "check", str(path), "--out", str(out_dir), "--quiet")
    assert_one_line_error(code, err, "exists and is not an eoscheck counterexample")
    assert foreign.read_text() == "my notes\n"


@pytest.mark.parametrize("content,fragment", [
    ("{broken", "not a JSON file"),
    ('{"format": "something-else", "version": 1}', "not an eoscheck counterexample"),
    ('{"format": "eoscheck-counterexample", "version": 99}', "unsupported counterexample version 99"),
    ('{"format": "eoscheck-counterexample", "version": 1, "steps": [{"index": 0}]}', "missing field"),
])
def test_show_rejects_corrupt_or_foreign_files(tmp_path, capsys, content, fragment):
    path = tmp_path / "c.json"
    path.write_text(content)
    code, _, err = run(capsys, "show", str(path))
    assert_one_line_error(code, err, str(path), fragment)


def test_prove_missing_is_exit_2(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "eoscheck.checker.smt.cli_prove", None)
    code, _, err = run(capsys, "prove", "specs/x.toml")
    assert_one_line_error(code, err, "prove is not available yet")


def test_interrupt_exits_130(tmp_path, capsys, monkeypatch):
    import eoscheck.checker.explore as explore_pkg

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(explore_pkg, "explore", interrupted)
    code, _, err = run(capsys, "check", str(spec_file(tmp_path, "tp", TWOPHASE)))
    assert code == 130 and err.strip().endswith("interrupted") and "Traceback" not in err


def test_list_shows_models_and_specs(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec_file(tmp_path / "specs" / "sub", "tp", TWOPHASE)
    spec_file(tmp_path / "specs", "broken", "model = ")
    code, out, _ = run(capsys, "list")
    assert code == 0
    assert "model examples.twophase" in out and "rms = 3 (range 1..10)" in out
    assert "tla (default)" in out and "TCConsistent: no RM has committed" in out
    assert "tp (examples.twophase/tla) expects holds" in out
    assert "broken.toml: invalid:" in out


def test_real_command_line(tmp_path):
    """The installed console script: exit codes and one-line stderr, no traceback, no ANSI."""
    exe = shutil.which("eoscheck")
    cmd = [exe] if exe else [sys.executable, "-c", "import sys; from eoscheck.checker.cli import main; sys.exit(main())"]
    bad = spec_file(tmp_path, "bad", "model = [\n")
    env = {**os.environ, "COLUMNS": "80"}
    env.pop("FORCE_COLOR", None)
    r = subprocess.run([*cmd, "check", str(bad)], capture_output=True, text=True, env=env, timeout=120,
                       check=False)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert f"{bad}:1: invalid TOML" in r.stderr
    good = spec_file(tmp_path, "die", DIEHARD.format(length=7))
    r = subprocess.run([*cmd, "check", str(good), "--out", str(tmp_path / "cx")],
                       capture_output=True, text=True, env=env, timeout=120, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "\x1b[" not in r.stdout
    r = subprocess.run([*cmd, "show", str(tmp_path / "cx" / "die.NotSolved.json")],
                       capture_output=True, text=True, env=env, timeout=120, check=False)
    assert r.returncode == 0 and "\x1b[" not in r.stdout
    assert "Step 6  BigToSmall()  <- violates NotSolved" in r.stdout


# A toy model registered under an import path: two invariants that fail at different depths and
# a dead end at the top, to exercise --continue and deadlock counterexamples.
class Ladder(Machine):
    actions: Mapping[str, tuple[str, ...]] = {"Up": ("by",), "Reset": ()}

    def __init__(self, top: int) -> None:
        self.top = top

    def init_states(self):
        return [(0,)]

    def successors(self, state):
        if state[0] < self.top:
            yield ("Up", 1), (state[0] + 1,)

    def properties(self):
        return {"BelowTwo": Property("BelowTwo", "x < 2", "invariant", lambda s: s[0] < 2),
                "BelowThree": Property("BelowThree", "x < 3", "invariant", lambda s: s[0] < 3)}

    def fields(self, state):
        return {"ladder.x": state[0]}


LADDER = ModelDef(name="toy.ladder", doc="a ladder", variants={"plain": Variant("plain")},
                  default_variant="plain", switches={},
                  bounds={"top": Bound("last rung", 4, 1, 9)},
                  properties={"BelowTwo": "x < 2", "BelowThree": "x < 3"},
                  build=lambda switches, bounds: Ladder(bounds["top"]))


@pytest.fixture
def ladder(monkeypatch):
    module = types.ModuleType("eoscheck_toy_cli")
    module.MODELS = [LADDER]
    monkeypatch.setitem(sys.modules, "eoscheck_toy_cli", module)
    return 'model = "eoscheck_toy_cli:MODELS"\n'


def test_stop_at_first_then_continue(tmp_path, capsys, ladder):
    path = spec_file(tmp_path, "ladder", ladder + '[expect]\nverdict = "violates"\nproperty = "BelowThree"\n')
    out_dir = tmp_path / "cx"
    code, out, _ = run(capsys, "check", str(path), "--out", str(out_dir), "--quiet")
    assert code == 1 and "but the run found BelowTwo instead" in out
    assert sorted(p.name for p in out_dir.iterdir()) == ["ladder.BelowTwo.itf.json", "ladder.BelowTwo.json"]
    code, out, _ = run(capsys, "check", str(path), "--out", str(out_dir), "--quiet", "--continue")
    assert code == 0, out
    assert load_counterexample(out_dir / "ladder.BelowTwo.json").length == 3
    assert load_counterexample(out_dir / "ladder.BelowThree.json").length == 4


def test_deadlock_counterexample(tmp_path, capsys, ladder):
    text = ladder + ('[bounds]\ntop = 1\n[check]\nproperties = ["BelowThree"]\n'
                     '[expect]\nverdict = "violates"\nproperty = "deadlock"\nlength = 2\n')
    out_dir = tmp_path / "cx"
    code, out, _ = run(capsys, "check", str(spec_file(tmp_path, "stuck", text)), "--out", str(out_dir), "--quiet")
    assert code == 0, out
    cex = load_counterexample(out_dir / "stuck.deadlock.json")
    assert cex.kind == "deadlock" and "no successors" in cex.property_doc
    code, shown, _ = run(capsys, "show", str(out_dir / "stuck.deadlock.json"))
    assert code == 0 and "Step 1  Up(by=1)  <- deadlock: no step enabled" in shown
    # --no-deadlock switches the check off, so the expected deadlock is not found
    code, out, _ = run(capsys, "check", str(spec_file(tmp_path, "stuck", text)), "--out", str(out_dir),
                       "--quiet", "--no-deadlock")
    assert code == 1 and "expected deadlock violated, but every checked property holds" in out


def test_show_into_a_closed_pipe_is_not_an_error(tmp_path):
    from eoscheck.checker.counterexample import CexStep, Counterexample, write_counterexample

    steps = [CexStep(i, None if i == 0 else "Tick", f"Tick({i})", {}, {"clock.t": i})
             for i in range(3000)]
    cex = Counterexample(spec="long", model="m", variant="v", switches={}, bounds={}, property="P",
                         property_doc="", kind="invariant", engine={}, found_length=3000,
                         shortened_by="", steps=steps)
    json_path, _ = write_counterexample(cex, tmp_path)
    cmd = [sys.executable, "-c", "import sys; from eoscheck.checker.cli import main; sys.exit(main())"]
    proc = subprocess.Popen([*cmd, "show", str(json_path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout.read(200)  # like `| head`: read a little, then leave
    proc.stdout.close()
    assert proc.wait(timeout=120) == 0
    assert b"Traceback" not in proc.stderr.read()


def test_graph_per_spec_and_bad_suffix(tmp_path, capsys):
    specs = tmp_path / "specs"
    spec_file(specs, "a", TWOPHASE)
    spec_file(specs, "b", 'model = "examples.tcommit"\n[check]\ndeadlock = false\n')
    code, out, _ = run(capsys, "check", str(specs), "--graph", str(tmp_path / "g.dot"), "--quiet",
                       "--out", str(tmp_path / "cx"))
    assert code == 0, out
    assert (tmp_path / "g.a.dot").read_text().startswith("digraph")
    assert (tmp_path / "g.b.dot").read_text().count(" -> ") > 0
    code, _, err = run(capsys, "check", str(specs), "--graph", str(tmp_path / "g.png"))
    assert_one_line_error(code, err, "--graph writes .graphml or .dot files")


def test_engine_that_cannot_run_is_one_line_exit_2(tmp_path, capsys, monkeypatch):
    import eoscheck.checker.explore as explore_module
    from eoscheck.checker.explore.errors import EngineSetupError

    def refuse(machine, options, progress=None):
        raise EngineSetupError("Java not found\ninstall a JDK 17 or set JAVA_HOME")

    monkeypatch.setattr(explore_module, "explore", refuse)
    path = spec_file(tmp_path, "tp", TWOPHASE)
    code, _, err = run(capsys, "check", str(path), "--engine", "spark", "--out", str(tmp_path / "cx"))
    assert_one_line_error(code, err, "tp.toml", "spark engine", "Java not found", "JAVA_HOME")


class BrokenSymmetryLadder(Ladder):
    """A 'symmetry' that merges rungs which are not symmetric: the reduced run never climbs past 2."""

    def canonical(self, state):
        return (min(state[0], 2),)


BROKEN = ModelDef(name="toy.broken", doc="a ladder with a wrong symmetry", variants={"plain": Variant("plain")},
                  default_variant="plain", switches={}, bounds={"top": Bound("last rung", 4, 1, 9)},
                  properties={"BelowTwo": "x < 2", "BelowThree": "x < 3"},
                  build=lambda switches, bounds: BrokenSymmetryLadder(bounds["top"]))


def test_check_symmetry_passes_on_a_sound_reduction(tmp_path, capsys):
    path = spec_file(tmp_path, "tp", 'model = "examples.twophase-sym"\n[bounds]\nrms = 3\n')
    code, out, _ = run(capsys, "check", str(path), "--check-symmetry", "--out", str(tmp_path / "cx"))
    assert code == 0, out
    assert "symmetry check:" in out and "verdicts agree" in out and "= full count" in out


def test_check_symmetry_fails_a_spec_whose_reduction_changes_the_verdict(tmp_path, capsys, monkeypatch):
    module = types.ModuleType("eoscheck_toy_broken")
    module.MODELS = [BROKEN]
    monkeypatch.setitem(sys.modules, "eoscheck_toy_broken", module)
    text = ('model = "eoscheck_toy_broken:MODELS"\n[check]\nproperties = ["BelowThree"]\ndeadlock = false\n'
            '[expect]\nverdict = "violates"\nproperty = "BelowThree"\n')
    path = spec_file(tmp_path, "broken", text)
    code, out, _ = run(capsys, "check", str(path), "--no-symmetry", "--out", str(tmp_path / "cx"))
    assert code == 0, out
    code, out, _ = run(capsys, "check", str(path), "--no-symmetry", "--check-symmetry",
                       "--out", str(tmp_path / "cx"))
    assert code == 1
    assert "VERDICTS DIFFER" in out and "symmetry check failed" in out
