"""Verdicts against expectations, the verdict table, statistics, JSON summary and JUnit XML."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from eoscheck.checker.report import (
    judge,
    make_outcome,
    print_stats,
    print_table,
    summary,
    write_junit,
    write_summary,
)
from eoscheck.checker.result import ActionCoverage, Result, Stats, TraceStep, Violation
from eoscheck.checker.spec import CheckOptions, Expect, Spec
from rich.console import Console


def spec(name: str, verdict: str = "holds", prop: str | None = None,
         length: int | None = None) -> Spec:
    return Spec(path=Path(f"specs/{name}.toml"), name=name, description="", model="toy.m",
                variant="v", switches={"s": True}, switch_overrides={"s": True},
                bounds={"n": 2}, check=CheckOptions(), expect=Expect(verdict, prop, length))


def violation(prop: str, length: int, kind: str = "invariant") -> Violation:
    trace = [TraceStep(None if i == 0 else ("A",), (i,)) for i in range(length)]
    return Violation(prop, kind, trace, found_length=length)


def stats() -> Stats:
    return Stats(distinct=288, generated=1146, depth=11, queue=0, elapsed=0.5,
                 coverage={"A": ActionCoverage(1000, 280), "B": ActionCoverage(146, 7)})


HOLDS = Result("holds", "bfs", stats())
INCOMPLETE = Result("incomplete", "bfs", stats(), limit_hit="states")
SIMULATED = Result("incomplete", "simulate", stats(), notes=["simulation never proves 'holds'"])
VIOLATED_P7 = Result("violated", "bfs", stats(), [violation("P", 7)])
VIOLATED_Q = Result("violated", "bfs", stats(), [violation("Q", 3)])
BOTH = Result("violated", "bfs", stats(), [violation("Q", 3), violation("P", 7)])


@pytest.mark.parametrize("the_spec,result,met,fragment", [
    (spec("a"), HOLDS, True, "every checked property holds"),
    (spec("a"), VIOLATED_Q, False, "but Q is violated (trace of 3 states)"),
    (spec("a"), INCOMPLETE, False, "incomplete (stopped at the states limit); holds is not proven"),
    (spec("a"), SIMULATED, False, "simulation never proves 'holds'"),
    (spec("b", "violates", "P"), VIOLATED_P7, True, "P is violated as expected (trace of 7 states)"),
    (spec("b", "violates", "P", 7), VIOLATED_P7, True, "as expected"),
    (spec("b", "violates", "P", 9), VIOLATED_P7, False, "the trace has 7 states where the spec expects 9"),
    (spec("b", "violates", "P"), VIOLATED_Q, False, "but the run found Q instead"),
    (spec("b", "violates", "P"), BOTH, True, "as expected"),
    (spec("b", "violates", "P"), HOLDS, False, "every checked property holds"),
    (spec("b", "violates", "P"), INCOMPLETE, False, "none was found: incomplete (stopped at the states limit)"),
])
def test_judge(the_spec, result, met, fragment):
    got_met, message = judge(the_spec, result)
    assert got_met is met
    assert fragment in message and "\n" not in message


def outcomes():
    ok = make_outcome(spec("twophase"), HOLDS, ["A", "B", "C"])
    bad = make_outcome(spec("dup", "violates", "P", 9), VIOLATED_P7, ["A", "B"])
    bad.counterexamples["P"] = [Path("cx/dup.P.json"), Path("cx/dup.P.itf.json")]
    return [ok, bad]


def render(fn, *args) -> str:
    out = io.StringIO()
    fn(Console(file=out, width=80, highlight=False), *args)
    return out.getvalue()


def test_table_fits_80_columns_and_says_ok_fail():
    text = render(print_table, outcomes())
    lines = text.splitlines()
    # the table fits 80 columns; failure reasons are one (soft-wrapped) line each for grep
    assert all(len(line) <= 80 for line in lines if not line.startswith("FAIL "))
    rows = [line for line in lines if line.startswith(("OK", "FAIL"))]
    assert rows[0].startswith("OK") and "twophase" in rows[0] and "288" in rows[0]
    assert "0.50s" in rows[0] and "holds" in rows[0]
    assert rows[1].startswith("FAIL") and "dup" in rows[1]
    assert "FAIL dup: P is violated as expected, but the trace has 7 states" in text
    assert "1 of 2 spec(s) met their expected verdict" in text


def test_long_spec_names_are_never_cut_in_80_columns():
    long_name = "init-producer-id-retry-across-coordinator-failover-as-shipped"
    text = render(print_table, [make_outcome(spec(long_name), HOLDS, ["A"])])
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert any(line.startswith("OK") and long_name in line and "holds" in line for line in lines)


@pytest.mark.parametrize("width", [60, 80, 120])
def test_shipped_names_fit_one_line_per_spec_without_breaking_words(width):
    # the longest shipped spec name with the longest shipped property: one row each in 80 columns
    names = ["zombie-reinit-fences-live-instance-shipped", "kip854-expiry-shorter-than-delivery-timeout"]
    rows = [make_outcome(spec(n, "violates", "ZombieNeverCommitsOffsets"),
                         Result("violated", "bfs", stats(), [violation("ZombieNeverCommitsOffsets", 12)]), ["A"])
            for n in names]
    out = io.StringIO()
    print_table(Console(file=out, width=width, highlight=False), rows)
    lines = out.getvalue().splitlines()
    assert all(len(line) <= width for line in lines), lines
    for name in names:  # a name is never split across lines
        assert any(name in line for line in lines)
    words = {w for line in lines for w in line.split()}
    assert "ZombieNeverCommitsOffsets" in words  # the property never cut either
    if width >= 80:
        assert sum(line.startswith("OK") for line in lines) == 2
        assert len(lines) == 4  # header, two rows, summary


def test_stats_are_tlc_style_with_coverage_warning():
    text = render(print_stats, outcomes()[0])
    assert "1,146 states generated, 288 distinct states found, 0 states left on queue." in text
    assert "The depth of the complete state graph search is 11." in text
    assert "576 distinct states/s" in text  # 288 / 0.5 s
    assert f"{288 * (1146 - 288) / 2**64:.1e}" in text
    assert "warning: action(s) never fired: C" in text


def test_json_summary_keys(tmp_path):
    path = tmp_path / "out" / "summary.json"
    write_summary(path, outcomes())
    data = json.loads(path.read_text())
    assert data == summary(outcomes())
    assert set(data) == {"format", "version", "ok", "totals", "specs"}
    assert data["format"] == "eoscheck-summary" and data["version"] == 1 and data["ok"] is False
    assert data["totals"] == {"specs": 2, "met": 1, "failed": 1, "distinct": 576,
                              "generated": 2292, "elapsed_seconds": 1.0}
    first, second = data["specs"]
    assert set(first) == {"spec", "path", "model", "variant", "switches", "bounds", "strategy",
                          "expected", "got", "met", "message", "stats", "notes", "symmetry",
                          "view"}
    assert first["symmetry"] is None
    assert first["met"] is True and first["expected"] == {"verdict": "holds", "property": None,
                                                          "length": None}
    assert set(first["stats"]) == {"distinct", "generated", "depth", "queue", "elapsed_seconds",
                                   "states_per_second", "generated_per_second",
                                   "collision_probability", "observed_collision_probability",
                                   "coverage", "never_fired", "disabled", "outside_constraint"}
    assert first["stats"]["never_fired"] == ["C"]
    assert first["stats"]["coverage"]["C"] == {"generated": 0, "distinct": 0, "outside": 0}
    assert first["stats"]["outside_constraint"] == 0
    assert second["met"] is False and second["got"]["verdict"] == "violated"
    v = second["got"]["violations"][0]
    assert v["property"] == "P" and v["length"] == 7
    assert v["counterexample"] == ["cx/dup.P.json", "cx/dup.P.itf.json"]


def test_junit_parses_with_one_failure(tmp_path):
    path = tmp_path / "junit.xml"
    write_junit(path, outcomes())
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites" and root.get("tests") == "2" and root.get("failures") == "1"
    cases = root.findall("./testsuite/testcase")
    assert [c.get("name") for c in cases] == ["twophase", "dup"]
    assert cases[0].find("failure") is None
    failure = cases[1].find("failure")
    assert failure is not None and "expects 9" in failure.get("message")
    assert "eoscheck show cx/dup.P.json" in failure.text
    assert cases[1].get("classname") == "eoscheck.toy.m"


def test_a_symmetry_reduced_run_says_what_its_counts_represent(tmp_path):
    from eoscheck.checker.cli import main
    path = tmp_path / "two.toml"
    path.write_text('model = "kafka.idempotent_produce"\nvariant = "kafka-shipped"\n'
                    '[bounds]\nclients = 2\nrecords = 1\n[check]\ndeadlock = false\n')
    counts = {}
    for flag in ([], ["--no-symmetry"]):
        out = tmp_path / f"s{len(flag)}.json"
        assert main(["check", str(path), "--json", str(out), "--no-progress", *flag]) == 0
        (entry,) = json.loads(out.read_text())["specs"]
        counts[bool(flag)] = (entry["symmetry"], entry["stats"]["distinct"])
    # kafka.idempotent_produce is a preset of kafka.eos: its clients are kafka.eos's idempotent producers
    assert counts[False][0] == "2 interchangeable idempotent clients" and counts[True][0] is None
    # two clients: an orbit has one or two states (a state that is its own mirror image: one)
    assert counts[False][1] < counts[True][1] < 2 * counts[False][1]
