"""kafka.eos: a batch re-enqueued for a retry expires in the accumulator (``RecordAccumulator.expiredBatches``,
KIP-91 2.1.0 .. 4.1.0; ``producer.transactional.expire_retried_batch``, the ``ExpireRetriedBatch`` rule)."""

from __future__ import annotations

from eoscheck.checker.explore import explore
from eoscheck.checker.explore.options import ExploreOptions
from eoscheck.model.errors import Errors
from eoscheck.model.machines.eos import machine
from eoscheck.model.producer import transactional as tx
from eoscheck.model.producer.client import ACKED, RETRIED
from eoscheck.model.producer.config import ClientConfig
from eoscheck.model.state import (
    INFLIGHT,
    QUEUED,
    RETRY,
    TXN_ABORTABLE,
    TXN_BUMP,
    TXN_FATAL,
    TXN_READY,
    ProduceResponse,
    TxnProducer,
)


def cfg(version: str = "kip360") -> ClientConfig:
    return ClientConfig(version=version, epoch_bump="resequence_inflight", max_in_flight=2, delivery_timeout=1 << 30,
                        max_seq=2**31 - 1, max_epoch=32767)


def retried_then_in_flight(version: str = "kip360") -> TxnProducer:
    """Partition 0 drained records 0 and 1 (sequences 0, 1); record 0 was answered NOT_ENOUGH_REPLICAS and
    waits for its retry, record 1 is in flight, record 2 was never drained."""
    p = tx.begin_transaction(tx.with_producer_id(tx.new_producer(1), 3, 0)._replace(phase=TXN_READY), 3, 0)
    p = p._replace(added=1)
    for _ in range(2):
        drained = tx.drain(p, 0, 0, 0, cfg(version))
        assert drained is not None
        p = drained[0]
    p, outcome = tx.on_produce_response(p, 0, ProduceResponse(0, 0, 0, int(Errors.NOT_ENOUGH_REPLICAS), -1, -1), 0,
                                        cfg(version))
    assert outcome == RETRIED
    return p


def test_the_first_retried_batch_expires_and_leaves_its_sequence_unresolved() -> None:
    p = retried_then_in_flight()
    expired = tx.expire_retried_batch(p, 0, cfg())
    assert expired is not None and expired.phase == TXN_ABORTABLE and expired.bump_after_abort
    part = expired.parts[0]
    assert [(b.record, b.status) for b in part.batches] == [(1, INFLIGHT), (2, QUEUED)]
    assert part.failed == 0b1 and part.unresolved == 1  # markSequenceUnresolved: the sequence after batch 0
    # the in-flight rule takes the in-flight batch, never the retried one
    given_up = tx.give_up_in_flight(p, 0, cfg())
    assert given_up is not None and [b.record for b in given_up.parts[0].batches] == [0, 2]
    # EndTxn still waits for batch 1 (it has a sequence); its success resolves the sequence: no extra bump needed,
    # but the expiry's own abortable error asks for one (maybeTransitionToErrorState)
    assert not tx.ready_to_abort(expired)
    acked, outcome = tx.on_produce_response(expired, 0, ProduceResponse(0, 0, 1, 0, 5, 0), 0, cfg())
    assert outcome == ACKED and tx.ready_to_abort(acked)
    done = tx.finish_transaction(tx.abort_undrained_batches(acked), False, acked.epoch, bump_after_abort=True,
                                 cfg=cfg())
    assert done.phase == TXN_BUMP and done.parts[0].unresolved == -1


def test_an_unresolved_sequence_left_by_every_sent_batch_expiring_needs_the_bump() -> None:
    p = tx.expire_retried_batch(retried_then_in_flight(), 0, cfg())
    assert p is not None
    p = tx.give_up_in_flight(p, 0, cfg())
    assert p is not None and tx.ready_to_abort(p)
    # maybeResolveSequences: nothing acknowledged, next sequence 2: the KIP-360 client bumps even when the abort
    # itself would not (bump_after_abort=False stands for a client that does not bump after an abort)
    done = tx.finish_transaction(tx.abort_undrained_batches(p), False, p.epoch, bump_after_abort=False, cfg=cfg())
    assert done.phase == TXN_BUMP


def test_pre_kip360_client_is_fatal_and_0_11_keeps_no_unresolved_sequence() -> None:
    # 1.0-2.4 Sender.run: hasUnresolvedSequences() on a transactional producer -> transitionToFatalError
    old = tx.expire_retried_batch(retried_then_in_flight("pre-kip360"), 0, cfg("pre-kip360"))
    assert old is not None and (old.phase, old.fatal_error) == (TXN_FATAL, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER)
    # 0.11.0: the batch fails (abortable), no unresolved sequence is kept
    first = tx.expire_retried_batch(retried_then_in_flight("0.11"), 0, cfg("0.11"))
    assert first is not None and first.phase == TXN_ABORTABLE
    assert first.parts[0].unresolved == -1 and first.parts[0].failed == 0b1


def test_nothing_to_expire_without_a_retried_batch_or_outside_a_transaction() -> None:
    p = retried_then_in_flight()
    resent = tx.drain(p, 0, 0, 0, cfg())
    assert resent is not None and tx.expire_retried_batch(resent[0], 0, cfg()) is None
    assert tx.expire_retried_batch(p._replace(phase=TXN_READY), 0, cfg()) is None
    assert all(b.status != RETRY for b in resent[0].parts[0].batches)


def test_the_rule_needs_the_produce_timeouts_budget_and_fires_with_a_retry() -> None:
    assert "ExpireRetriedBatch" not in machine("kafka-3.0-3.5", lost_responses=1).actions
    m = machine("kafka-3.0-3.5", lost_responses=1, produce_timeouts=1)
    assert m.actions["ExpireRetriedBatch"] == ("t", "p")
    stats = explore(m, ExploreOptions(properties=(), check_deadlock=False)).stats
    assert stats.coverage["ExpireRetriedBatch"].generated
