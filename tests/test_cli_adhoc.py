"""Ad hoc runs of ``eoscheck check``: --model, --variant, --set, --bound."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eoscheck.checker.cli import main

REPO = Path(__file__).resolve().parents[1]
REORDER = str(REPO / "specs" / "first-write-reorder-duplicate-shipped.toml")
MODEL = "kafka.idempotent_produce"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main([*argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code: int, err: str, *fragments: str) -> None:
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("eoscheck"), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, err


def test_variant_flips_the_reorder_spec_and_names_the_run(tmp_path: Path, capsys) -> None:
    summary = tmp_path / "s.json"
    code, out, _ = run(capsys, "check", REORDER, "--variant", "kip360-designed", "--out",
                       str(tmp_path / "cx"), "--no-progress", "--json", str(summary))
    assert code == 0, out
    data = json.loads(summary.read_text())
    spec = data["specs"][0] if "specs" in data else data["results"][0]
    text = json.dumps(spec)
    assert "first-write-reorder-duplicate-shipped+kip360-designed" in text
    assert "kip360-designed" in text
    assert not (tmp_path / "cx").exists() or not list((tmp_path / "cx").iterdir())


def test_set_reaches_the_same_fix_as_the_variant(tmp_path: Path, capsys) -> None:
    # kafka-shipped and kip360-designed differ only in how the client treats in-flight batches
    code, out, _ = run(capsys, "check", REORDER, "--set", "client_epoch_bump=fail_inflight",
                       "--out", str(tmp_path), "--no-progress")
    assert code == 0, out
    assert "holds" in out


def test_adhoc_violation_gets_its_own_counterexample_files(tmp_path: Path, capsys) -> None:
    # the spec's variant with a bound changed still violates; its files carry the configuration
    code, out, _ = run(capsys, "check", REORDER, "--bound", "records=3", "--out", str(tmp_path),
                       "--no-progress")
    assert code == 1, out  # an ad hoc run expects every property to hold
    names = sorted(p.name for p in tmp_path.iterdir())
    # "+" and "=" are not file-name characters here: the file stem spells them "_"
    assert names == ["first-write-reorder-duplicate-shipped_records_3.NoDuplicates.itf.json",
                     "first-write-reorder-duplicate-shipped_records_3.NoDuplicates.json"], names
    cex = json.loads((tmp_path / next(n for n in names if not n.endswith(".itf.json"))).read_text())
    assert cex["bounds"]["records"] == 3
    assert cex["variant"] == "kafka-shipped"


def test_model_runs_with_its_defaults(tmp_path: Path, capsys) -> None:
    code, out, _ = run(capsys, "check", "--model", MODEL, "--out", str(tmp_path), "--no-progress")
    assert code == 0, out
    assert MODEL in out and "holds" in out


def test_model_with_variant_and_bounds_finds_a_violation(tmp_path: Path, capsys) -> None:
    # every property is checked (no spec narrows them): the shipped client's SendOrderNoLoss goes
    code, out, _ = run(capsys, "check", "--model", MODEL, "--variant", "kafka-shipped",
                       "--bound", "records=2", "--bound", "max_in_flight=2", "--bound", "lost_responses=1",
                       "--bound", "transient_errors=1", "--out", str(tmp_path), "--no-progress")
    assert code == 1, out
    assert "expected every property to hold" in out and "is violated" in out
    assert any(p.name.startswith(f"{MODEL}_kafka-shipped_records_2_") for p in tmp_path.iterdir())


@pytest.mark.parametrize(("argv", "fragments"), [
    (["--variant", "nope"], ["--variant: unknown variant 'nope'", "valid variants:"]),
    (["--set", "client_epoch_bump=maybe"], ["--set: switch 'client_epoch_bump'", "is not one of"]),
    (["--set", "nope=1"], ["--set: unknown switch 'nope'", "valid switches:"]),
    (["--set", "client_epoch_bump"], ["expected NAME=VALUE"]),
    (["--bound", "records=99"], ["--bound: bound 'records' = 99 is out of range"]),
    (["--bound", "records=x"], ["--bound: bound 'records' must be an integer"]),
    (["--bound", "nope=1"], ["--bound: unknown bound 'nope'", "valid bounds:"]),
    (["--bound", "records=1", "--bound", "records=2"], ["records is given twice"]),
    (["--model", MODEL], ["either --model or SPEC paths"]),
])
def test_bad_adhoc_values_are_one_line_exit_2(tmp_path: Path, capsys, argv: list[str],
                                              fragments: list[str]) -> None:
    code, _, err = run(capsys, "check", REORDER, *argv, "--out", str(tmp_path))
    one_line_error(code, err, *fragments)
    assert not list(tmp_path.iterdir())  # nothing ran


def test_switch_values_are_typed_and_validated_like_a_spec(tmp_path: Path, capsys) -> None:
    code, _, err = run(capsys, "check", REORDER, "--set", "broker_retain_producer_state=perhaps")
    one_line_error(code, err, "--set: switch 'broker_retain_producer_state' must be true or false")
    code, _, err = run(capsys, "check", REORDER, "--set", "broker_batch_cache=many")
    one_line_error(code, err, "--set: switch 'broker_batch_cache' must be an integer")
    code, out, _ = run(capsys, "check", REORDER, "--set", "broker_retain_producer_state=false",
                       "--set", "broker_batch_cache=1", "--out", str(tmp_path), "--no-progress")
    assert code in (0, 1), out  # both values accepted as their declared types
    assert "broker_retain_producer_state=false+broker_batch_cache=1" in out.replace("\n", "")


def test_nothing_to_check_and_unknown_model(capsys) -> None:
    code, _, err = run(capsys, "check")
    one_line_error(code, err, "required: SPEC|DIR (or --model MODEL)")
    code, _, err = run(capsys, "check", "--model", "nope")
    one_line_error(code, err, "--model: unknown model 'nope'")


def test_adhoc_options_refuse_several_specs(capsys) -> None:
    code, _, err = run(capsys, "check", str(REPO / "specs"), "--bound", "records=2")
    one_line_error(code, err, "apply to one spec")


# ------------------------------------------------------------------------------- bound sweeps


def test_bound_sweep_shows_growth_and_where_the_verdict_flips(tmp_path: Path, capsys) -> None:
    code, out, _ = run(capsys, "check", REORDER, "--bound", "records=1..3", "--out", str(tmp_path),
                       "--no-progress", "--quiet")
    assert code == 1, out  # records=2 and 3 violate NoDuplicates; an ad hoc run expects holds
    sweep = out[out.index("sweep of records:"):].splitlines()
    rows = {line.split()[0]: line.split() for line in sweep[2:5]}
    assert rows["1"][1] == "24" and rows["1"][-1] == "holds"
    assert rows["2"][1] == "188" and rows["2"][2] == "x7.83" and "<-" in sweep[3]
    assert rows["3"][1] == "574" and "flips" not in sweep[4]
    assert "the verdict flips at records = 2" in out
    # each value is its own run with its own counterexample files
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".itf.json")) == [
        "first-write-reorder-duplicate-shipped_records_2.NoDuplicates.json",
        "first-write-reorder-duplicate-shipped_records_3.NoDuplicates.json"]


def test_sweep_with_no_flip_says_so(tmp_path: Path, capsys) -> None:
    code, out, _ = run(capsys, "check", REORDER, "--variant", "kip360-designed", "--bound",
                       "records=1..2", "--out", str(tmp_path), "--no-progress", "--quiet")
    assert code == 0, out
    assert "the verdict is the same for every value of records" in out


@pytest.mark.parametrize(("bounds", "fragment"), [
    (["records=0..3"], "bound 'records' = 0 is out of range"),
    (["records=3..1"], "is empty"),
    (["records=1..x"], "a sweep is NAME=LO..HI"),
    (["records=1..2", "max_in_flight=1..2"], "sweep one bound at a time"),
    (["nope=1..2"], "unknown bound 'nope'"),
])
def test_bad_sweeps_are_one_line_exit_2(tmp_path: Path, capsys, bounds: list[str],
                                        fragment: str) -> None:
    argv = [a for b in bounds for a in ("--bound", b)]
    code, _, err = run(capsys, "check", REORDER, *argv, "--out", str(tmp_path))
    one_line_error(code, err, fragment)
    assert not list(tmp_path.iterdir())
