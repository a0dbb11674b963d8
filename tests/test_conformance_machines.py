"""Conformance of the committed machines' fault and network modelling with Kafka (kafka-semantics.md
§2.5-2.6, §3.1, §7.1-7.2): what the network may do to requests and responses on one connection, and
the headline verdicts the reference predicts for producer-id expiry."""

from __future__ import annotations

from typing import Any

from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.model.errors import Errors
from eoscheck.model.registry import IDEMPOTENT_PRODUCE_MACHINE as IDEMPOTENT_PRODUCE
from eoscheck.model.state import INFLIGHT


def machine(variant: str = "kafka-shipped", **bounds: int) -> Any:
    switches = {k: v.default for k, v in IDEMPOTENT_PRODUCE.switches.items()}
    switches.update(IDEMPOTENT_PRODUCE.variants[variant].switches)
    b = {k: v.default for k, v in IDEMPOTENT_PRODUCE.bounds.items()}
    b.update(bounds)
    return IDEMPOTENT_PRODUCE.build(switches, b)


def step(m: Any, s: Any, name: str, **match: Any) -> Any:
    """The successor of ``s`` by the first step called ``name`` whose parameters match."""
    for st, nxt in m.successors(s):
        if st[0] != name:
            continue
        params = m.step_params(st)
        if all(params.get(k) == v for k, v in match.items()):
            return nxt
    raise AssertionError(f"no {name} {match} from this state")


def two_in_flight(m: Any) -> Any:
    s = next(iter(m.init_states()))
    s = step(m, s, "Send", client=0)
    s = step(m, s, "Send", client=0)
    s = step(m, s, "Drain", client=0, record=0)
    return step(m, s, "Drain", client=0, record=1)


def test_requests_of_one_connection_are_in_flight_in_send_order() -> None:
    m = machine(reorders=0)
    s = two_in_flight(m)
    assert [(r.record, r.seq, r.connection) for r in s.requests] == [(0, 0, 0), (1, 1, 0)]
    handled = [st for st, _ in m.successors(s) if st[0] == "HandleProduce"]
    assert [st[2] for st in handled] == [0]


def test_reorder_fault_never_reorders_one_connection() -> None:
    # A broker reads one request at a time from a connection and answers in order (the channel is
    # muted until the response is sent), so two requests on connection 0 are appended in send order;
    # a reorder can only interleave different connections (§7.1 relies on this for the 5-batch window).
    m = machine(transient_errors=1)
    s = two_in_flight(m)
    handled = {st[2] for st, _ in m.successors(s) if st[0] == "HandleProduce"}
    assert handled == {0}, "record 1 (seq 1) must not overtake record 0 on the same connection"


def test_transient_error_appends_nothing_and_lets_the_next_batch_be_first() -> None:
    # §2.2/§2.6: a retriable leader error (NOT_ENOUGH_REPLICAS) writes nothing; the client retries; the
    # batch behind it on the connection is handled next - for an unknown producer (2.5+) it is accepted
    # with sequence 1 as the producer's first write (KIP-360's "no validation of the first write")
    m = machine(transient_errors=1)
    s = two_in_flight(m)
    nxt = [t for st, t in m.successors(s) if st[0] == "HandleProduce" and st[2] == 0 and st[5] != 0]
    assert len(nxt) == 1
    s = nxt[0]
    assert s.partition.log == () and s.responses[0].error == Errors.NOT_ENOUGH_REPLICAS
    s = step(m, s, "HandleProduce", client=0, record=1)
    assert [(r.record, r.seq) for r in s.partition.log] == [(1, 1)]
    s = step(m, s, "HandleProduceResponse", client=0, record=0)
    assert s.clients[0].batches[0].status != INFLIGHT  # to be retried


