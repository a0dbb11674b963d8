"""kafka.eos: the rules' wiring to the rooms, budgets that remove rules, memoisation, and the
cross-mechanism spec pairs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eoscheck.checker.explore import explore
from eoscheck.checker.explore.options import ExploreOptions
from eoscheck.checker.result import Result
from eoscheck.checker.spec import build_machine, load_spec, spec_to_options
from eoscheck.model import protocol as P
from eoscheck.model.errors import Errors
from eoscheck.model.machines import eos_endtxn
from eoscheck.model.machines.eos import EosMachine, machine
from eoscheck.model.machines.eos_model import BOUNDS
from eoscheck.model.partition.txn_produce import (
    handle_txn_produce,
    producer_state_lso,
    write_marker,
)
from eoscheck.model.producer import transactional as tx
from eoscheck.model.producer.client import ACKED, FAILED, RAISED_OUT_OF_ORDER, RETRIED
from eoscheck.model.producer.config import ClientConfig
from eoscheck.model.state import (
    INFLIGHT,
    QUEUED,
    RETRY,
    TXN_ABORTABLE,
    TXN_BUMP,
    TXN_FATAL,
    TXN_FENCED,
    TXN_INIT,
    TXN_READY,
    ProduceResponse,
    TxnMetadata,
    TxnPartitionState,
    TxnProducer,
)
from eoscheck.model.transactions.add_partitions import verify_partitions
from eoscheck.model.transactions.codes import TxnResult, TxnState
from eoscheck.model.transactions.end_txn import answer_after_end_txn, end_txn_tv2
from eoscheck.model.transactions.log import EntryKind
from eoscheck.model.transactions.markers import (
    TxnMarker,
    complete_if_done,
    markers_to_send,
)
from reachable_states import reachable

REPO = Path(__file__).resolve().parents[1]
EMPTY = TxnPartitionState((), 0, ())
PRODUCE = {"max_seq": 2**31 - 1, "cache_size": 5, "unknown_producer": "accept", "old_duplicate_error": False}
#: one partition and every budget: small (about 14k states) but every rule fires
EVERYTHING = {"partitions": 1, "batches": 2, "max_in_flight": 2, "lost_responses": 1, "produce_timeouts": 1,
              "txn_timeouts": 1, "delete_records": 1, "max_ticks": 1, "coordinator_failovers": 1}


def cfg(version: str = "kip360") -> ClientConfig:
    return ClientConfig(version=version, epoch_bump="resequence_inflight", max_in_flight=2, delivery_timeout=1 << 30,
                        max_seq=2**31 - 1, max_epoch=32767)


def run(m: EosMachine, **options: object) -> Result:
    return explore(m, ExploreOptions(**options))


# --- the leader's rules (partition/txn_produce.py) ---------------------------------------------------

def produce(leader: TxnPartitionState, *, epoch: int = 0, seq: int = 0, value: int = 7, verification: int = 0):
    return handle_txn_produce(leader, producer_id=3, epoch=epoch, seq=seq, value=value, timestamp=0,
                              verification_error=verification, **PRODUCE)


def test_no_aborted_read_ignores_open_batches_below_the_log_start_offset() -> None:
    from eoscheck.model.properties import eos_no_aborted_read
    leader = produce(EMPTY).partition
    forgotten = leader._replace(producers=())  # the producer state lost with its open transaction
    assert not eos_no_aborted_read((forgotten,))
    assert eos_no_aborted_read((forgotten._replace(log_start_offset=1),))
    assert eos_no_aborted_read((leader,))


def test_a_first_batch_opens_the_producers_transaction_and_holds_back_the_lso() -> None:
    out = produce(EMPTY)
    assert out.error == Errors.NONE and out.offset == 0
    assert out.partition.log[0].kind == EntryKind.TXN_DATA
    assert out.partition.producers[0].current_txn_first_offset == 0
    assert producer_state_lso(out.partition) == 0


def test_a_retried_batch_is_answered_from_the_cache_without_a_second_append() -> None:
    leader = produce(produce(EMPTY).partition, seq=1, value=8).partition
    again = produce(leader, seq=0)
    assert (again.error, again.offset, again.partition) == (Errors.NONE, 0, leader)


def test_sequence_gap_and_old_epoch_are_refused() -> None:
    leader = produce(EMPTY, epoch=2).partition
    assert produce(leader, epoch=2, seq=2).error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert produce(leader, epoch=1, seq=1).error == Errors.INVALID_PRODUCER_EPOCH


def test_a_failed_verification_refuses_before_the_log_is_looked_at() -> None:
    out = produce(EMPTY, verification=Errors.INVALID_TXN_STATE)
    assert (out.error, out.partition) == (Errors.INVALID_TXN_STATE, EMPTY)


def test_markers_close_the_transaction_and_fence_older_epochs() -> None:
    leader = produce(EMPTY).partition
    error, done = write_marker(leader, TxnMarker(0, 3, 1, int(TxnResult.ABORT), 0), timestamp=0,
                               check_coordinator_epoch=True)
    assert error == Errors.NONE and done.log[-1].kind == EntryKind.ABORT
    assert producer_state_lso(done) == len(done.log) and done.producers[0].epoch == 1
    error, same = write_marker(done, TxnMarker(0, 3, 0, int(TxnResult.COMMIT), 0), timestamp=0,
                               check_coordinator_epoch=True)
    assert (error, same) == (Errors.INVALID_PRODUCER_EPOCH, done)
    assert produce(done, epoch=0, seq=1).error == Errors.INVALID_PRODUCER_EPOCH


def test_a_marker_for_a_forgotten_producer_recreates_its_entry() -> None:
    error, leader = write_marker(EMPTY, TxnMarker(0, 3, 4, int(TxnResult.COMMIT), 2), timestamp=5,
                                 check_coordinator_epoch=True)
    assert error == Errors.NONE and leader.producers[0][:2] == (3, 4)


def test_coordinator_verification_needs_the_partition_in_the_ongoing_transaction() -> None:
    meta = TxnMetadata(True, 3, 3, 1, -1, int(TxnState.ONGOING), False, -1, (0,))
    # kafka.eos's leaders call the harness's coordinator rule for one partition
    assert verify_partitions(meta, 3, 1, (0, 1)) == ((0, Errors.NONE), (1, Errors.TRANSACTION_ABORTABLE))
    assert verify_partitions(meta, 3, 0, (0,)) == ((0, Errors.PRODUCER_FENCED),)
    done = meta._replace(state=int(TxnState.COMPLETE_ABORT), partitions=())
    assert verify_partitions(done, 3, 1, (0,)) == ((0, Errors.TRANSACTION_ABORTABLE),)
    prepare = meta._replace(state=int(TxnState.PREPARE_COMMIT))
    assert verify_partitions(prepare, 3, 1, (0,)) == ((0, Errors.CONCURRENT_TRANSACTIONS),)


def test_tv2_epoch_overflow_rotates_to_the_next_producer_id_after_the_markers() -> None:
    ongoing = TxnMetadata(True, 3, 3, 2, 1, int(TxnState.ONGOING), False, -1, (0,))
    out = end_txn_tv2(ongoing, 3, 2, int(TxnResult.COMMIT), new_producer_id=9, max_epoch=3)
    assert out.error == Errors.NONE and (out.meta.epoch, out.meta.next_producer_id) == (3, 9)
    assert answer_after_end_txn(out.meta) == (9, 0)
    assert [(m.producer_id, m.producer_epoch) for m in markers_to_send(out.meta, 0)] == [(3, 3)]
    assert [(m.producer_id, m.producer_epoch) for m in markers_to_send(
        out.meta, 0, rotation_markers_new_producer_id=True)] == [(9, 0)]
    done, wrote = complete_if_done(out.meta._replace(partitions=()))
    assert wrote and (done.producer_id, done.epoch, done.prev_producer_id, done.next_producer_id) == (9, 0, 3, -1)
    plain = end_txn_tv2(ongoing._replace(epoch=1), 3, 1, int(TxnResult.COMMIT), new_producer_id=9, max_epoch=3)
    assert answer_after_end_txn(plain.meta) == (3, 2) and plain.meta.next_producer_id == -1


# --- the client's rules (producer/transactional.py) -------------------------------------------------

def in_flight_producer(version: str = "kip360"):
    p = tx.begin_transaction(tx.with_producer_id(tx.new_producer(1), 3, 0)._replace(phase=TXN_READY), 2, 0)
    p = p._replace(added=1)
    p, _ = tx.drain(p, 0, 0, 0, cfg(version))
    return p


def answer(error: int, log_start: int = -1) -> ProduceResponse:
    return ProduceResponse(0, 0, 0, int(error), -1, log_start)


def test_ack_and_retriable_errors_go_through_the_idempotent_client() -> None:
    p = in_flight_producer()
    acked, outcome = tx.on_produce_response(p, 0, ProduceResponse(0, 0, 0, 0, 5, 0), 0, cfg())
    assert outcome == ACKED and acked.parts[0].last_acked_offset == 5
    _, outcome = tx.on_produce_response(p, 0, answer(Errors.NOT_ENOUGH_REPLICAS), 0, cfg())
    assert outcome == RETRIED


def test_unknown_producer_after_retention_restarts_sequences_under_the_same_epoch() -> None:
    p, outcome = tx.on_produce_response(in_flight_producer(), 0, answer(Errors.UNKNOWN_PRODUCER_ID, 1), 0, cfg())
    assert outcome == RETRIED and p.parts[0].batches[0].sequence_reset and p.epoch == 0


def test_sequence_errors_are_abortable_with_a_bump_for_kip360_and_fatal_before() -> None:
    p, outcome = tx.on_produce_response(in_flight_producer(), 0, answer(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), 0, cfg())
    assert (outcome, p.phase, p.bump_after_abort) == (FAILED, TXN_ABORTABLE, True)
    old = in_flight_producer("pre-kip360")
    p, outcome = tx.on_produce_response(old, 0, answer(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), 0, cfg("pre-kip360"))
    assert (outcome, p.phase) == (RAISED_OUT_OF_ORDER, TXN_FATAL)
    p, _ = tx.on_produce_response(in_flight_producer(), 0, answer(Errors.INVALID_PRODUCER_EPOCH), 0, cfg())
    assert p.phase == TXN_FENCED and p.fatal_error == Errors.INVALID_PRODUCER_EPOCH


def test_invalid_producer_epoch_is_abortable_with_a_bump_for_the_kip588_client() -> None:
    p, outcome = tx.on_produce_response(in_flight_producer(), 0, answer(Errors.INVALID_PRODUCER_EPOCH), 0, cfg(),
                                        ipe_abortable=True)
    assert (outcome, p.phase, p.bump_after_abort, p.fatal_error) == (FAILED, TXN_ABORTABLE, True, 0)


def test_a_batch_given_up_in_flight_fails_the_transaction_and_leaves_its_request_behind() -> None:
    p = tx.give_up_in_flight(in_flight_producer(), 0, cfg())
    assert p is not None and p.phase == TXN_ABORTABLE and p.bump_after_abort
    assert not any(b.status == INFLIGHT for b in p.parts[0].batches) and p.parts[0].unresolved == 1
    assert tx.ready_to_abort(p)
    aborted = tx.abort_undrained_batches(p)
    assert not aborted.parts[0].batches


def _first_batch_retried_second_in_flight() -> TxnProducer:
    """A transactional producer that drained two batches of partition 0; the first was answered
    NOT_ENOUGH_REPLICAS and waits for a retry, the second is still in flight."""
    p = tx.begin_transaction(tx.with_producer_id(tx.new_producer(1), 3, 0)._replace(phase=TXN_READY), 3, 0)
    p = p._replace(added=1)
    for _ in range(2):
        p, _ = tx.drain(p, 0, 0, 0, cfg())
    p, outcome = tx.on_produce_response(p, 0, ProduceResponse(0, 0, 0, int(Errors.NOT_ENOUGH_REPLICAS), -1, -1), 0,
                                        cfg())
    assert outcome == RETRIED
    return p


def test_an_abort_resends_the_retried_batch_and_fails_only_the_never_sent_one() -> None:
    # TransactionManagerTest.testRecoveryFromAbortableErrorProduceRequestInRetry / testAbortResendsProduceRequestIfRetried
    # (1eb7644, 4.2.0-rc1): abortUndrainedBatches keeps a batch that has a sequence, the Sender resends it in
    # the abortable state, and EndTxn waits for its answer (nextRequest(hasIncompleteBatches))
    p = _first_batch_retried_second_in_flight()
    p, outcome = tx.on_produce_response(p, 0, ProduceResponse(0, 0, 1, int(Errors.INVALID_PRODUCER_EPOCH), -1, -1), 0,
                                        cfg(), ipe_abortable=True)
    assert (outcome, p.phase) == (FAILED, TXN_ABORTABLE)
    assert [(b.record, b.status) for b in p.parts[0].batches] == [(0, RETRY), (2, QUEUED)]
    assert tx.resends_retries(p) and not tx.ready_to_abort(p)
    # the old rule aborted the retried batch with the queued one and sent EndTxn at once
    assert tx.abort_undrained_batches(p).parts[0].batches == (p.parts[0].batches[0],)
    resent = tx.drain(p, 0, 0, 0, cfg())
    assert resent is not None and (resent[1].record, resent[1].seq) == (0, 0)
    p = resent[0]
    assert tx.drain(p, 0, 0, 0, cfg()) is None  # the never-sent batch 2 stays put
    p, outcome = tx.on_produce_response(p, 0, ProduceResponse(0, 0, 0, 0, 4, 0), 0, cfg())
    assert outcome == ACKED and tx.ready_to_abort(p) and not tx.resends_retries(p)
    aborted = tx.abort_undrained_batches(p)
    assert not aborted.parts[0].batches and aborted.parts[0].failed == 0b110 and aborted.parts[0].acked == 0b1


def test_an_abort_after_invalid_pid_mapping_does_not_wait_for_the_batches_in_flight_or_in_retry() -> None:
    # 2.5.0 .. 3.9.x (3.9.1 TransactionManager.java:335-357): the abort queues InitProducerId, no EndTxn, and
    # nextRequest(hasIncompleteBatches) holds back only an EndTxn (:779-789); 4.0.0's KAFKA-18019 made the error fatal
    p = _first_batch_retried_second_in_flight()
    p, outcome = tx.on_produce_response(p, 0, ProduceResponse(0, 0, 1, int(Errors.INVALID_PRODUCER_ID_MAPPING), -1,
                                                              -1), 0, cfg())
    assert (outcome, p.phase, p.bump_after_abort) == (FAILED, TXN_ABORTABLE, tx.SKIP_END_TXN)
    assert tx.skips_end_txn(p) and tx.ready_to_abort(p) and eos_endtxn.end_request(p, False) is None
    # the same batches after any other abortable error: EndTxn waits for the retried batch 0
    other = p._replace(bump_after_abort=True)
    assert not tx.skips_end_txn(other) and not tx.ready_to_abort(other)
    # abortUndrainedBatches fails the never-sent batch 2 only; batch 0 keeps its producer id, epoch and sequence
    aborted = tx.abort_undrained_batches(p)
    assert [(b.record, b.status, b.producer_id, b.epoch, b.seq) for b in aborted.parts[0].batches] == [(0, RETRY, 3, 0, 0)]
    bumping = tx.finish_transaction(aborted, False, p.epoch, bump_after_abort=True, cfg=cfg())
    assert bumping.phase == TXN_BUMP and bumping.parts[0].batches == aborted.parts[0].batches
    ready = tx.on_init_producer_id(bumping, 0, 3, 1)
    assert ready is not None and ready.parts[0].next_seq == 0 and ready.parts[0].batches == aborted.parts[0].batches
    # batch 0 resent later and failing: ABORTING_TRANSACTION ignores it, READY cannot take it; the phase stays
    for before in (bumping, ready):
        sent = before._replace(parts=(before.parts[0]._replace(batches=(before.parts[0].batches[0]._replace(
            status=INFLIGHT),)),))
        after, outcome = tx.on_produce_response(sent, 0, ProduceResponse(0, 0, 0, int(Errors.INVALID_PRODUCER_EPOCH), -1,
                                                                         -1), 0, cfg(), ipe_abortable=True)
        assert (outcome, after.phase, after.bump_after_abort) == (FAILED, before.phase, before.bump_after_abort)
        assert not after.parts[0].batches and after.parts[0].failed & 1


def test_a_restarted_instance_keeps_numbering_and_leaves_its_requests_unread() -> None:
    old = in_flight_producer()
    new = tx.restart(old)
    assert (new.phase, new.producer_id, new.txn, new.aborted) == (TXN_INIT, -1, 1, 1)
    assert new.parts[0].sent == old.parts[0].sent and not new.parts[0].batches
    assert new.parts[0].connection == old.parts[0].connection + 1
    assert new.parts[0].failed == 0b11  # the in-flight and the queued record failed with the old instance


def test_zombie_rules_fire_with_a_restart() -> None:
    m = machine("kafka-3.0-3.5", restarts=1, input_records=1, transactions=2)
    result = run(m, properties=(), check_deadlock=False)
    assert all(result.stats.coverage[a].generated for a in ("Restart", "ZombieEndTxn", "ZombieTxnOffsetCommit"))


def test_a_tv2_answer_restarts_sequences_under_the_bumped_epoch() -> None:
    p = tx.finish_transaction(in_flight_producer()._replace(parts=(tx.new_producer(1).parts[0]._replace(
        producer_id=3, epoch=0, next_seq=4, last_acked_seq=3),)), True, 1, bump_after_abort=False, cfg=cfg())
    assert (p.epoch, p.parts[0].epoch, p.parts[0].next_seq, p.txn, p.committed) == (1, 1, 0, 1, 1)


# --- the machine ------------------------------------------------------------------------------------

def test_every_declared_rule_fires() -> None:
    m = machine("kafka-3.0-3.5", **EVERYTHING)
    result = run(m, properties=(), check_deadlock=False)
    assert result.stats.distinct > 1000
    never = [a for a in m.actions if not result.stats.coverage[a].generated]
    assert not never


@pytest.mark.parametrize(("budget", "rule"), [("lost_responses", "LoseResponse"),
                                              ("produce_timeouts", "DeliveryTimeout"),
                                              ("txn_timeouts", "AbortTimedOutTransaction"),
                                              ("delete_records", "DeleteRecords"),
                                              ("coordinator_failovers", "TxnCoordinatorFailover"),
                                              ("restarts", "Restart")])
def test_a_zero_budget_removes_its_rule(budget: str, rule: str) -> None:
    assert rule not in machine("kafka-3.0-3.5").actions
    assert rule in machine("kafka-3.0-3.5", **{budget: 1}).actions


def test_rules_that_need_a_fault_or_the_clock_are_gone_without_it() -> None:
    m = machine("kafka-3.0-3.5", produce_timeouts=1)
    assert not {"RequestTimeout", "ExpireProducerIds", "Tick"} & set(m.actions)
    result = run(m, properties=(), check_deadlock=False)
    assert not {"RequestTimeout", "ExpireProducerIds", "Tick"} & set(result.stats.coverage)
    assert {"RequestTimeout", "ExpireProducerIds", "Tick"} <= set(machine("kafka-3.0-3.5", lost_responses=1,
                                                                          max_ticks=1).actions)


def test_the_fault_free_spec_stays_small() -> None:
    result = run(machine("kafka-3.0-3.5"))
    assert not result.violations and result.stats.distinct < 100


@pytest.mark.parametrize("variant", ["kafka-0.11.0.0", "kafka-2.4", "kafka-4.0"])
def test_memoised_and_recomputed_rules_explore_the_same_graph(variant: str) -> None:
    bounds = {n: b.default for n, b in BOUNDS.items()}
    bounds.update(partitions=2, lost_responses=1, txn_timeouts=1, delete_records=1)
    fast = run(EosMachine(P.VARIANTS[variant].protocol, bounds), stop_at_first=False)
    slow = run(EosMachine(P.VARIANTS[variant].protocol, bounds, memoize=False), stop_at_first=False)
    assert (fast.stats.distinct, fast.stats.generated, fast.stats.depth) == (
        slow.stats.distinct, slow.stats.generated, slow.stats.depth)
    assert sorted(v.property for v in fast.violations) == sorted(v.property for v in slow.violations)


def test_fields_are_json_and_name_every_actor() -> None:
    m = machine("kafka-3.0-3.5", lost_responses=1)
    states = reachable(m, 300)
    for s in states:
        json.dumps(m.fields(s))
    names = m.fields(states[-1])
    assert {"producer[0].phase", "txn[0].state", "leader[1].log", "requests", "faults.lost_responses"} <= set(names)


PAIRS = [
    ("eos-late-batch-seq-kafka-3.0", "NoHangingTransaction", 9), ("eos-late-batch-seq-kafka-4.0", None, None),
    ("eos-expired-state-late-batch-kafka-3.0", "NoZombieWrite", 10),
    ("eos-expired-state-late-batch-kafka-3.6", None, None),
    ("eos-two-partitions-timeout-abort-kafka-0.11.0.0", "AtomicTransactions", 15),
    ("eos-two-partitions-timeout-abort-kafka-0.11.0.2", None, None),
    ("eos-deleted-state-late-batch-kafka-2.3", "NoZombieWrite", 9), ("eos-deleted-state-late-batch-kafka-2.4", None, None),
    ("eos-tv2-rotation-markers-new-producer-id", "NoHangingTransaction", 37),
    ("eos-tv2-rotation-in-flight-kafka-4.0", None, None),
    ("eos-stale-marker-two-partitions-no-coordinator-epoch-check", "AtomicTransactions", 25),
    ("eos-stale-marker-two-partitions-kafka-3.0", None, None),
    ("eos-ctp-timeout-abort-kafka-0.11.0.0", "ExactlyOnce", 19), ("eos-ctp-timeout-abort-kafka-0.11.0.2", None, None),
    ("eos-ctp-kafka-4.0", None, None),
    ("eos-zombie-instance-expired-state-kafka-3.0", "NoZombieWrite", 11),
    ("eos-zombie-instance-expired-state-kafka-3.6", None, None),
    ("eos-open-txn-state-deleted-kafka-0.11.0.2", "OutOfOrderOnlyOnLoss", 11),
    ("eos-open-txn-state-deleted-kafka-1.0.0", None, None),
]

CTP_RULES = {"OffsetFetch", "AddOffsetsToTxn", "TxnOffsetCommit", "WriteOffsetsMarker"}


def test_consume_transform_produce_rules_exist_only_with_input_records() -> None:
    assert not CTP_RULES & set(machine("kafka-3.0-3.5").actions)
    m = machine("kafka-3.0-3.5", input_records=2, transactions=2, txn_timeouts=1)
    result = run(m, check_deadlock=True)
    assert result.verdict == "holds"
    assert all(result.stats.coverage[a].generated for a in CTP_RULES)


def test_exactly_once_counts_outputs_against_the_committed_offset() -> None:
    m = machine("kafka-3.0-3.5", input_records=1, partitions=1)
    done = [s for s in reachable(m, 500) if m.is_terminal(s)]
    assert done
    view = m.view(done[0])
    assert view.group.offsets[0].offset == 1 and view.producer[0].inputs == (0,)
    check = m.properties()["ExactlyOnce"].check
    assert check(done[0])
    # the same final state with the committed offset rolled back: the output is no longer accounted for
    rolled = m.state(**{name: getattr(view, name) for name in ("now", "next_producer_id", "coordinator_epoch",
                                                               "producer", "txn", "txn_log", "leader",
                                                               "offsets_leader", "requests", "responses")},
                     group=view.group._replace(offsets=(view.group.offsets[0]._replace(offset=0),)))
    assert not check(rolled)


@pytest.mark.parametrize(("name", "prop", "length"), PAIRS)
def test_cross_mechanism_spec_pair(name: str, prop: str | None, length: int | None) -> None:
    spec = load_spec(REPO / "specs" / f"{name}.toml")
    result = explore(build_machine(spec), spec_to_options(spec))
    if prop is None:
        assert spec.expect.verdict == "holds" and result.verdict == "holds"
        return
    assert spec.expect.verdict == "violates" and spec.expect.property == prop
    assert [(v.property, len(v.trace)) for v in result.violations] == [(prop, length)]
    assert (REPO / "counterexamples" / f"{name}.{prop}.json").exists()
    assert (REPO / "counterexamples" / f"{name}.{prop}.itf.json").exists()
