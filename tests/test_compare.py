"""``eoscheck compare``: verdicts side by side and the replay that finds the diverging step."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
from eoscheck.checker.cli import main
from eoscheck.checker.compare import replay
from eoscheck.checker.machine import Machine, Property, State, Step
from eoscheck.checker.result import TraceStep

REPO = Path(__file__).resolve().parents[1]
REORDER = str(REPO / "specs" / "first-write-reorder-duplicate-shipped.toml")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main([*argv])
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------------- the done-when


def test_reorder_spec_shipped_vs_designed_shows_verdicts_and_the_diverging_step(
        tmp_path: Path, capsys) -> None:
    summary = tmp_path / "cmp.json"
    code, out, err = run(capsys, "compare", REORDER, "--variants", "kafka-shipped,kip360-designed",
                         "--no-progress", "--json", str(summary))
    assert code == 0, out + err  # the spec's own column (kafka-shipped) meets its [expect]
    flat = " ".join(out.split())
    assert "NoDuplicates violates (18) holds" in flat
    assert "step 11 of 17: kip360-designed refuses HandleProduceResponse(partition=3, client=0, record=0, " \
           "error=OUT_OF_ORDER_SEQUENCE_NUMBER, outcome=retried): that step is the fix" in flat
    assert "enables instead: HandleProduceResponse(partition=3, client=0, record=0, " \
           "error=OUT_OF_ORDER_SEQUENCE_NUMBER, outcome=raised-OutOfOrderSequenceException)" in flat

    data = json.loads(summary.read_text())
    assert data["format"] == "eoscheck-compare"
    assert data["command"].startswith("eoscheck compare ")
    cells = data["properties"][0]["cells"]
    assert cells["kafka-shipped"] == {"verdict": "violates", "length": 18}
    assert cells["kip360-designed"] == {"verdict": "holds", "length": None}
    assert data["differing"] == ["NoDuplicates"]
    (d,) = data["divergences"]
    assert (d["failing"], d["passing"], d["kind"], d["index"]) == \
        ("kafka-shipped", "kip360-designed", "refused", 11)
    assert len(d["prefix"]) == 10  # steps 1..10 are taken alike
    assert [c["distinct"] for c in data["columns"]] == [195, 171]
    assert data["met"] is True


def test_switch_alternatives_find_the_same_step(capsys) -> None:
    # the two variants differ only in client_epoch_bump: comparing its values finds the same step
    code, out, _ = run(capsys, "compare", REORDER, "--switch",
                       "client_epoch_bump=resequence_inflight,fail_inflight", "--no-progress")
    assert code == 0, out
    flat = " ".join(out.split())
    assert "A = kafka-shipped+client_epoch_bump=resequence_inflight" in flat
    assert "step 11 of 17" in flat and "refuses" in flat


def test_answered_differently_then_refused_later(capsys) -> None:
    spec = str(REPO / "specs" / "init-pid-retry-failover-shipped.toml")
    code, out, _ = run(capsys, "compare", spec, "--variants", "kafka-shipped,kip360-designed",
                       "--no-progress")
    assert code == 0, out
    flat = " ".join(out.split())
    assert "kip360-designed answers CompleteAppend(" in flat and "differently" in flat
    assert "which it refuses: HandleInitProducerId(" in flat


def test_spec_column_that_misses_its_expectation_exits_1(tmp_path: Path, capsys) -> None:
    text = Path(REORDER).read_text().replace("length = 18", "length = 17")
    spec = tmp_path / "wrong-length.toml"
    spec.write_text(text)
    code, out, _ = run(capsys, "compare", str(spec), "--variants", "kafka-shipped,kip360-designed",
                       "--no-progress")
    assert code == 1, out
    assert "FAIL kafka-shipped" in out


def test_no_spec_column_means_no_expectation(capsys) -> None:
    code, out, _ = run(capsys, "compare", REORDER, "--variants", "kip360-designed,broker-2.4",
                       "--no-progress")
    assert code == 0, out
    assert "spec's own configuration" not in out


@pytest.mark.parametrize(("argv", "fragment"), [
    (["--variants", "kafka-shipped,nope"], "--variant: unknown variant 'nope'"),
    (["--variants", "kafka-shipped"], "at least two configurations"),
    (["--variants", "kafka-shipped,kafka-shipped"], "named twice"),
    (["--variants", "kafka-shipped,"], "no empty item"),
    (["--switch", "client_epoch_bump=resequence_inflight,sometimes"], "is not one of"),
    (["--switch", "client_epoch_bump"], "expected NAME=V1,V2"),
    (["--variants", "kafka-shipped,kip360-designed", "--bound", "records=0"], "out of range"),
    (["--variants", "kafka-shipped,kip360-designed", "--set", "nope=1"], "unknown switch 'nope'"),
    (["--variants", "kafka-shipped,kip360-designed", "--json", "/"], "--json"),
])
def test_bad_input_is_one_line_exit_2(capsys, argv: list[str], fragment: str) -> None:
    code, out, err = run(capsys, "compare", REORDER, *argv, "--no-progress")
    assert code == 2, out
    assert err.count("\n") == 1 and err.startswith("eoscheck"), err
    assert "Traceback" not in err and fragment in err, err
    assert out == ""  # nothing ran


# ------------------------------------------------------------------ replay on a tiny machine


class Counter(Machine):
    """x counts up by Inc(1) to 3; ``cap`` refuses Inc beyond it; ``double`` makes Inc add 2;
    ``start`` is the initial value."""

    actions: Mapping[str, tuple[str, ...]] = {"Inc": ("by",)}

    def __init__(self, cap: int = 3, double: bool = False, start: int = 0) -> None:
        self.cap, self.double, self.start = cap, double, start

    def init_states(self) -> Iterable[State]:
        return [(self.start,)]

    def successors(self, state: State) -> Iterable[tuple[Step, State]]:
        if state[0] < self.cap:
            yield ("Inc", 1), (state[0] + (2 if self.double else 1),)

    def properties(self) -> Mapping[str, Property]:
        return {"Small": Property("Small", "x < 3", "invariant", lambda s: s[0] < 3)}

    def fields(self, state: State) -> dict[str, Any]:
        return {"x": state[0]}


def trace_of(machine: Machine, steps: int) -> list[TraceStep]:
    state = next(iter(machine.init_states()))
    trace = [TraceStep(None, state)]
    for _ in range(steps):
        step, state = next(iter(machine.successors(state)))
        trace.append(TraceStep(step, state))
    return trace


def test_replay_refused_differs_initial_and_none() -> None:
    failing = Counter()
    trace = trace_of(failing, 3)
    refused = replay(trace, failing, Counter(cap=2), "Small", "f", "p")
    assert (refused.kind, refused.index, refused.label) == ("refused", 3, "Inc(by=1)")
    assert refused.prefix == ["Inc(by=1)", "Inc(by=1)"] and refused.alternatives == []

    differs = replay(trace, failing, Counter(double=True), "Small", "f", "p")
    assert (differs.kind, differs.index, differs.diff) == ("differs", 1, {"x": (1, 2)})
    assert differs.later_refusal == (3, "Inc(by=1)")  # x is 2, then 4: past the cap, step 3 fails

    initial = replay(trace, failing, Counter(start=1), "Small", "f", "p")
    assert (initial.kind, initial.index, initial.diff) == ("initial", 0, {"x": (0, 1)})

    same = replay(trace, failing, Counter(), "Small", "f", "p")
    assert same.kind == "none" and "replays all 3 steps alike" in same.summary()


def test_incomplete_columns_are_not_replayed(tmp_path: Path, capsys) -> None:
    summary = tmp_path / "c.json"
    code, out, _ = run(capsys, "compare", REORDER, "--variants", "kafka-shipped,kip360-designed",
                       "--max-states", "100", "--no-progress", "--json", str(summary))
    assert code == 1, out  # the spec's own column did not find its expected violation
    data = json.loads(summary.read_text())
    assert {c["verdict"] for c in data["properties"][0]["cells"].values()} == {"incomplete"}
    assert data["divergences"] == [] and data["met"] is False
    assert "an incomplete run proves nothing" in " ".join(out.split())


def test_out_writes_the_failing_columns_counterexample(tmp_path: Path, capsys) -> None:
    from eoscheck.checker.counterexample import load_counterexample

    code, out, _ = run(capsys, "compare", REORDER, "--variants", "kafka-shipped,kip360-designed",
                       "--no-progress", "--out", str(tmp_path))
    assert code == 0, out
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [
        "first-write-reorder-duplicate-shipped_kafka-shipped.NoDuplicates.itf.json",
        "first-write-reorder-duplicate-shipped_kafka-shipped.NoDuplicates.json"], names
    cex = load_counterexample(tmp_path / names[1])
    assert (cex.variant, cex.property, cex.length) == ("kafka-shipped", "NoDuplicates", 18)
    assert "eoscheck show" in out
