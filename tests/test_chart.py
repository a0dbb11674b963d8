"""Message sequence charts: the event vocabulary, pairing, the ASCII layout, the derivations."""

from __future__ import annotations

import re
from pathlib import Path

from eoscheck.checker.chart import (
    OUTSIDE,
    build_chart,
    chart_of_counterexample,
    chart_of_trace,
    fault,
    lost,
    receive,
    send,
    state,
    step,
)
from eoscheck.checker.chart_svg import render_svg
from eoscheck.checker.chart_text import lines
from eoscheck.checker.counterexample import load_counterexample
from eoscheck.checker.result import TraceStep

REPO = Path(__file__).resolve().parents[1]
CEX = REPO / "counterexamples"
REORDER = CEX / "first-write-reorder-duplicate-shipped.NoDuplicates.json"


def _chart(steps, order=(), loop=None):
    rows = [(0, "Initial state", [])] + [(i, f"S{i}", evs) for i, evs in enumerate(steps, start=1)]
    return build_chart("t", rows, order, loop=loop)


# ------------------------------------------------------------------------------------- pairing


def test_messages_are_numbered_and_paired_oldest_first_per_key() -> None:
    chart = _chart([[send("a", "b", "m1", "k")], [send("a", "b", "m2", "k")],
                    [receive("b", "m1", "k")], [receive("b", "m2", "k")]])
    sends = [e for r in chart.rows for e in r.events if e.kind == "send"]
    recvs = [e for r in chart.rows for e in r.events if e.kind == "receive"]
    assert [e.msg for e in sends] == [1, 2] and [e.msg for e in recvs] == [1, 2]
    # each end points at the other
    for s in sends:
        assert s.partner is not None
        r = chart.rows[s.partner[0]].events[s.partner[1]]
        assert r.msg == s.msg and r.peer == "a" and r.lane == "b"
        assert r.partner is not None and chart.rows[r.partner[0]].events[r.partner[1]] is s
    assert all(r.late is None for r in recvs)


def test_a_message_overtaken_on_its_lane_pair_is_late() -> None:
    chart = _chart([[send("a", "b", "first", "k1")], [send("a", "b", "second", "k2")],
                    [receive("b", "second", "k2")], [receive("b", "first", "k1")]])
    recvs = [e for r in chart.rows for e in r.events if e.kind == "receive"]
    assert [(e.msg, e.late) for e in recvs] == [(2, None), (1, 2)]
    assert any("(late: #2 overtook it)" in line for line in lines(chart))


def test_lost_messages_close_their_send_and_are_marked() -> None:
    chart = _chart([[send("a", "b", "req", "k")], [lost("req (lost)", "k")]])
    s = chart.rows[1].events[0]
    assert s.lost and s.partner == (2, 0)
    text = lines(chart)
    arrow = next(line for line in text if "#1 req" in line and "|" in line)
    assert arrow.rstrip().endswith("X|"), arrow  # the arrow ends in X, not >
    assert any(" X #1 lost: req (lost)" in line for line in text)


def test_a_receive_without_its_send_comes_from_before_the_trace() -> None:
    chart = _chart([[receive("b", "old", "k")]])
    r = chart.rows[1].events[0]
    assert r.msg == 1 and r.peer == OUTSIDE and r.partner is None
    assert chart.lanes == ["b", OUTSIDE]


def test_lane_order_named_lanes_first_then_by_appearance() -> None:
    chart = _chart([[state("z", "x: 0 -> 1")], [send("b", "a", "m", 1)]], order=("a", "nope", "b"))
    assert chart.lanes == ["a", "b", "z"]


# -------------------------------------------------------------------------------------- layout


def _many_lanes_chart():
    evs = [[send(f"lane{i}", f"lane{(i + 3) % 9}", "a long message label " * 3, i)] for i in range(9)]
    evs += [[receive(f"lane{(i + 3) % 9}", "reply " * 10, i)] for i in range(9)]
    evs += [[fault("lane8", "crash " * 20)], [state("lane0", "epoch: 0 -> 1")], [step("lane4", "x")]]
    return _chart(evs)


def test_every_line_fits_the_width_and_is_plain_ascii() -> None:
    for chart in (_many_lanes_chart(), chart_of_counterexample(load_counterexample(REORDER))):
        for width in (80, 60, 40):
            for line in lines(chart, width):
                assert len(line) <= width, (width, line)
                assert line.isascii() and "\x1b" not in line


def test_lanes_are_bars_at_fixed_columns_and_arrows_join_them() -> None:
    chart = chart_of_counterexample(load_counterexample(REORDER))
    text = lines(chart)
    header = next(i for i, line in enumerate(text) if "producer[0]" in line)
    assert "leader" in text[header]
    bars = [m.start() for m in re.finditer(r"\|", text[header + 1])]
    assert len(bars) == 2  # producer[0] and leader
    left, right = bars
    arrows = [line for line in text if "--#" in line or "<-#" in line or "X-#" in line]
    assert arrows
    for line in arrows:
        assert line[left] == "|" and line[right] == "|", line
        head = line[right - 1] if "--#" in line else line[left + 1]
        assert head in "<>X", line