def test_response_on_a_closed_connection_is_never_read() -> None:
    # Sender: after request.timeout.ms the connection is closed and its responses are never read;
    # the broker may still process a request it had read from it. Here record 1's first request
    # (connection 0) is processed after the client re-sent record 1 on connection 1.
    m = machine(lost_responses=1)
    s = two_in_flight(m)
    s = step(m, s, "HandleProduce", client=0, record=0)
    s = step(m, s, "LoseResponse", client=0, record=0)
    s = step(m, s, "RequestTimeout", client=0)
    s = step(m, s, "Drain", client=0, record=0)
    s = step(m, s, "HandleProduce", client=0, record=0)  # connections interleave: 1's retry before 0's request
    s = step(m, s, "HandleProduceResponse", client=0, record=0)
    s = step(m, s, "Drain", client=0, record=1)
    assert s.clients[0].connection == 1
    assert [(r.record, r.connection) for r in s.requests] == [(1, 0), (1, 1)]
    s = next(nxt for st, nxt in m.successors(s) if st[0] == "HandleProduce" and len(nxt.requests) == 1
             and nxt.requests[0].connection == 1)
    assert all(r.connection == s.clients[0].connection for r in s.responses), \
        "a response on the closed connection 0 is queued for the client"


def _verdict(m: Any, prop: str) -> str:
    r = explore(m, ExploreOptions(properties=(prop,), check_deadlock=False, max_states=200_000))
    return r.verdict


def test_kip854_expiry_shorter_than_delivery_timeout_duplicates() -> None:
    # §3.1/§7.2 and KIP-854: an expired producer is unknown, so a retry of an appended batch is accepted again
    m = machine(records=1, max_in_flight=1, delivery_timeout=5, producer_id_expiration=1, max_ticks=2)
    assert _verdict(m, "NoDuplicates") == "violated"


def test_expiry_longer_than_delivery_timeout_no_duplicates() -> None:
    m = machine(records=1, max_in_flight=1, delivery_timeout=2, producer_id_expiration=5, max_ticks=4)
    assert _verdict(m, "NoDuplicates") == "holds"


def test_pre_25_broker_delete_records_duplicates_retry() -> None:
    # §3.2: before KAFKA-7190 moving the log start offset evicts the producer; the retry of seq 0 is new
    m = machine("broker-2.0-2.3", records=1, max_in_flight=1, delete_records=1)
    assert _verdict(m, "NoDuplicates") == "violated"


def test_trunk_delete_records_keeps_state_no_duplicates() -> None:
    m = machine("kafka-shipped", records=2, max_in_flight=2, delete_records=1)
    assert _verdict(m, "NoDuplicates") == "holds"


# --- kafka.init_producer_id: every transition records previousProducerId (§1.3) ----------------------------

def init_machine(variant: str = "kafka-shipped", **bounds: int) -> Any:
    from eoscheck.model.registry import (
        INIT_PRODUCER_ID_MACHINE as INIT_PRODUCER_ID,  # the hand-written machine
    )
    switches = {k: v.default for k, v in INIT_PRODUCER_ID.switches.items()}
    switches.update(INIT_PRODUCER_ID.variants[variant].switches)
    b = {k: v.default for k, v in INIT_PRODUCER_ID.bounds.items()}
    b.update(bounds)
    return INIT_PRODUCER_ID.build(switches, b)


def after_rotation(m: Any) -> Any:
    """Metadata just rotated to producer id 1 (previous 0, exhausted epoch 1 recorded as last) and the
    client ready with (1, 0): the state KIP-360's retry-after-rotation case starts from."""
    from eoscheck.model.state import INIT_READY, TxnMetadata
    from eoscheck.model.transactions.codes import TxnState
    s = next(iter(m.init_states()))
    meta = TxnMetadata(True, 1, 0, 0, 1, int(TxnState.EMPTY), False)
    client = s.clients[0]._replace(phase=INIT_READY, producer_id=1, epoch=0, started=True)
    return s._replace(metadata=meta, clients=(client,) + s.clients[1:], next_producer_id=2)


def test_java_coordinator_transitions_record_previous_producer_id() -> None:
    m = init_machine("kafka-java-coordinator", max_epoch=3, transactions=1)
    s = after_rotation(m)
    s = step(m, s, "AddPartitionsToTxn", client=0)
    assert s.metadata.state == 1  # Ongoing
    # Java completeTransitionTo (KAFKA-18884): prevProducerId := transit.prevProducerId = the id before
    assert s.metadata.prev_producer_id == 1


def test_scala_coordinator_keeps_previous_producer_id_on_ongoing() -> None:
    # fidelity audit B1: the Scala completeTransitionTo copies previousProducerId only for Empty (and a
    # TV2 CompleteX), so the id replaced by the rotation stays previous through the new id's transaction
    m = init_machine("kafka-shipped", max_epoch=3, transactions=1)
    s = step(m, after_rotation(m), "AddPartitionsToTxn", client=0)
    assert s.metadata.state == 1 and s.metadata.prev_producer_id == 0


