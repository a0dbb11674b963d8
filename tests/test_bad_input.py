"""Bad input, as a new user produces it: the promise is exit 2, exactly one line on stderr, no
traceback, and no file changed (bytes, mode and kind of everything in the workspace compared
before and after). In-process through ``main`` (the CLI is a thin shell over functions); signals
during each engine are in tests/test_signals.py, which needs real processes.

Kinds: malformed and foreign spec files, malformed and foreign counterexample files, unknown names,
out-of-range values, unwritable and special output paths, contradictory options."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from eoscheck.checker.cli import main
from eoscheck.checker.registry import installed_models
from private_devices import FULL, NULL, device, stdout_link

REPO = Path(__file__).resolve().parents[1]
DIEHARD = (REPO / "specs" / "examples" / "diehard-big-jug-reaches-4.toml").read_text()
TWOPHASE = (REPO / "specs" / "examples" / "twophase-3rm-consistent.toml").read_text()
CEX = json.loads((REPO / "counterexamples" / "diehard-big-jug-reaches-4.NotSolved.json").read_text())
ITF = json.loads((REPO / "counterexamples" / "diehard-big-jug-reaches-4.NotSolved.itf.json").read_text())
BASE = 'model = "examples.diehard"\n'


def snapshot(root: Path) -> dict[str, Any]:
    """Every entry under ``root``: kind, mode, and content (or link target)."""
    out: dict[str, Any] = {}
    for p in sorted(root.rglob("*")):
        st = os.lstat(p)
        if stat.S_ISLNK(st.st_mode):
            body: Any = os.readlink(p)
        elif stat.S_ISREG(st.st_mode):
            body = p.read_bytes()
        else:
            body = None
        out[str(p.relative_to(root))] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), body)
    return out


def assert_promise(capsys, root: Path, argv: list[str], fragment: str = "") -> str:
    capsys.readouterr()
    before = snapshot(root)
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (code, out[-2000:], err)
    assert err.count("\n") == 1 and err.endswith("\n") and err.startswith("eoscheck"), err
    assert "Traceback" not in err + out
    assert fragment in err, err
    assert snapshot(root) == before, "a file changed"
    return err


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace: specs/die.toml (violates, writes counterexamples), specs/tp.toml (holds),
    cx/ with die's counterexample from an earlier run."""
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "die.toml").write_text(DIEHARD)
    (tmp_path / "specs" / "tp.toml").write_text(TWOPHASE)
    (tmp_path / "cx").mkdir()
    (tmp_path / "cx" / "die.NotSolved.json").write_text(json.dumps({**CEX, "spec": "die"}))
    (tmp_path / "cx" / "die.NotSolved.itf.json").write_text(json.dumps(ITF))
    return tmp_path


# ------------------------------------------------------------------------------ spec files

