"""``eoscheck show --chart``: the counterexample as a message sequence chart in the terminal."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from eoscheck.checker.cli import main

REPO = Path(__file__).resolve().parents[1]
CEX = REPO / "counterexamples"
REORDER = CEX / "first-write-reorder-duplicate-shipped.NoDuplicates.json"
LASSO = CEX / "liveness-init-exhausted-epoch-shipped.InitEventuallyCompletes.json"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main([*argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("path", [REORDER, CEX / (REORDER.stem + ".itf.json")])
def test_json_and_itf_draw_the_same_chart_within_80_columns(path: Path, capsys) -> None:
    code, out, err = run(capsys, "show", "--chart", str(path))
    assert code == 0, err
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    assert "producer[0]" in lines[3] and "leader" in lines[3]
    assert "|--#1 Produce(client0/r0, pi..->|" in out
    assert "* #1 Produce(client0/r0, pid 0, epoch" in out
    assert "X #3 lost: LoseResponse(partition=3, client=0, record=0)" in out
    # r1's first response, left on the connection the request timeout closed, and its last one
    assert "still in flight at the end: #4, #10" in out


def test_itf_and_json_output_are_identical(capsys) -> None:
    _, a, _ = run(capsys, "show", "--chart", str(REORDER))
    _, b, _ = run(capsys, "show", "--chart", str(CEX / (REORDER.stem + ".itf.json")))
    assert a == b


@pytest.mark.parametrize("path", [LASSO, CEX / (LASSO.stem + ".itf.json")])
def test_a_lasso_shows_its_loop(path: Path, capsys) -> None:
    code, out, err = run(capsys, "show", "--chart", str(path))
    assert code == 0, err
    data = json.loads(LASSO.read_text())
    assert f"from state {data['loop']} on, it stays there forever" in out \
        or f"the loop: from state {data['loop']}" in out


def test_piped_output_is_plain_ascii_whatever_columns_says(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "eoscheck.checker.cli", "show", "--chart", str(REORDER)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path, check=False,
                          env={"PATH": "/usr/bin:/bin", "COLUMNS": "200", "FORCE_COLOR": ""})
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and proc.stdout.isascii()
    assert max(len(line) for line in proc.stdout.splitlines()) <= 80


def test_width_narrows_the_chart(capsys) -> None:
    code, out, _ = run(capsys, "show", "--chart", "--width", "50", str(REORDER))
    assert code == 0
    assert max(len(line) for line in out.splitlines()) <= 50


def test_a_machine_without_a_hook_gets_lanes_from_its_fields(capsys) -> None:
    path = CEX / "diehard-big-jug-reaches-4.NotSolved.json"
    code, out, err = run(capsys, "show", "--chart", str(path))
    assert code == 0, err
    assert "jugs" in out and "~ big: 0 -> 5" in out


@pytest.mark.parametrize("argv, message", [
    (["--width", "30"], "a chart needs at least 40 columns"),
    (["--full"], "--chart draws every actor at every step"),
    (["--actor", "client[0]"], "--chart draws every actor at every step"),
])
def test_bad_options_are_one_line_and_exit_2(argv: list[str], message: str, capsys) -> None:
    code, out, err = run(capsys, "show", "--chart", *argv, str(REORDER))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err


@pytest.mark.parametrize("content, message", [
    (None, "no such file"),
    ("not json", "not a JSON file"),
    ('{"format": "other"}', "not an eoscheck counterexample"),
    ('{"vars": ["x"], "states": [{"x": {"#bigint": "zz"}}]}', "x"),
])
def test_bad_files_are_one_line_and_exit_2(content: str | None, message: str, tmp_path: Path,
                                           capsys) -> None:
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_text(content)
    code, out, err = run(capsys, "show", "--chart", str(path))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err and "Traceback" not in err


def test_another_tools_itf_trace_gets_a_chart_from_its_variables(tmp_path: Path, capsys) -> None:
    path = tmp_path / "apalache.itf.json"
    path.write_text(json.dumps({
        "#meta": {"source": "Spec.tla"}, "vars": ["x", "y"], "loop": 1,
        "states": [{"#meta": {"index": 0}, "x": {"#bigint": "0"}, "y": "a"},
                   {"#meta": {"index": 1}, "x": {"#bigint": "1"}, "y": "a"},
                   {"#meta": {"index": 2}, "x": {"#bigint": "1"}, "y": "b"}]}))
    code, out, err = run(capsys, "show", "--chart", str(path))
    assert code == 0, err
    lines = out.splitlines()
    assert ["x", "y"] in [line.split() for line in lines[:4]]  # one lane per variable that changes
    assert "~ x: 0 -> 1" in out and "~ y: a -> b" in out
    assert "the loop: from state 1 to the last, forever" in out and "back to state 1" in out
    assert "note: drawn from the state fields" in out