def _rotated_id_fences_ongoing(variant: str) -> bool:
    """Whether a HandleInitProducerId carrying a producer id other than the metadata's moves an Ongoing
    transaction out of Ongoing (the audit's B1 probe bounds)."""
    from eoscheck.model.transactions.codes import TxnState
    m = init_machine(variant, clients=2, max_epoch=2, lost_responses=0, failovers=0, abortable_errors=1,
                     transactions=3, restarts=0, new_producer_ids=3)
    seen = set(m.init_states())
    todo = list(seen)
    while todo:
        s = todo.pop()
        if not m.within_bounds(s):
            continue
        for st, t in m.successors(s):
            if (st[0] == "HandleInitProducerId" and st[3] >= 0 and st[3] != s.metadata.producer_id
                    and s.metadata.state == TxnState.ONGOING and t.metadata.state != TxnState.ONGOING):
                return True
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return False


def test_scala_coordinator_lets_the_rotated_away_id_fence_the_new_ids_transaction() -> None:
    # B1: after a rotation P -> N, (P, exhausted epoch) still passes validPid on the Scala coordinator and
    # fences N's Ongoing transaction; the Java coordinator records N as previous on Ongoing
    assert _rotated_id_fences_ongoing("kafka-shipped")
    assert not _rotated_id_fences_ongoing("kafka-java-coordinator")


def test_fencing_by_a_restarted_slots_predecessor_is_not_a_sole_instance_violation() -> None:
    # One slot, one restart: the predecessor's InitProducerId may still be in flight when the new instance
    # has initialised; when it is handled it bumps the epoch and the new instance is fenced. That is
    # Kafka fencing by another instance (§1.3), which the property's doc allows.
    m = init_machine(clients=1, restarts=1, lost_responses=0, failovers=0, abortable_errors=0, transactions=1)
    r = explore(m, ExploreOptions(properties=("SoleInstanceNeverFenced",), check_deadlock=False, max_states=100_000))
    assert r.verdict == "holds"


def test_abortable_error_aborts_the_transaction_before_init_producer_id() -> None:
    # §2.6 (KIP-360 client): an epoch bump is required only after a failed batch, i.e. inside a
    # transaction; abortTransaction() sends EndTxn(ABORT, pid, epoch) and only on its success
    # InitProducerId(pid, epoch). A fenced EndTxn(ABORT) is fatal (finding 24).
    from eoscheck.model.state import INIT_FENCED, INIT_IN_TXN, INIT_INITIALIZING
    m = init_machine(clients=1, lost_responses=0, failovers=0, abortable_errors=1, transactions=1)
    s = after_rotation(m)
    assert not any(st[0] == "AbortableError" for st, _ in m.successors(s))  # READY: no failed batch
    s = step(m, s, "AddPartitionsToTxn", client=0)
    assert s.clients[0].phase == INIT_IN_TXN
    a = step(m, s, "AbortableError", client=0, error=int(Errors.NONE))
    assert a.metadata.state == 3  # PrepareAbort: the abort is processed first
    assert a.clients[0].phase == INIT_INITIALIZING
    assert [(r.producer_id, r.epoch) for r in a.requests] == [(1, 0)]
    bumped = s._replace(metadata=s.metadata._replace(epoch=1))  # another instance bumped the epoch
    f = step(m, bumped, "AbortableError", client=0)
    assert f.clients[0].phase == INIT_FENCED and not f.requests


# --- kafka.eos_pipeline: what a named Kafka version ran ---------------------------------------------------

def test_kafka_24_timeout_abort_bumps_the_epoch() -> None:
    # §6.3; pre-KIP-360 TransactionCoordinator.abortTimedOutTransactions called prepareFenceProducerEpoch()
    # and handleEndTransaction(ABORT) cleared PrepareEpochFence and set txnMetadata.producerEpoch to the
    # fenced epoch before preparing PrepareAbort: the bump predates KIP-360
    from eoscheck.model.registry import MODELS
    eos = next(m for m in MODELS if m.name == "kafka.eos_pipeline")
    switches = {k: v.default for k, v in eos.switches.items()}
    switches.update(eos.variants["kafka-2.4-eos-alpha"].switches)
    assert switches["timeout_abort_bumps_epoch"] is True