SPEC_TEXTS: list[tuple[str, str | bytes, str]] = [
    ("empty", "", ""),
    ("not-toml", "model = ", "invalid TOML"),
    ("binary", b"\xff\xfe\x00\x01garbage", ""),
    ("utf16", "model = \"examples.diehard\"\n".encode("utf-16"), ""),
    ("nul-bytes", 'model = "examples\x00.diehard"\n', ""),
    ("unknown-top-key", BASE + "bogus = 1\n", "bogus"),
    ("model-not-string", "model = 42\n", "model"),
    ("unknown-model", 'model = "no.such.model"\n', "no.such.model"),
    ("model-module-missing", 'model = "nosuchmodule_xyz:MODELS"\n', "nosuchmodule_xyz"),
    ("model-attr-not-models", 'model = "os:sep"\n', ""),
    ("unknown-variant", BASE + 'variant = "nope"\n', "nope"),
    ("unknown-switch", BASE + "[switches]\nnope = true\n", "nope"),
    ("switch-bad-choice", 'model = "kafka.idempotent_produce"\n[switches]\nclient_version = "9.9"\n', "9.9"),
    ("switch-wrong-type", 'model = "kafka.eos_pipeline"\n[switches]\nkip890_verification = "yes"\n', ""),
    ("bound-too-big", BASE + "[bounds]\nbig = 100000\n", "big"),
    ("bound-negative", BASE + "[bounds]\nbig = -1\n", "big"),
    ("bound-string", BASE + '[bounds]\nbig = "five"\n', "big"),
    ("bound-float", BASE + "[bounds]\nbig = 2.5\n", "big"),
    ("bound-bool", BASE + "[bounds]\nbig = true\n", "big"),
    ("unknown-bound", BASE + "[bounds]\nhuge = 1\n", "huge"),
    ("bounds-not-table", BASE + "bounds = 3\n", "bounds"),
    ("unknown-property", BASE + '[check]\nproperties = ["Nope"]\n', "Nope"),
    ("properties-empty", BASE + "[check]\nproperties = []\n", "empty"),
    ("properties-not-names", BASE + "[check]\nproperties = [1]\n", "properties"),
    ("unknown-strategy", BASE + '[check]\nstrategy = "quantum"\n', "quantum"),
    ("unknown-check-key", BASE + "[check]\nspeed = 11\n", "speed"),
    ("max-states-zero", BASE + "[check]\nmax_states = 0\n", "max_states"),
    ("max-states-string", BASE + '[check]\nmax_states = "many"\n', "max_states"),
    ("max-seconds-negative", BASE + "[check]\nmax_seconds = -1\n", "max_seconds"),
    ("workers-zero", BASE + "[check]\nworkers = 0\n", "workers"),
    ("violates-without-property", BASE + '[expect]\nverdict = "violates"\n', "property"),
    ("unknown-verdict", BASE + '[expect]\nverdict = "maybe"\n', "maybe"),
    ("expect-unknown-property", BASE + '[expect]\nverdict = "violates"\nproperty = "Nope"\n', "Nope"),
    ("length-zero", BASE + '[expect]\nverdict = "violates"\nproperty = "NotSolved"\nlength = 0\n', "length"),
    ("length-with-holds", BASE + "[expect]\nlength = 3\n", "length"),
    ("deadlock-not-checked", BASE + '[check]\ndeadlock = false\n[expect]\nverdict = "violates"\n'
                                    'property = "deadlock"\n', "deadlock"),
    ("name-with-slash", 'name = "a/b"\n' + BASE, "name"),
    ("model-table", "[model]\nx = 1\n", "model"),
    ("deep-toml", "a = " + "[" * 100_000 + "]" * 100_000 + "\n", ""),
]


@pytest.mark.parametrize("name,text,fragment", SPEC_TEXTS, ids=[c[0] for c in SPEC_TEXTS])
def test_malformed_spec(ws, capsys, name, text, fragment):
    path = ws / "specs" / "bad.toml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    assert_promise(capsys, ws, ["check", str(path), "--out", str(ws / "cx"), "--no-progress"], fragment)


# A model file next to the spec (checker.pathmodel): each broken kind is one line naming the file.
ONE_MODEL = ("from eoscheck.examples.registry import MODELS as _ALL\n"
             "MODEL = _ALL[2]\n")  # examples.diehard
MODEL_FILES: list[tuple[str, str, str, str]] = [
    # (case, file text or "" for no file, the spec's model value, fragment)
    ("missing-file", "", "nothere.py:MODEL", "nothere.py: no such file"),
    ("directory", "", "sub.py:MODEL", "sub.py: not a file"),
    ("syntax-error", "MODEL = (\n", "m.py:MODEL", "m.py:1"),
    ("import-fails", "import nosuchmodule_xyz\n", "m.py:MODEL", "ModuleNotFoundError"),
    ("raises-on-import", "x = 1\nraise RuntimeError('boom')\n", "m.py:MODEL", "m.py:2 failed to import"),
    ("no-such-attribute", ONE_MODEL, "m.py:NOPE", "no attribute 'NOPE'"),
    ("no-models-list", ONE_MODEL, "m.py", "no MODELS list"),
    ("not-a-model", ONE_MODEL + "X = 3\n", "m.py:X", "not a ModelDef"),
    ("list-of-several", "from eoscheck.examples.registry import MODELS\n", "m.py:MODELS", "name one"),
    ("build-fails", ONE_MODEL + "import dataclasses\nMODEL = dataclasses.replace(MODEL, build=lambda s, b: 1 / 0)\n",
     "m.py:MODEL", "ZeroDivisionError"),
]


