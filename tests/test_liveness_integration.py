"""Liveness through the rest of eoscheck: fairness per instance, symmetry, specs, the CLI, the
counterexample JSON and ITF (``loop``), the viewer, and the Kafka pre-fix/post-fix pairs."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from eoscheck.checker.cli import main
from eoscheck.checker.counterexample import (
    counterexample_from_violation,
    load_counterexample,
    to_json,
    write_counterexample,
)
from eoscheck.checker.itf import to_itf
from eoscheck.checker.liveness import WF, LivenessError, check_liveness, eventually
from eoscheck.checker.registry import find_model
from eoscheck.checker.result import Result, Stats
from eoscheck.checker.spec import SpecError, build_machine, load_spec
from eoscheck.checker.symmetry import Scalarset, Symmetry
from eoscheck.checker.trace import trace_is_valid
from eoscheck.checker.view import make_console, render
from eoscheck.examples.toys import Grid

from tests.liveness_graphs import GraphMachine

REPO = Path(__file__).resolve().parents[1]
SPECS = REPO / "specs"


def at(*nodes: int):
    return lambda s: s[0] in set(nodes)


# ------------------------------------------------------------------------- fairness per instance


def test_fairness_per_instance_is_not_satisfied_by_serving_another_request():
    # At 0 and 1 request 2 can be served (-> goal 2); the loop 0 -> 1 -> 0 serves request 1 and
    # re-sends it. Weak fairness of Serve by name is satisfied by serving request 1 forever.
    edges = {0: [("Serve:1", 1), ("Serve:2", 2)], 1: [("Resend:1", 0), ("Serve:2", 2)], 2: []}
    prop = eventually("P", "request 2 is served", at(2))
    by_name = GraphMachine(edges, fair=[WF("Serve"), WF("Resend")], temporal=[prop])
    v = check_liveness(by_name, ["P"]).violations[0]
    assert [t.state[0] for t in v.trace] == [0, 1, 0] and v.trace[1].step == ("Serve", 1)
    per_request = GraphMachine(edges, fair=[WF("Serve", per=lambda step: step[1]), WF("Resend")],
                               temporal=[prop])
    assert check_liveness(per_request, ["P"]).verdict == "holds"


# ------------------------------------------------------------------------------------- symmetry


class SymmetricGrid(Grid):
    """Grid with x and y interchangeable and the symmetry declared; temporal properties over the pair."""

    def __init__(self, prop, fair=None, declare: bool = True):
        super().__init__(size=3, symmetric=True)
        self.prop, self.fair = prop, list(fair) if fair is not None else [WF("IncX", "IncY")]
        if declare:
            self.symmetry = Symmetry((Scalarset("counter", 2),),
                                     lambda s, perms: s if perms[0] == (0, 1) else (s[1], s[0]))

    def temporal_properties(self):
        return {"P": self.prop}

    def fairness(self):
        return self.fair


def test_symmetry_keeps_verdicts_and_gives_a_concrete_lasso():
    # x + y = 3 is passed through on the way up, but resets may loop below it forever
    for goal, expected in ((lambda s: s[0] + s[1] >= 1, "holds"), (lambda s: s[0] + s[1] == 3, "violated")):
        prop = eventually("P", "", goal)
        results = [check_liveness(SymmetricGrid(prop), ["P"], symmetry=sym) for sym in (True, False)]
        assert [r.verdict for r in results] == [expected, expected]
        assert results[0].stats.distinct < results[1].stats.distinct
        for r in results:
            for v in r.violations:
                assert trace_is_valid(SymmetricGrid(prop), v.trace)
                assert v.trace[v.loop - 1].state == v.trace[-1].state or v.loop == len(v.trace) - 1


def test_symmetry_refuses_what_it_cannot_keep_sound():
    only_x = eventually("P", "x reaches 2", lambda s: s[0] == 2)
    with pytest.raises(LivenessError, match="differs between two states of one symmetry orbit"):
        check_liveness(SymmetricGrid(only_x), ["P"], symmetry=True)
    assert check_liveness(SymmetricGrid(only_x), ["P"], symmetry=False).verdict == "violated"
    both = eventually("P", "", lambda s: s == (2, 2))
    # WF(IncX) and WF(IncY) apart: swapping x and y swaps which one is enabled
    with pytest.raises(LivenessError, match="renames actions"):
        check_liveness(SymmetricGrid(both, fair=[WF("IncX"), WF("IncY")]), ["P"], symmetry=True)
    with pytest.raises(LivenessError, match="without declaring it"):
        check_liveness(SymmetricGrid(both, declare=False), ["P"], symmetry=True)


def test_symmetry_refuses_fairness_split_per_instance():
    m = find_model("kafka.idempotent_produce").machine("kafka-shipped", bounds={"clients": 2, "records": 1})
    with pytest.raises(LivenessError, match="run with symmetry = false"):
        check_liveness(m, ["SendsEventuallyComplete"], symmetry=True)


def test_init_producer_id_lasso_under_symmetry_is_concrete():
    spec = load_spec(SPECS / "epoch-overflow-shipped.toml")
    m = build_machine(spec)
    reduced = check_liveness(m, ["InitEventuallyCompletes"], symmetry=True)
    full = check_liveness(m, ["InitEventuallyCompletes"], symmetry=False)
    assert reduced.verdict == full.verdict == "violated"
    assert reduced.stats.distinct < full.stats.distinct
    for r in (reduced, full):
        assert trace_is_valid(m, r.violations[0].trace)
    assert len(reduced.violations[0].trace) == len(full.violations[0].trace)  # shortest stems agree


# ---------------------------------------------------------------------------------- spec syntax


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(text)
    return path


def test_spec_names_temporal_properties_and_errors_are_one_line(tmp_path):
    ok = load_spec(write(tmp_path, 'model = "kafka.init_producer_id"\n[check]\n'
                                   'properties = ["InitEventuallyCompletes", "UniqueProducerIdEpoch"]\n'))
    from eoscheck.checker.spec import spec_to_options
    opts = spec_to_options(ok)
    assert opts.temporal == ("InitEventuallyCompletes",) and opts.properties == ("UniqueProducerIdEpoch",)
    with pytest.raises(SpecError, match=r"unknown property 'Eventually'.*InitEventuallyCompletes"):
        load_spec(write(tmp_path, 'model = "kafka.init_producer_id"\n[check]\nproperties = ["Eventually"]\n'))
    with pytest.raises(SpecError, match="is a temporal property: name it in check.properties"):
        load_spec(write(tmp_path, 'model = "kafka.init_producer_id"\n[expect]\nverdict = "violates"\n'
                                  'property = "InitEventuallyCompletes"\n'))
    # omitted properties: every safety property, no temporal one
    assert spec_to_options(load_spec(write(tmp_path, 'model = "kafka.init_producer_id"\n'))).temporal == ()


# ------------------------------------------------------------------ counterexample, ITF, viewer


def lasso_cex(tmp_path: Path):
    edges = {0: [("A", 1)], 1: [("A", 2)], 2: [("A", 3)], 3: [("A", 1)]}
    m = GraphMachine(edges, fair=[WF("A")], temporal=[eventually("P", "reach 9", at(9))])
    result = check_liveness(m, ["P"])
    spec = load_spec(write(tmp_path, 'model = "kafka.init_producer_id"\n'))
    return m, counterexample_from_violation(m, spec, result.violations[0], result)


def test_lasso_json_itf_round_trip(tmp_path):
    _, cex = lasso_cex(tmp_path)
    assert [s.state["node"] for s in cex.steps] == [0, 1, 2, 3, 1] and cex.loop == 2
    assert to_json(cex)["loop"] == 2 and to_itf(cex, loop=cex.loop)["loop"] == 2
    json_path, itf_path = write_counterexample(cex, tmp_path / "out")
    assert json.loads(itf_path.read_text())["loop"] == 2
    assert load_counterexample(json_path).loop == 2 and load_counterexample(itf_path).loop == 2
    bad = json.loads(json_path.read_text())
    bad["loop"] = 9
    json_path.write_text(json.dumps(bad))
    with pytest.raises(Exception, match="field 'loop' is 9, outside the 5 states"):
        load_counterexample(json_path)


def test_finite_traces_carry_no_loop(tmp_path):
    _, cex = lasso_cex(tmp_path)
    cex.loop = None
    assert "loop" not in to_json(cex) and "loop" not in to_itf(cex)


def test_viewer_shows_where_the_loop_starts(tmp_path):
    _, cex = lasso_cex(tmp_path)
    out = io.StringIO()
    render(cex, make_console(file=out, width=100))
    text = out.getvalue()
    assert "lasso: stem of 1 steps, then a loop of 3 steps (steps 2..4) repeated forever" in text
    before, after = text.split("=== loop starts here: steps 2..4 repeat forever ===")
    assert "Step 1" in before and "Step 2" in after
    assert "same state as step 1, back to step 2; violates P" in after


# ------------------------------------------------------------------- Kafka pre-fix / post-fix


@pytest.mark.parametrize("pre, post, prop, length", [
    ("liveness-lso-stuck-kafka-0.11", "liveness-lso-advances-kafka-2.4", "TransactionsComplete", 14),
    ("liveness-init-exhausted-epoch-shipped", "liveness-init-exhausted-epoch-designed",
     "InitEventuallyCompletes", 20),
])
def test_kafka_pre_fix_lasso_and_post_fix_holds(pre, post, prop, length):
    pre_spec, post_spec = load_spec(SPECS / f"{pre}.toml"), load_spec(SPECS / f"{post}.toml")
    machine = build_machine(pre_spec)
    v = check_liveness(machine, [prop]).violations[0]
    assert len(v.trace) == length and trace_is_valid(machine, v.trace)
    last = v.trace[-1].state
    assert not machine.temporal_properties()[prop].p(last) or prop == "InitEventuallyCompletes"
    assert check_liveness(build_machine(post_spec), list(post_spec.check.properties)).verdict == "holds"
    # the committed counterexample is the one the checker writes
    committed = load_counterexample(REPO / "counterexamples" / f"{pre}.{prop}.json")
    assert committed.loop == v.loop and committed.length == length
    assert load_counterexample(REPO / "counterexamples" / f"{pre}.{prop}.itf.json").loop == v.loop


def test_cli_check_and_show_a_lasso(tmp_path, capsys):
    code = main(["check", str(SPECS / "liveness-lso-stuck-kafka-0.11.toml"), "--out", str(tmp_path),
                 "--no-progress", "--quiet"])
    assert code == 0
    path = tmp_path / "liveness-lso-stuck-kafka-0.11.TransactionsComplete.json"
    assert json.loads(path.read_text())["loop"] == 13
    capsys.readouterr()
    assert main(["show", str(path), "--width", "100"]) == 0
    out = capsys.readouterr().out
    assert "stays here forever (stutters); violates TransactionsComplete" in out
    assert "lasso: stem of 13 steps, then the last state forever (stuttering)" in out


def test_result_without_loop_is_unchanged():
    assert Result("holds", "bfs", Stats()).violations == []


def test_list_names_the_temporal_properties(capsys):
    assert main(["list", "kafka.init_producer_id", "--specs", str(SPECS)]) == 0
    out = capsys.readouterr().out
    assert "temporal properties (checked when named in check.properties):" in out
    assert "InitEventuallyCompletes: Every producer instance" in out


def test_cli_refusal_is_one_line_exit_2(tmp_path, capsys):
    spec = tmp_path / "two.toml"
    spec.write_text('model = "kafka.idempotent_produce"\n[bounds]\nclients = 2\nrecords = 1\n'
                    '[check]\nproperties = ["SendsEventuallyComplete"]\ndeadlock = false\n')
    code = main(["check", str(spec), "--out", str(tmp_path / "out"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "liveness: fairness split per instance" in err and "run with symmetry = false" in err
    assert main(["check", str(spec), "--out", str(tmp_path / "out"), "--no-progress", "--quiet",
                 "--no-symmetry"]) == 0