def test_too_many_lanes_say_which_are_not_drawn() -> None:
    text = lines(_many_lanes_chart(), 40)
    assert any(line.startswith("(not drawn") for line in text)
    # events on a lane not drawn name it
    assert any("[lane8] crash" in line for line in text)


def test_a_lasso_marks_where_its_loop_starts_and_returns() -> None:
    chart = _chart([[state("a", "x: 0 -> 1")], [state("a", "x: 1 -> 2")], [state("a", "x: 2 -> 1")]],
                   loop=1)
    text = lines(chart)
    start = next(i for i, line in enumerate(text) if "the loop: from state 1" in line)
    assert text[start + 1].strip().startswith("1 S1")
    assert "back to state 1" in text[-1]
    stutter = lines(_chart([[state("a", "x: 0 -> 1")]], loop=1))
    assert any("from state 1 on, it stays there forever" in line for line in stutter)


def test_marks_put_a_note_under_the_step() -> None:
    chart = _chart([[state("a", "x: 0 -> 1")], [state("a", "x: 1 -> 2")]])
    text = lines(chart, marks={2: "diverges here"})
    i = next(i for i, line in enumerate(text) if line.strip() == "2 S2")
    assert "<- diverges here" in text[i + 1]


# ------------------------------------------------------------------------------- kafka's hook


def test_the_idempotent_preset_draws_producer_and_leader_with_requests_and_responses() -> None:
    # kafka.idempotent_produce is a preset of kafka.eos: its chart comes from the declarations, on the
    # older machine's lane names (the preset's ``lanes``)
    chart = chart_of_counterexample(load_counterexample(REORDER))
    assert chart.source == "compose" and not chart.notes
    assert chart.lanes == ["producer[0]", "leader"]
    kinds = [(r.index, e.kind, e.lane) for r in chart.rows for e in r.events]
    # step 3 (Drain) sends r0's produce request; step 5 (HandleProduce) receives it at the leader
    assert (3, "send", "producer[0]") in kinds and (5, "receive", "leader") in kinds
    assert (5, "fault", "leader") in kinds  # the injected NOT_ENOUGH_REPLICAS
    assert (7, "lost", "producer[0]") in kinds  # LoseResponse
    assert (8, "step", "producer[0]") in kinds  # the request timeout
    assert any(k == (12, "state", "producer[0]") and "epoch: 0 -> 1" in e.label
               for r in chart.rows for e in r.events for k in [(r.index, e.kind, e.lane)])
    sends = [(r.index, e) for r in chart.rows for e in r.events if e.kind == "send"]
    assert [i for i, e in sends if e.lost] == [5]  # the response LoseResponse drops
    # never received: r1's first response (its connection closed by the timeout) and r1's last one
    assert [i for i, e in sends if e.partner is None] == [6, sends[-1][0]]


def test_the_itf_file_draws_the_same_chart() -> None:
    a = chart_of_counterexample(load_counterexample(REORDER))
    b = chart_of_counterexample(load_counterexample(CEX / REORDER.name.replace(".json", ".itf.json")))
    assert b.source == "compose"
    assert [[(e.kind, e.lane, e.msg) for e in r.events] for r in a.rows] == \
           [[(e.kind, e.lane, e.msg) for e in r.events] for r in b.rows]


def test_a_file_the_model_does_not_produce_falls_back_to_fields(tmp_path: Path) -> None:
    import json

    data = json.loads(REORDER.read_text())
    data["steps"][3]["label"] = "Drain(client=0, record=9, seq=9, epoch=9)"
    path = tmp_path / "x.json"
    path.write_text(json.dumps(data))
    chart = chart_of_counterexample(load_counterexample(path))
    assert chart.source == "fields"
    assert chart.notes and "does not take step 3" in chart.notes[0]
    assert "client[0]" in chart.lanes  # one lane per top-level field that changes
    assert any(e.kind == "step" and e.label == "Send" for e in chart.rows[1].events)


# ----------------------------------------------------------------------------- compose machines


def test_compose_derives_sends_receives_and_lanes_from_the_declarations() -> None:
    from eoscheck.examples.twophase_composed import ComposedTwoPhase

    m = ComposedTwoPhase(rms=2)
    trace = [TraceStep(None, next(iter(m.init_states())))]
    for action in ("RMPrepare", "TMRcvPrepared"):
        st, nxt = next((s, n) for s, n in m.successors(trace[-1].state) if s[0] == action)
        trace.append(TraceStep(st, nxt))
    chart = chart_of_trace(m, trace, "2pc")
    assert chart.source == "compose"
    kinds = [(e.kind, e.lane, e.peer) for r in chart.rows for e in r.events]
    assert ("send", "rm[0]", "tm") in kinds
    assert ("receive", "tm", "rm[0]") in kinds
    sent = next(e for e in chart.rows[1].events if e.kind == "send")
    got = next(i for i, e in enumerate(chart.rows[2].events) if e.kind == "receive")
    assert sent.partner == (2, got) and chart.rows[2].events[got].msg == sent.msg