@pytest.mark.parametrize("case,text,model,fragment", MODEL_FILES, ids=[c[0] for c in MODEL_FILES])
def test_broken_model_file(ws, capsys, case, text, model, fragment):
    if text:
        (ws / "specs" / "m.py").write_text(text)
    if case == "directory":
        (ws / "specs" / "sub.py").mkdir()
    path = ws / "specs" / "bad.toml"
    path.write_text(f'model = "{model}"\n')
    assert_promise(capsys, ws, ["check", str(path), "--out", str(ws / "cx"), "--no-progress"], fragment)
    if not text:
        return
    # the same file through --model (relative to the working directory) and through list
    flag = model.replace("m.py", str(ws / "specs" / "m.py"))
    assert_promise(capsys, ws, ["check", "--model", flag, "--out", str(ws / "cx")], fragment)
    if case != "build-fails":  # list builds no machine
        assert_promise(capsys, ws, ["list", flag], fragment)


def _models() -> list[tuple[str, Any]]:
    return sorted(installed_models().items())


MODEL_CASES = [(name, kind) for name, _ in _models()
               for kind in ("unknown-variant", "bound-above", "bound-below", "bound-type")]


@pytest.mark.parametrize("model,kind", MODEL_CASES, ids=[f"{m}-{k}" for m, k in MODEL_CASES])
def test_every_model_rejects_out_of_range_and_unknown_names(ws, capsys, model, kind):
    md = installed_models()[model]
    text = f'model = "{model}"\n'
    bound = next(iter(md.bounds.items()), None)
    if kind == "unknown-variant":
        text += 'variant = "no-such-variant"\n'
    elif bound is None:
        text += "[bounds]\nno_such_bound = 1\n"
    elif kind == "bound-above":
        text += f"[bounds]\n{bound[0]} = {bound[1].max + 1}\n"
    elif kind == "bound-below":
        text += f"[bounds]\n{bound[0]} = {bound[1].min - 1}\n"
    else:
        text += f'[bounds]\n{bound[0]} = "x"\n'
    path = ws / "specs" / "bad.toml"
    path.write_text(text)
    assert_promise(capsys, ws, ["check", str(path), "--out", str(ws / "cx"), "--no-progress"])


def test_two_specs_with_one_name(ws, capsys):
    (ws / "specs" / "die2.toml").write_text('name = "die"\n' + DIEHARD)
    assert_promise(capsys, ws, ["check", str(ws / "specs"), "--out", str(ws / "cx")], "also used by")


def test_directory_without_specs(ws, capsys):
    (ws / "empty").mkdir()
    assert_promise(capsys, ws, ["check", str(ws / "empty")], "no *.toml")


def test_missing_spec_path(ws, capsys):
    assert_promise(capsys, ws, ["check", str(ws / "nope.toml")], "no such file")


def test_spec_is_a_counterexample_file(ws, capsys):
    assert_promise(capsys, ws, ["check", str(ws / "cx" / "die.NotSolved.json"), "--out", str(ws / "cx")])


# ------------------------------------------------------------------------------ counterexample files

def _steps(**change: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(CEX))
    data.update(change)
    return data


def _step0(**change: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(CEX))
    data["steps"][0].update(change)
    return data


def _itf_state(value: Any) -> dict[str, Any]:
    return {"vars": ["x"], "states": [{"#meta": {"index": 0}, "x": value}]}


