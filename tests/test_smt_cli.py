"""``eoscheck prove``: exit codes, printed results, counterexample files readable by ``show``,
JSON and JUnit output, one-line errors for bad proof specs."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from eoscheck.checker.cli import main
from eoscheck.checker.counterexample import load_counterexample

REPO = Path(__file__).resolve().parent.parent
PROOF_SPECS = REPO / "specs" / "proofs"
MODEL = 'model = "eoscheck.model.obligations:PROOF_MODEL"\n'


def write(tmp_path: Path, name: str, body: str) -> Path:
    p = tmp_path / f"{name}.toml"
    p.write_text(body, encoding="utf-8")
    return p


def test_mutation_spec_meets_violates_and_writes_a_showable_counterexample(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cex"
    code = main(["prove", str(PROOF_SPECS / "mutation-increment-without-wrap.toml"), "--out", str(out),
                 "--json", str(tmp_path / "s.json"), "--junit", str(tmp_path / "j.xml")])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "SequenceIncrementAgrees" in printed and "counterexample" in printed
    assert "SequenceAcceptsExactlyNext" in printed and "proved" in printed
    files = sorted(out.glob("*.json"))
    json_file = out / "proofs-mutation-increment-without-wrap.SequenceIncrementAgrees.json"
    assert json_file in files and (out / (json_file.stem + ".itf.json")) in files
    cex = load_counterexample(json_file)
    assert cex.property == "SequenceIncrementAgrees" and cex.switches == {"mutation": "increment-without-wrap"}
    assert cex.engine["replayed_concretely"] is True
    assert cex.steps[-1].state["client.next_sequence"] == 2**31
    # `eoscheck show` renders it
    assert main(["show", str(json_file), "--width", "200"]) == 0
    shown = capsys.readouterr().out
    assert "violates SequenceIncrementAgrees" in shown and "2147483648" in shown
    # JSON summary and JUnit report
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["ok"] is True and summary["totals"]["counterexample"] == 1
    [spec] = summary["specs"]
    statuses = {o["name"]: o["status"] for o in spec["obligations"]}
    assert statuses == {"SequenceAcceptsExactlyNext": "proved", "SequenceIncrementAgrees": "counterexample"}
    root = ET.parse(tmp_path / "j.xml").getroot()
    assert root.get("tests") == "2" and root.get("failures") == "0"


def test_holds_spec_with_a_counterexample_is_not_met(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = write(tmp_path, "wrong", MODEL + '[prove]\nobligations = ["SequenceIncrementAgrees"]\n'
                 'mutation = "increment-without-wrap"\n[expect]\nverdict = "holds"\n')
    code = main(["prove", str(spec), "--out", str(tmp_path / "cex"), "--junit", str(tmp_path / "j.xml")])
    assert code == 1
    assert "NOT MET" in capsys.readouterr().out
    root = ET.parse(tmp_path / "j.xml").getroot()
    assert root.get("failures") == "1"


def test_violates_spec_whose_obligation_is_proved_is_not_met(tmp_path: Path) -> None:
    spec = write(tmp_path, "proved", MODEL + '[prove]\nobligations = ["SequenceAcceptsExactlyNext"]\n'
                 '[expect]\nverdict = "violates"\nproperty = "SequenceAcceptsExactlyNext"\n')
    assert main(["prove", str(spec), "--out", str(tmp_path / "cex")]) == 1
    assert not (tmp_path / "cex").exists()


def test_expected_length_is_checked(tmp_path: Path) -> None:
    body = (MODEL + '[prove]\nobligations = ["SequenceIncrementAgrees"]\nmutation = "increment-without-wrap"\n'
            '[expect]\nverdict = "violates"\nproperty = "SequenceIncrementAgrees"\nlength = {n}\n')
    assert main(["prove", str(write(tmp_path, "len3", body.format(n=3))), "--out", str(tmp_path / "c")]) == 0
    assert main(["prove", str(write(tmp_path, "len5", body.format(n=5))), "--out", str(tmp_path / "c")]) == 1


@pytest.mark.parametrize("body,message", [
    ('[prove]\nobligations = ["NoSuchThing"]\n', "unknown obligation 'NoSuchThing'"),
    ('[prove]\nmutation = "nope"\n', "unknown mutation 'nope'"),
    ('[prove]\ntimeout = -1\n', "prove.timeout must be a positive number"),
    ('[prove]\nmax_k = 0\n', "prove.max_k must be a positive integer"),
    ('[prove]\nfoo = 1\n', "unknown key 'foo' in [prove]"),
    ('[prove]\nsource = "no.such.module:PROOFS"\n', "cannot import proof set"),
    ('[prove]\nobligations = []\n', "non-empty list"),
    ('', "no [prove] table"),
    (('[prove]\nobligations = ["SequenceAcceptsExactlyNext"]\n[expect]\nverdict = "violates"\n'
      'property = "PidEpochIncreases"\n'), "is not among the obligations"),
    ('[prove]\n[expect]\nverdict = "violates"\nproperty = "Nope"\n', "unknown property 'Nope'"),
])
def test_bad_proof_specs_are_one_line_errors_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         body: str, message: str) -> None:
    spec = write(tmp_path, "bad", MODEL + body)
    assert main(["prove", str(spec)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert str(spec) in err


def test_missing_spec_and_unknown_flag_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prove", str(tmp_path / "absent.toml")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["prove", str(PROOF_SPECS / "real-widths.toml"), "--no-such-flag"]) == 2
    assert main(["prove", str(PROOF_SPECS / "real-widths.toml"), "--obligation", "Nope"]) == 2


def test_a_user_file_is_never_overwritten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cex"
    out.mkdir()
    mine = out / "proofs-mutation-increment-without-wrap.SequenceIncrementAgrees.json"
    mine.write_text("my notes", encoding="utf-8")
    code = main(["prove", str(PROOF_SPECS / "mutation-increment-without-wrap.toml"), "--out", str(out)])
    assert code == 2
    assert mine.read_text(encoding="utf-8") == "my notes"


def test_the_explorer_refuses_a_proof_spec_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(PROOF_SPECS / "real-widths.toml"), "--no-progress"]) == 2
    assert "eoscheck prove" in capsys.readouterr().err


def test_committed_proof_counterexamples_load_and_show(capsys: pytest.CaptureFixture[str]) -> None:
    files = sorted((REPO / "counterexamples" / "proofs").glob("*.json"))
    ours = [f for f in files if not f.name.endswith(".itf.json")]
    assert len(ours) >= 3
    for f in ours:
        cex = load_counterexample(f)
        assert cex.engine.get("name") == "z3" and cex.engine.get("replayed_concretely") is True
        assert main(["show", str(f)]) == 0
    capsys.readouterr()


def test_reruns_write_byte_identical_counterexamples(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = str(PROOF_SPECS / "mutation-threshold-at-max.toml")
    assert main(["prove", spec, "--out", str(tmp_path / "one")]) == 0
    assert main(["prove", spec, "--out", str(tmp_path / "two")]) == 0
    capsys.readouterr()
    one = sorted(p.name for p in (tmp_path / "one").iterdir())
    assert one == sorted(p.name for p in (tmp_path / "two").iterdir()) and len(one) == 4
    for name in one:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