def test_compose_lossy_channel_gives_lost_messages() -> None:
    from eoscheck.examples.abp import ComposedAbp

    m = ComposedAbp(lost=1)
    trace = [TraceStep(None, next(iter(m.init_states())))]
    for action in ("Send", "LoseData"):
        st, nxt = next((s, n) for s, n in m.successors(trace[-1].state) if s[0] == action)
        trace.append(TraceStep(st, nxt))
    chart = chart_of_trace(m, trace, "abp")
    sent = chart.rows[1].events[1]
    assert sent.kind == "send" and sent.lane == "sender" and sent.peer == "receiver" and sent.lost
    assert chart.rows[2].events[0].kind == "lost"


def test_kafka_eos_lanes_are_kafka_actors() -> None:
    chart = chart_of_counterexample(load_counterexample(
        CEX / "eos-late-batch-seq-kafka-3.0.NoHangingTransaction.json"))
    assert chart.source == "compose"
    assert chart.lanes[:3] == ["producer[0]", "txn coordinator", "leader[0]"]
    kinds = {(e.kind, e.lane) for r in chart.rows for e in r.events}
    assert ("send", "producer[0]") in kinds and ("receive", "leader[0]") in kinds
    assert ("fault", "producer[0]") in kinds  # DeliveryTimeout spends a budget


def test_svg_draws_one_arrow_per_message_and_crosses_for_losses() -> None:
    chart = chart_of_counterexample(load_counterexample(REORDER))
    svg = render_svg(chart, {11: "diverges"})
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert svg.count('<g class="msg">') == chart.messages()
    assert svg.count('<g class="lost">') == 1 and svg.count('stroke="#c62828" stroke-width="3"') == 1
    assert "stroke-dasharray" in svg  # the response still in flight at the end
    assert "\u2190 diverges" in svg
    assert "http://" not in svg.replace('xmlns="http://www.w3.org/2000/svg"', "")


# ------------------------------------------------------------------ every committed counterexample

COMMITTED = sorted(p for p in CEX.glob("*.json"))


def test_every_committed_counterexample_draws_from_its_model_within_80_columns() -> None:
    """Each file replays on its model (JSON by fields, ITF by typed fields), no hook fails, and the
    chart fits 80 columns: the charts the Kafka models describe stay true as the models change."""
    sources: dict[str, set[str]] = {}
    for path in COMMITTED:
        cex = load_counterexample(path)
        chart = chart_of_counterexample(cex)
        assert chart.notes == [], (path.name, chart.notes)
        sources.setdefault(cex.model, set()).add(chart.source)
        assert all(len(line) <= 80 for line in lines(chart)), path.name
        sends = [e for r in chart.rows for e in r.events if e.kind == "send"]
        for e in sends:  # every paired end points back
            if e.partner is not None:
                other = chart.rows[e.partner[0]].events[e.partner[1]]
                assert other.msg == e.msg and other.kind in ("receive", "lost")
    assert sources["kafka.idempotent_produce"] == {"compose"}  # a preset of kafka.eos
    assert sources["kafka.init_producer_id"] == {"compose"}  # the preset of kafka.eos
    assert sources["kafka.eos_pipeline"] == {"compose"}  # the preset of kafka.eos
    assert sources["kafka.eos"] == {"compose"}


def test_kafka_lanes_per_model() -> None:
    def lanes_of(name: str) -> list[str]:
        return chart_of_counterexample(load_counterexample(CEX / name)).lanes

    assert lanes_of("init-pid-retry-failover-shipped.SoleInstanceNeverFenced.json") == \
        ["txn coordinator", "instance[0]"]
    assert lanes_of("late-produce-kip447.NoDuplicateOutput.json") == \
        ["app[0]", "txn coordinator", "output leader", "group coordinator"]


def test_compose_rules_without_an_indexed_actor_take_the_part_they_write() -> None:
    chart = chart_of_counterexample(load_counterexample(
        CEX / "eos-zombie-instance-expired-state-kafka-3.0.NoZombieWrite.json"))
    marks = {(r.label.split("(")[0], e.lane) for r in chart.rows for e in r.events
             if e.kind in ("step", "fault")}
    assert ("Tick", "clock") in marks  # the clock it advances, not the producers it reads
    assert ("Restart", "producer[0]") in marks and ("ExpireProducerIds", "leader[0]") in marks
    assert "producer" not in chart.lanes