DEEP = 200_000
SHOW_TEXTS: list[tuple[str, str | bytes, str]] = [
    ("empty", "", "not a JSON file"),
    ("not-json", "{nope", "not a JSON file"),
    ("array", "[]", "not an eoscheck counterexample"),
    ("string", '"x"', "not an eoscheck counterexample"),
    ("foreign-format", json.dumps({"format": "other"}), "not an eoscheck counterexample"),
    ("no-format", json.dumps({"spec": "x"}), "no \"format\" field"),
    ("version-2", json.dumps(_steps(version=2)), "unsupported counterexample version 2"),
    ("version-string", json.dumps(_steps(version="1")), "unsupported counterexample version"),
    ("steps-missing", json.dumps({k: v for k, v in CEX.items() if k != "steps"}), "missing field 'steps'"),
    ("steps-empty", json.dumps(_steps(steps=[])), "'steps' is empty"),
    ("steps-object", json.dumps(_steps(steps={})), "'steps' must be an array"),
    ("step-not-object", json.dumps(_steps(steps=[5])), "steps[0]"),
    ("index-mismatch", json.dumps(_step0(index=3)), "expected 0"),
    ("index-bool", json.dumps(_step0(index=True)), "index"),
    ("initial-action", json.dumps(_step0(action="Go")), "null for the initial state"),
    ("label-int", json.dumps(_step0(label=3)), "label"),
    ("params-list", json.dumps(_step0(params=[])), "params"),
    ("state-list", json.dumps(_step0(state=[1])), "state"),
    ("length-wrong", json.dumps(_steps(length=99)), "'length' is 99"),
    ("switches-string", json.dumps(_steps(switches="x")), "switches"),
    ("spec-null", json.dumps(_steps(spec=None)), "spec"),
    ("found-length-float", json.dumps(_steps(found_length=1.5)), "found_length"),
    ("huge-int-literal", '{"format": ' + "1" * 5000 + "}", ""),
    ("non-utf8", b"\xff\xfe{}", "not UTF-8"),
    ("deep-array", "[" * DEEP + "]" * DEEP, "nested too deeply"),
    ("deep-object", '{"a":' * DEEP + "1" + "}" * DEEP, "nested too deeply"),
    ("itf-vars-string", json.dumps({"vars": "x", "states": []}), "'vars' must be an array"),
    ("itf-states-empty", json.dumps({"vars": [], "states": []}), "'states' must be a non-empty array"),
    ("itf-state-number", json.dumps({"vars": [], "states": [1]}), "states[0] is not an object"),
    ("itf-map-pair", json.dumps(_itf_state({"#map": [[1]]})), "#map entry 0"),
    ("itf-map-not-array", json.dumps(_itf_state({"#map": "x"})), "#map must hold an array"),
    ("itf-bigint-text", json.dumps(_itf_state({"#bigint": "1e3"})), "#bigint"),
    ("itf-bigint-number", json.dumps(_itf_state({"#bigint": 3})), "#bigint"),
    ("itf-bigint-huge", json.dumps(_itf_state({"#bigint": "7" * 10_000})), "#bigint"),
    ("itf-tup-object", json.dumps(_itf_state({"#tup": {}})), "#tup"),
    ("itf-set-string", json.dumps(_itf_state({"#set": "ab"})), "#set"),
    ("itf-nested-bad", json.dumps(_itf_state([{"r": {"#map": [[1, 2, 3]]}}])), "#map entry 0"),
    ("itf-loop-out-of-range", json.dumps({**_itf_state(1), "loop": 5}), "'loop'"),
    ("itf-loop-bool", json.dumps({**_itf_state(1), "loop": True}), "'loop'"),
    ("itf-deep", '{"vars": ["x"], "states": [{"x": ' + '{"#tup": [' * DEEP + "1" + "]}" * DEEP + "}]}",
     "nested too deeply"),
]


@pytest.mark.parametrize("name,text,fragment", SHOW_TEXTS, ids=[c[0] for c in SHOW_TEXTS])
def test_malformed_counterexample(ws, capsys, name, text, fragment):
    path = ws / "cx" / "bad.json"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    assert_promise(capsys, ws, ["show", str(path)], fragment)


@pytest.mark.parametrize("argv,fragment", [
    (["show", "{ws}/cx/missing.json"], "no such file"),
    (["show", "{ws}/cx"], "not a file"),
    (["show", "{ws}/cx/die.NotSolved.json", "--actor", "nobody"], "no field starts with 'nobody'"),
    (["show", "{ws}/cx/die.NotSolved.itf.json", "--actor", "zz"], "no field starts with"),
    (["show", "{ws}/cx/die.NotSolved.json", "--width", "0"], "--width"),
    (["show", "{ws}/cx/die.NotSolved.json", "--width", "wide"], "--width"),
    (["show"], "required"),
], ids=lambda v: "-".join(v[1:]) if isinstance(v, list) else None)
def test_show_bad_arguments(ws, capsys, argv, fragment):
    assert_promise(capsys, ws, [a.format(ws=ws) for a in argv], fragment)


# ------------------------------------------------------------------------------ unknown names, values

