"""``eoscheck conform``: the harness against the sample of Kafka's unit-test vectors, disagreement
detection (a mutated vector, a mutated rule), inexpressible vectors and their reasons, malformed
files (exit 2, one line), the JSON output, and the variant choice."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from eoscheck.checker.cli import main
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import (
    KNOWN_MECHANISMS,
    VectorFileError,
    load_vectors,
    parse_vectors,
)

#: the sample of 49 vectors shipped with the issue (a copy is kept with the tests)
SAMPLE = Path(__file__).parent / "data" / "kafka-unit-test-vectors.sample.json"


def raw() -> dict:
    return json.loads(SAMPLE.read_text())


def write(tmp_path: Path, data: object, name: str = "v.json") -> str:
    p = tmp_path / name
    p.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(p)


def one(data: dict, vid: str) -> dict:
    out = copy.deepcopy(data)
    out["vectors"] = [v for v in out["vectors"] if v["id"] == vid]
    return out


def test_the_sample_agrees_under_the_matching_variant():
    run = harness.run_file(load_vectors(SAMPLE))
    assert run.variant == "kafka-2024-10" and run.chosen_by.startswith("commit 1eb7644349cb")
    outcomes = [v.outcome for v in run.vectors]
    assert len(outcomes) == 49 and harness.DISAGREE not in outcomes
    assert outcomes.count(harness.NOT_EXPRESSIBLE) <= 4  # at most 10%
    assert all(v.reason for v in run.vectors if v.outcome == harness.NOT_EXPRESSIBLE)
    # every agreeing vector compared something, and all 8 mechanisms were exercised
    assert all(sum(s.compared for s in v.steps) > 0 for v in run.vectors if v.outcome == harness.AGREE)
    assert len(run.counts()) == 8


def test_cli_prints_a_table_per_mechanism_and_exits_0(capsys):
    assert main(["conform", str(SAMPLE)]) == 0
    out = capsys.readouterr().out
    for mech in raw()["mechanisms"]:
        assert mech in out
    assert "kafka-2024-10" in out


def test_a_mutated_vector_disagrees_with_both_values_shown(tmp_path, capsys):
    data = one(raw(), "INIT-14")
    data["vectors"][0]["steps"][0]["expected"]["error"] = "NONE"
    assert main(["conform", write(tmp_path, data)]) == 1
    out = capsys.readouterr().out
    assert "INIT-14" in out and "expected 'NONE', model 'PRODUCER_FENCED'" in out


def test_a_mutated_rule_is_caught(monkeypatch):
    # a leader that forgets the sequence check: PROD vectors must disagree
    from eoscheck.model.api import leader
    from eoscheck.model.partition.validation import ProduceDecision

    monkeypatch.setattr(leader, "validate_produce", lambda *a, **k: ProduceDecision(0, -1, True))
    run = harness.run_file(parse_vectors(one(raw(), "PROD-07")))
    assert run.vectors[0].outcome == harness.DISAGREE
    assert any(d.field == "error" and d.expected == "OUT_OF_ORDER_SEQUENCE_NUMBER" for _, d in run.vectors[0].differences)


def test_a_mutated_coordinator_rule_is_caught(monkeypatch):
    from eoscheck.model.transactions import end_txn

    real = end_txn.end_txn_snapshot
    monkeypatch.setattr("eoscheck.model.api.coordinator.end_txn_snapshot",
                        lambda m, pid, ep, res, **kw: real(m, pid, ep, res, **{**kw, "client_tv": 2}))
    run = harness.run_file(parse_vectors(one(raw(), "SM-12")))
    assert run.vectors[0].outcome == harness.AGREE  # SM-12 sends TV2 anyway: the mutation is invisible there
    run = harness.run_file(parse_vectors(one(raw(), "SM-15")))
    assert run.vectors[0].outcome == harness.AGREE  # SM-15 calls prepareAbortOrCommit directly
    monkeypatch.setattr("eoscheck.model.api.coordinator.end_txn_snapshot",
                        lambda *a, **kw: end_txn.EndTxnOutcome(0, a[0], False))
    run = harness.run_file(parse_vectors(one(raw(), "SM-01") | {"vectors": [v for v in raw()["vectors"]
                                                                          if v["id"] in ("SM-07-tv0", "SM-10-tv0")]}))
    assert {v.outcome for v in run.vectors} == {harness.DISAGREE}


def test_variant_matters_and_can_be_forced(tmp_path, capsys):
    path = write(tmp_path, one(raw(), "SM-12"))
    assert main(["conform", path]) == 0
    # later trunk picks the EndTxn validation by the request's version: SM-12's behaviour changed there
    assert main(["conform", path, "--variant", "kafka-later-trunk"]) == 1
    assert "chosen by --variant" in capsys.readouterr().out


def test_the_variant_follows_the_commit_date_for_an_unknown_commit():
    data = raw()
    data["source"] = {"commit": "0" * 40, "commit_date": "2019-05-01"}
    run = harness.run_file(parse_vectors(data))
    assert run.variant == "kafka-2.1-2.3" and "commit date" in run.chosen_by
    assert any(v.outcome == harness.DISAGREE for v in run.vectors)  # 2019 Kafka is not the 2024 snapshot


def test_not_expressible_only_with_a_reason():
    base = one(raw(), "INIT-07a")
    v = base["vectors"][0]
    cases = {
        "initial_state.broker_rack": dict(v, id="A", initial_state={"broker_rack": "r1"}),
        "no request or event": dict(v, id="B", steps=[{"input": {"api": "DescribeProducers"}, "expected": {"error": "NONE"}}]),
        "txn_timeout_ms": dict(v, id="C", steps=[{"input": v["steps"][0]["input"],
                                                  "expected": {"state_after": {"txn_timeout_ms": 10}}}]),
    }
    base["vectors"] = list(cases.values())
    run = harness.run_file(parse_vectors(base))
    for (needle, _), rep in zip(cases.items(), run.vectors):
        assert rep.outcome == harness.NOT_EXPRESSIBLE and needle in rep.reason, rep


def test_placeholders_run_every_choice():
    run = harness.run_file(parse_vectors(one(raw(), "SM-21")))
    assert run.vectors[0].outcome == harness.AGREE and run.vectors[0].case.count("state=") == 4


@pytest.mark.parametrize("content, needle", [
    ("{not json", "not JSON"),
    ([], "top level"),
    ({"vectors": "x"}, "'vectors' list"),
    ({"vectors": [{"id": "X", "mechanism": "m", "steps": []}]}, "non-empty"),
    ({"vectors": [{"id": "X", "mechanism": "m", "steps": [{"input": 3}]}]}, "'input' object"),
    ({"vectors": [{"mechanism": "m", "steps": [{"input": {}}]}]}, "'id'"),
    ({"mechanisms": {"a": ""}, "vectors": [{"id": "X", "mechanism": "b", "steps": [{"input": {}}]}]}, "not listed"),
    # listed in the file's map but not one of the model's: refused, not run under a label nothing checks
    ({"mechanisms": {"b": ""}, "vectors": [{"id": "X", "mechanism": "b", "steps": [{"input": {}}]}]},
     "mechanism 'b' is not one the model knows"),
    ({"vectors": [{"id": "X", "mechanism": "producer_fencing", "steps": [{"input": {"api": "EndTxn"}}]}]},
     "not one the model knows"),
])
def test_a_malformed_file_is_one_line_and_exit_2(tmp_path, capsys, content, needle):
    assert main(["conform", write(tmp_path, content)]) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_missing_file_and_bad_arguments_exit_2(tmp_path, capsys):
    assert main(["conform", str(tmp_path / "none.json")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["conform", str(SAMPLE), "--variant", "kafka-9.9"]) == 2
    assert main(["conform"]) == 2
    with pytest.raises(VectorFileError):
        load_vectors(tmp_path)


def test_json_holds_the_same_data(tmp_path, capsys):
    data = one(raw(), "INIT-14")
    data["vectors"][0]["steps"][0]["expected"]["producer_epoch"] = 5
    out = tmp_path / "r.json"
    assert main(["conform", write(tmp_path, data), "--json", str(out)]) == 1
    doc = json.loads(out.read_text())
    assert doc["ok"] is False and doc["totals"] == {"agree": 0, "disagree": 1, "not expressible": 0}
    assert doc["mechanisms"] == {"init_producer_id": {"agree": 0, "disagree": 1, "not expressible": 0}}
    assert doc["vectors"][0]["differences"] == [{"step": 1, "field": "producer_epoch", "expected": 5, "model": -1}]
    full = tmp_path / "all.json"
    assert main(["conform", str(SAMPLE), "--json", str(full)]) == 0
    doc = json.loads(full.read_text())
    assert sum(doc["totals"].values()) == 49 and doc["variant"] == "kafka-2024-10"
    # as check and prove do, a missing directory of --json is made (write_output), not refused
    nested = tmp_path / "no" / "dir.json"
    assert main(["conform", str(SAMPLE), "--json", str(nested)]) == 0
    assert json.loads(nested.read_text())["totals"] == doc["totals"]
    # a directory that cannot be made is still one line, exit 2
    assert main(["conform", str(SAMPLE), "--json", str(out / "x.json")]) == 2


def test_the_engine_finds_the_command_without_importing_the_model():
    import ast

    for name in ("cli_conform.py", "cli.py"):
        tree = ast.parse((Path(__file__).parent.parent / "checker" / name).read_text())
        imported = [getattr(n, "module", None) or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        assert not any("model" in m for m in imported), imported
    from eoscheck.checker.cli_conform import find_command

    command = find_command()
    assert command is not None and command[1].__module__ == "eoscheck.model.conformance.cli"


def _meta(state: str, epoch: int, partitions=(), **kw) -> dict:
    return {"exists": True, "producer_id": 10, "prev_producer_id": 10, "next_producer_id": -1, "producer_epoch": epoch,
            "last_producer_epoch": -1, "txn_timeout_ms": 1, "state": state, "partitions": list(partitions),
            "client_transaction_version": 0, "pending_state": None, "has_failed_epoch_fence": False, **kw}


INIT = {"api": "InitProducerId", "transactional_id": "known", "producer_id": -1, "producer_epoch": -1,
        "txn_timeout_ms": 1}

# hand-written in the vectors' format from TransactionCoordinatorTest / TransactionMetadataTest at 1eb7644
EXTRA = [
    ("not-coordinator", {"coordinator": {"get_transaction_state": "NOT_COORDINATOR"}}, INIT,
     {"error": "NOT_COORDINATOR", "producer_id": -1, "producer_epoch": -1}),
    ("verify-only", {"txn_metadata": _meta("Empty", 0, ["topic1-0"])},
     {"api": "AddPartitionsToTxn", "verify_only": True, "producer_id": 10, "producer_epoch": 0,
      "partitions": ["topic1-0", "topic2-0"]},
     {"per_partition": {"topic1-0": {"error": "NONE"}, "topic2-0": {"error": "TRANSACTION_ABORTABLE"}}}),
    ("fence-exhausted", {"txn_metadata": _meta("Ongoing", 32766, ["topic1-0"])}, INIT,
     {"error": "CONCURRENT_TRANSACTIONS", "producer_id": -1, "producer_epoch": -1,
      "state_after": {"producer_epoch": 32767, "state": "PrepareAbort", "last_producer_epoch": -1}}),
    ("timeout-append-fails", {"txn_metadata": _meta("Ongoing", 1, ["topic1-0"])},
     {"event": "abortTimedOutTransactions", "txn_log_append_result": "NOT_ENOUGH_REPLICAS"},
     {"state_after": {"producer_epoch": 2, "state": "Ongoing", "has_failed_epoch_fence": True}}),
    ("fence-at-max", {"txn_metadata": _meta("Ongoing", 32767)}, {"api": "TransactionMetadata.prepareFenceProducerEpoch"},
     {"error": "EXCEPTION", "exception": "IllegalStateException"}),
    ("rotate-ongoing", {"txn_metadata": _meta("Ongoing", 5)},
     {"api": "TransactionMetadata.prepareProducerIdRotation", "new_producer_id": 11, "record_last_epoch": True},
     {"error": "EXCEPTION", "exception": "IllegalStateException"}),
    ("rotate", {"txn_metadata": _meta("CompleteCommit", 32766)},
     {"api": "TransactionMetadata.prepareProducerIdRotation", "new_producer_id": 11, "record_last_epoch": True},
     {"result": "TRANSITION", "after_complete": {"producer_id": 11, "prev_producer_id": 10, "producer_epoch": 0,
                                                 "last_producer_epoch": 32766}}),
    ("tv2-overflow-retry", {"txn_metadata": _meta("CompleteCommit", 0, producer_id=11, client_transaction_version=2)},
     {"api": "EndTxn", "transactional_id": "known", "producer_id": 10, "producer_epoch": 32766, "result": "COMMIT",
      "client_transaction_version": 2},
     {"error": "NONE", "producer_id": 11, "producer_epoch": 0}),
    ("replicated-marker", {"producers": {"1": {"epoch": 3, "last_seq": 4, "coordinator_epoch": 5}}},
     {"api": "WriteTxnMarker", "origin": "REPLICATION", "producer_id": 1, "producer_epoch": 2, "result": "ABORT",
      "offset": 9, "coordinator_epoch": 1}, {"result": "APPENDED"}),
]


@pytest.mark.parametrize("vid, init, inp, expected", EXTRA, ids=[e[0] for e in EXTRA])
def test_more_coordinator_and_leader_inputs_agree(vid, init, inp, expected):
    data = {"source": {"commit": "1eb7644349cb07139d6a3c1ad1986979647cac99"},
            "vectors": [{"id": vid, "mechanism": "produce_validation", "initial_state": init, "steps": [{"input": inp, "expected": expected}]}]}
    rep = harness.run_file(parse_vectors(data)).vectors[0]
    assert rep.outcome == harness.AGREE, rep
    assert sum(s.compared for s in rep.steps) >= 1


def _end(epoch: int, tv: int, pid: int = 10, result: str = "COMMIT", **kw) -> dict:
    return {"api": "EndTxn", "transactional_id": "known", "producer_id": pid, "producer_epoch": epoch,
            "result": result, "client_transaction_version": tv, **kw}


def _batch(seq: int, last: int | None = None, epoch: int = 0, txn: bool = False, **kw) -> dict:
    return {"api": "ProduceBatch", "origin": "CLIENT", "producer_id": 1, "producer_epoch": epoch, "base_sequence": seq,
            "last_sequence": seq if last is None else last, "first_offset": None, "last_offset": None,
            "is_transactional": txn, **kw}


# multi-step vectors written from TransactionCoordinatorTest / ProducerStateManagerTest / UnifiedLogTest at 1eb7644
EXTRA_STEPS = [
    ("tv-downgraded", {"txn_metadata": _meta("PrepareCommit", 2, client_transaction_version=2)}, [
        (_end(1, 0), {"error": "CONCURRENT_TRANSACTIONS", "producer_id": -1, "producer_epoch": -1}),
        (_end(1, 0, precondition="metadata now CompleteCommit, epoch 2, tv 2"),
         {"error": "NONE", "producer_id": 10, "producer_epoch": 2})]),
    ("tv2-not-a-retry", {"txn_metadata": _meta("PrepareCommit", 1, client_transaction_version=2)}, [
        (_end(1, 2), {"error": "PRODUCER_FENCED"}),
        (_end(1, 2, precondition="metadata now CompleteCommit, epoch 1, tv 2"), {"error": "PRODUCER_FENCED"})]),
    ("tv2-overflow", {"txn_metadata": _meta("PrepareCommit", 32767, next_producer_id=11, last_producer_epoch=32766,
                                            client_transaction_version=2)}, [
        (_end(32766, 2), {"error": "CONCURRENT_TRANSACTIONS"}),
        (_end(32766, 2, precondition="metadata now CompleteCommit"), {"error": "NONE", "producer_id": 11,
                                                                      "producer_epoch": 0})]),
    ("txn-then-plain", {"producers": {}}, [
        (_batch(0, txn=True), {"result": "APPENDED"}),
        (_batch(1), {"result": "REJECTED", "error": "INVALID_TXN_STATE"})]),
    ("marker-fencing", {"producers": {}}, [
        (_batch(0, epoch=2, txn=True), {"result": "APPENDED"}),
        ({"api": "WriteTxnMarker", "origin": "COORDINATOR", "producer_id": 1, "producer_epoch": 1, "result": "COMMIT",
          "offset": 1, "coordinator_epoch": 0}, {"result": "REJECTED", "error": "INVALID_PRODUCER_EPOCH"}),
        ({"api": "WriteTxnMarker", "origin": "COORDINATOR", "producer_id": 1, "producer_epoch": 2, "result": "COMMIT",
          "offset": 1, "coordinator_epoch": 3}, {"result": "APPENDED"}),
        ({"api": "WriteTxnMarker", "origin": "COORDINATOR", "producer_id": 1, "producer_epoch": 2, "result": "ABORT",
          "offset": 2, "coordinator_epoch": 2}, {"result": "REJECTED", "error": "TRANSACTION_COORDINATOR_FENCED"})]),
    ("fence-after-epochs-exhausted", {"txn_metadata": _meta("Ongoing", 32766, producer_id=23423, prev_producer_id=23423)}, [
        ({"api": "TransactionMetadata.prepareFenceProducerEpoch"},
         {"transit": {"producer_epoch": 32767, "last_producer_epoch": -1}, "state_after": {"pending_state": "PrepareEpochFence"}}),
        ({"api": "TransactionMetadata.prepareAbortOrCommit", "new_state": "PrepareAbort", "client_transaction_version": 0},
         {"error": "EXCEPTION", "exception": "IllegalStateException"}),
        ({"event": "txnMetadata.pendingState = None"}, {}),
        ({"api": "TransactionMetadata.prepareAbortOrCommit", "new_state": "PrepareAbort", "client_transaction_version": 0},
         {"after_complete": {"producer_id": 23423, "state": "PrepareAbort"}})]),
    ("epoch-bump-on-end-txn-overflow", {"txn_metadata": _meta("Ongoing", 32766, producer_id=23423, prev_producer_id=23423)}, [
        ({"api": "TransactionMetadata.prepareAbortOrCommit", "new_state": "PrepareCommit", "client_transaction_version": 2,
          "next_producer_id": 9893},
         {"after_complete": {"producer_id": 23423, "producer_epoch": 32767, "client_transaction_version": 2}}),
        ({"api": "TransactionMetadata.prepareComplete"},
         {"after_complete": {"producer_id": 9893, "producer_epoch": 0, "prev_producer_id": 23423,
                             "state": "CompleteCommit"}})]),
    ("open-txn-never-expires", {"producer_id_expiration_ms": 100, "producers": {}, "now_ms": "T"}, [
        (_batch(0, txn=True, timestamp="T"), {"result": "APPENDED"}),
        ({"event": "advance_time", "ms": 1000}, {}),
        ({"event": "removeExpiredProducers"}, {"active_producers": 1})]),
]


@pytest.mark.parametrize("vid, init, steps", EXTRA_STEPS, ids=[e[0] for e in EXTRA_STEPS])
def test_more_multi_step_vectors_agree(vid, init, steps):
    data = {"source": {"commit": "1eb7644349cb07139d6a3c1ad1986979647cac99"},
            "vectors": [{"id": vid, "mechanism": "produce_validation", "component": "UnifiedLog", "initial_state": init,
                         "steps": [{"input": i, "expected": e} for i, e in steps]}]}
    rep = harness.run_file(parse_vectors(data)).vectors[0]
    assert rep.outcome == harness.AGREE, rep


def test_the_consumer_retries_an_unstable_offset_fetch():
    # ConsumerCoordinatorTest.testRefreshOffsetWithPendingTransactions, written as a vector
    steps = [({"event": "initWithCommittedOffsetsIfNeeded", "response": "OffsetFetch -> UNSTABLE_OFFSET_COMMIT",
               "partition": "t1p"}, {"initializing_partitions": ["t1p"], "retriable": True}),
             ({"event": "initWithCommittedOffsetsIfNeeded", "response": "OffsetFetch -> NONE offset 100",
               "partition": "t1p"}, {"initializing_partitions": [], "has_all_fetch_positions": True, "position": 100})]
    data = {"vectors": [{"id": "c", "mechanism": "produce_validation", "initial_state": {},
                         "steps": [{"input": i, "expected": e} for i, e in steps]}]}
    rep = harness.run_file(parse_vectors(data)).vectors[0]
    assert rep.outcome == harness.AGREE, rep


def test_unreadable_state_or_input_is_not_expressible_and_a_raising_rule_disagrees(monkeypatch):
    base = {"vectors": [
        {"id": "bad-state", "mechanism": "produce_validation", "initial_state": {"producers": {"1": "not an object"}},
         "steps": [{"input": _batch(0), "expected": {"result": "APPENDED"}}]},
        {"id": "bad-input", "mechanism": "produce_validation", "initial_state": {},
         "steps": [{"input": {"event": "prepareTxnOffsetCommit", "producer_id": 1}, "expected": {}}]},
    ]}
    reps = harness.run_file(parse_vectors(base)).vectors
    assert [r.outcome for r in reps] == [harness.NOT_EXPRESSIBLE] * 2
    assert "initial_state not readable" in reps[0].reason and "input not readable" in reps[1].reason

    from eoscheck.model.api import leader

    def boom(*a, **k):
        raise ValueError("marker answer not modelled")

    monkeypatch.setattr(leader, "validate_data_batch", boom)
    rep = harness.run_file(parse_vectors({"vectors": [base["vectors"][0] | {"initial_state": {}}]})).vectors[0]
    assert rep.outcome == harness.DISAGREE and "rule raised" in rep.differences[0][1].field


def test_symbolic_expected_values_are_evaluated():
    init = {"txn_metadata": _meta("CompleteCommit", "E")}
    step = {"input": _end(4, 0, metadata_epoch=4), "expected": {"error": "NONE", "producer_epoch": "E"}}
    data = {"vectors": [{"id": "s", "mechanism": "produce_validation", "initial_state": init, "steps": [step]}]}
    assert harness.run_file(parse_vectors(data)).vectors[0].outcome == harness.AGREE
    step["expected"]["producer_epoch"] = "E + 1"
    rep = harness.run_file(parse_vectors(data)).vectors[0]
    assert rep.outcome == harness.DISAGREE and rep.differences[0][1].model == 4


def test_moving_the_log_start_offset_keeps_producer_state_since_kafka_7190(tmp_path):
    steps = [{"input": _batch(0, first_offset=0), "expected": {"result": "APPENDED"}},
             {"input": {"event": "deleteRecords", "log_start_offset": 5}, "expected": {"active_producers": 1}},
             {"input": _batch(1), "expected": {"result": "APPENDED"}}]
    data = {"source": {"commit": "1eb7644349cb07139d6a3c1ad1986979647cac99"},
            "vectors": [{"id": "lso", "mechanism": "produce_validation", "initial_state": {"producers": {}}, "steps": steps}]}
    assert harness.run_file(parse_vectors(data)).vectors[0].outcome == harness.AGREE
    # before KAFKA-7190 (2.4.0: the kafka-2.0.1-2.3 profile, aliases kafka-2.0-2.3 and kafka-2.0-2.4) the producer is evicted, and
    # its next batch gets UNKNOWN_PRODUCER_ID
    rep = harness.run_file(parse_vectors(data), "kafka-2.0-2.4").vectors[0]
    assert rep.outcome == harness.DISAGREE
    assert {d.field: d.model for _, d in rep.differences} == {"active_producers": 0, "result": "REJECTED"}


def test_marker_answers_and_append_errors():
    init = {"txn_metadata": _meta("PrepareCommit", 1, ["topic1-0", "topic2-0"])}
    steps = [({"event": "WriteTxnMarkers response", "partition": "topic1-0", "error": "NOT_ENOUGH_REPLICAS"},
              {"action": "retry", "partitions_remaining": ["topic1-0", "topic2-0"]}),
             ({"event": "WriteTxnMarkers response", "partition": "topic1-0", "error": "NONE"},
              {"partitions_remaining": ["topic2-0"], "state_after": {"state": "PrepareCommit"}}),
             ({"event": "WriteTxnMarkers response", "partition": "topic2-0", "error": "UNSUPPORTED_FOR_MESSAGE_FORMAT"},
              {"txn_log_append": {"state": "CompleteCommit"}}),
             ({"api": "TransactionStateManager.appendTransactionToLog", "append_error": "NOT_ENOUGH_REPLICAS"},
              {"error": "COORDINATOR_NOT_AVAILABLE"}),
             ({"api": "TransactionStateManager.appendTransactionToLog", "append_error": "KAFKA_STORAGE_ERROR"},
              {"error": "NOT_COORDINATOR"})]
    data = {"vectors": [{"id": "mk", "mechanism": "produce_validation", "initial_state": init,
                         "steps": [{"input": i, "expected": e} for i, e in steps]}]}
    assert harness.run_file(parse_vectors(data)).vectors[0].outcome == harness.AGREE
    data["vectors"][0]["steps"] = [{"input": {"event": "WriteTxnMarkers response", "partition": "topic1-0",
                                              "error": "CORRUPT_MESSAGE"},
                                    "expected": {"error": "EXCEPTION", "exception": "IllegalStateException"}}]
    assert harness.run_file(parse_vectors(data)).vectors[0].outcome == harness.AGREE


def test_the_record_a_request_tries_to_write_is_reported_even_when_the_append_fails():
    data = one(raw(), "INIT-11")
    for st in data["vectors"][0]["steps"]:  # every attempt writes PrepareAbort at epoch 2
        st["expected"]["txn_log_append"] = {"state": "PrepareAbort", "producer_epoch": 2}
    assert harness.run_file(parse_vectors(data)).vectors[0].outcome == harness.AGREE
    # an InitProducerId retry that does not bump still writes an Empty record (the same epoch)
    init = {"txn_metadata": _meta("Empty", 5, last_producer_epoch=4)}
    step = {"input": {**INIT, "producer_id": 10, "producer_epoch": 4},
            "expected": {"error": "NONE", "producer_epoch": 5, "txn_log_append": {"state": "Empty", "producer_epoch": 5}}}
    data = {"vectors": [{"id": "r", "mechanism": "produce_validation", "initial_state": init, "steps": [step]}]}
    assert harness.run_file(parse_vectors(data)).vectors[0].outcome == harness.AGREE


@pytest.mark.parametrize("batches, offsets", [("seq 0..5, one record each", "0..5"), ("seq 0..5, 2 records each", "0..5"),
                                              ([{"base_sequence": 0, "last_sequence": 2}, {"base_sequence": 3}], "0..3")])
def test_several_batches_in_one_step(batches, offsets):
    steps = [{"input": {"api": "ProduceBatch", "producer_id": 1, "producer_epoch": 0, "batches": batches},
              "expected": {"result": "APPENDED", "offsets": offsets}},
             {"input": _batch(0, 2 if isinstance(batches, list) else 1 if "2 records" in batches else 0),
              "expected": {"result": "DUPLICATE" if not isinstance(batches, str) or "2 records" in batches else "REJECTED"}}]
    data = {"vectors": [{"id": "b", "mechanism": "produce_validation", "component": "UnifiedLog", "initial_state": {"producers": {}},
                         "steps": steps}]}
    rep = harness.run_file(parse_vectors(data)).vectors[0]
    assert rep.outcome == harness.AGREE, rep


def test_group_preconditions_in_free_text():
    base = {"group": {"id": "foo", "type": "classic", "state": "Stable", "generation": 1, "members": ["member"]}}
    commit = {"api": "TxnOffsetCommit", "group_id": "foo", "producer_id": None, "producer_epoch": None,
              "member_id": "member", "group_instance_id": None, "generation_id": 3, "offsets": {"bar-0": 1}}
    cases = [("group in CompletingRebalance, generation 3", "NONE"), ("separate test: dead group", "COORDINATOR_NOT_AVAILABLE"),
             ("the moon is full", None)]
    for text, error in cases:
        data = {"vectors": [{"id": "g", "mechanism": "produce_validation", "initial_state": base,
                             "steps": [{"input": {**commit, "precondition": text}, "expected": {"error": error or "NONE"}}]}]}
        rep = harness.run_file(parse_vectors(data)).vectors[0]
        assert rep.outcome == (harness.AGREE if error else harness.NOT_EXPRESSIBLE), (text, rep)


def test_every_mechanism_of_the_sample_is_known() -> None:
    """The sample names the mechanisms of Kafka's whole vector set (its top-level map): each is one the runner takes."""
    sample = json.loads(SAMPLE.read_text())
    assert set(sample["mechanisms"]) <= set(KNOWN_MECHANISMS)
    assert {v.mechanism for v in parse_vectors(sample).vectors} == set(sample["mechanisms"])


def test_an_expected_empty_object_asserts_emptiness() -> None:
    from eoscheck.model.conformance.compare import compare

    left_over = compare({"pending_txn": {}}, {"pending_txn": {"tp0": 5}})
    assert [d.field for d in left_over.differences] == ["pending_txn"]
    assert compare({"pending_txn": {}}, {"pending_txn": {}}) == (1, (), {})
    # a non-empty expected object stays partial: a key the model lacks is unchecked, not a difference
    partial = compare({"committed": {"tp0": 5, "tp1": 6}}, {"committed": {"tp0": 5}})
    assert partial.differences == () and "committed.tp1" in partial.unchecked