@pytest.mark.parametrize("argv,fragment", [
    ([], "required"),
    (["frobnicate"], "invalid choice"),
    (["check"], "required"),
    (["check", "{spec}", "--engine", "quantum"], "invalid choice"),
    (["check", "{spec}", "--bogus"], "unrecognized arguments"),
    (["check", "{spec}", "--max-states", "0"], "at least 1"),
    (["check", "{spec}", "--max-states", "-5"], "at least 1"),
    (["check", "{spec}", "--max-states", "lots"], "not an integer"),
    (["check", "{spec}", "--max-depth", "0"], "at least 1"),
    (["check", "{spec}", "--max-seconds", "0"], "positive"),
    (["check", "{spec}", "--max-seconds", "-1"], "positive"),
    (["check", "{spec}", "--max-seconds", "nan"], "positive"),
    (["check", "{spec}", "--max-seconds", "soon"], "not a number"),
    (["check", "{spec}", "--engine", "parallel", "--workers", "0"], "at least 1"),
    (["check", "{spec}", "--engine", "simulate", "--walks", "0"], "at least 1"),
    (["check", "{spec}", "--engine", "simulate", "--walk-depth", "x"], "not an integer"),
    (["check", "{spec}", "--engine", "simulate", "--seed", "-1"], "must not be negative"),
    (["list", "no.such.model"], "no.such.model"),
    (["prove", "{ws}/nope.toml"], "no such file"),
], ids=lambda v: "-".join(v[-2:]) if isinstance(v, list) and v else None)
def test_unknown_names_and_out_of_range_values(ws, capsys, argv, fragment):
    spec = ws / "specs" / "die.toml"
    assert_promise(capsys, ws, [a.format(spec=spec, ws=ws) for a in argv], fragment)


# ------------------------------------------------------------------------------ output paths

def _readonly(ws: Path, name: str) -> Path:
    path = ws / name
    path.write_text("keep me")
    path.chmod(0o444)
    return path


def _fifo_free_socket(ws: Path) -> Path:
    path = ws / "sock"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(path))
    _SOCKETS.append(s)
    return path


_SOCKETS: list[socket.socket] = []

OutputCase = tuple[str, Callable[[Path], list[str]], str]
OUTPUT_CASES: list[OutputCase] = [
    ("json-directory", lambda ws: ["--json", str(ws / "cx")], "is a directory"),
    ("junit-directory", lambda ws: ["--junit", str(ws / "specs")], "is a directory"),
    ("graph-directory", lambda ws: ["--graph", str((ws / "g.dot").mkdir() or ws / "g.dot")], "is a directory"),
    ("json-read-only", lambda ws: ["--json", str(_readonly(ws, "s.json"))], "read-only"),
    ("junit-read-only", lambda ws: ["--junit", str(_readonly(ws, "j.xml"))], "read-only"),
    ("graph-read-only", lambda ws: ["--graph", str(_readonly(ws, "g.dot"))], "read-only"),
    ("json-link-to-read-only", lambda ws: ["--json", str(_link(ws, "l.json", _readonly(ws, "t.json")))],
     "read-only"),
    ("json-parent-is-file", lambda ws: ["--json", str(ws / "specs" / "die.toml" / "s.json")], "directory"),
    ("json-empty-name", lambda ws: ["--json", ""], "empty"),
    ("json-socket", lambda ws: ["--json", str(_fifo_free_socket(ws))], "socket"),
    ("json-is-spec", lambda ws: ["--json", str(ws / "specs" / "die.toml")], "spec file"),
    ("junit-is-spec-via-dots", lambda ws: ["--junit", str(ws / "cx" / ".." / "specs" / "die.toml")],
     "spec file"),
    ("graph-suffix", lambda ws: ["--graph", str(ws / "g.png")], ".graphml or .dot"),
    ("json-equals-junit", lambda ws: ["--json", str(ws / "r"), "--junit", str(ws / "r")], "two outputs"),
    ("json-equals-graph", lambda ws: ["--json", str(ws / "g.dot"), "--graph", str(ws / "g.dot")],
     "two outputs"),
    ("junit-equals-graph", lambda ws: ["--junit", str(ws / "g.gv"), "--graph", str(ws / "g.gv")],
     "two outputs"),
    ("json-link-equals-junit", lambda ws: ["--json", str(_link(ws, "a.json", ws / "b.json")),
                                           "--junit", str(ws / "b.json")], "two outputs"),
    ("json-is-counterexample", lambda ws: ["--json", str(ws / "cx" / "die.NotSolved.json")],
     "two outputs"),
    ("out-is-file", lambda ws: ["--out", str(ws / "specs" / "die.toml")], "must be a directory"),
    ("out-parent-is-file", lambda ws: ["--out", str(ws / "specs" / "die.toml" / "cx")], "not a directory"),
    ("foreign-json-at-counterexample",
     lambda ws: (ws / "cx" / "die.NotSolved.json").write_text('{"mine": 1}') and [],
     "not an eoscheck counterexample"),
    ("foreign-itf-at-counterexample",
     lambda ws: (ws / "cx" / "die.NotSolved.itf.json").write_text("notes") and [],
     "not an eoscheck counterexample"),
    ("read-only-counterexample",
     lambda ws: (ws / "cx" / "die.NotSolved.json").chmod(0o444) or [], "read-only"),
    ("directory-at-counterexample",
     lambda ws: (ws / "cx" / "die.PourConserves.json").mkdir() or [], "is a directory"),
    ("link-to-read-only-counterexample",
     lambda ws: _swap_for_link(ws, ws / "cx" / "die.NotSolved.itf.json") or [], "read-only"),
]


def _link(ws: Path, name: str, target: Path) -> Path:
    link = ws / name
    link.symlink_to(target)
    return link


def _swap_for_link(ws: Path, path: Path) -> None:
    real = ws / "elsewhere.itf.json"
    shutil.move(path, real)
    real.chmod(0o444)
    path.symlink_to(real)


@pytest.mark.parametrize("name,extra,fragment", OUTPUT_CASES, ids=[c[0] for c in OUTPUT_CASES])
def test_unwritable_and_special_outputs_are_refused_before_running(ws, capsys, name, extra, fragment):
    argv = extra(ws)
    if not any(a == "--out" for a in argv):
        argv = [*argv, "--out", str(ws / "cx")]
    try:
        assert_promise(capsys, ws, ["check", str(ws / "specs" / "die.toml"), "--no-progress", *argv], fragment)
    finally:
        while _SOCKETS:
            _SOCKETS.pop().close()


def test_foreign_file_at_a_later_specs_path_stops_before_the_first_spec_runs(ws, capsys):
    (ws / "cx2").mkdir()
    (ws / "cx2" / "tp.TCConsistent.json").write_text("my notes")
    err = assert_promise(capsys, ws, ["check", str(ws / "specs"), "--out", str(ws / "cx2"), "--no-progress"],
                         "tp.TCConsistent.json")
    assert "not an eoscheck counterexample" in err
    assert not (ws / "cx2" / "die.NotSolved.json").exists()  # die (first) never ran


@pytest.mark.parametrize("flag", ["--json", "--junit"])
def test_a_failed_write_is_one_line_and_exit_2(ws, capsys, flag):
    full = device(ws, "full", FULL)
    # twophase holds: no counterexample file, so nothing else is written
    err = assert_promise(capsys, ws, ["check", str(ws / "specs" / "tp.toml"), "--no-progress",
                                      "--out", str(ws / "cx"), flag, str(full)], "full")
    assert "no space left on device" in err


def test_null_device_and_stdout_are_written_through(ws, capsys):
    null, out = device(ws, "null", NULL), stdout_link(ws)
    code = main(["check", str(ws / "specs" / "tp.toml"), "--no-progress", "--out", str(ws / "cx"),
                 "--json", str(out), "--junit", str(null)])
    _, err = capsys.readouterr()
    assert code == 0, err
    assert stat.S_ISCHR(os.lstat(null).st_mode) and os.path.islink(out)


# ------------------------------------------------------------------------------ contradictory options

@pytest.mark.parametrize("argv,fragment", [
    (["--engine", "bfs", "--master", "local[2]"], "--master applies only to the spark engine"),
    (["--master", "local[2]"], "--master applies only to the spark engine"),
    (["--engine", "dfs", "--checkpoint", "ck"], "--checkpoint applies only to the spark engine"),
    (["--checkpoint", "ck"], "--checkpoint"),
    (["--engine", "bfs", "--workers", "2"], "--workers applies only to the parallel engine"),
    (["--workers", "3"], "--workers"),
    (["--engine", "bfs", "--walks", "5"], "--walks applies only to the simulate engine"),
    (["--engine", "dfs", "--walk-depth", "5"], "--walk-depth"),
    (["--engine", "parallel", "--seed", "1"], "--seed applies only to the simulate engine"),
    (["--quiet", "-v"], "contradict"),
], ids=lambda v: "-".join(v) if isinstance(v, list) else None)
def test_contradictory_options(ws, capsys, argv, fragment):
    assert_promise(capsys, ws, ["check", str(ws / "specs" / "die.toml"), "--out", str(ws / "cx"), *argv],
                   fragment)
