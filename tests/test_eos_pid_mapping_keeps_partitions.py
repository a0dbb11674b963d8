"""An abort that InitProducerId's answer ends, with no EndTxn completing it (the 2.5-3.9 client after an
InvalidPidMappingException, or an EndTxn(ABORT) failed abortably with InitProducerId queued behind it):
``InitProducerIdHandler`` moves to READY without ``completeTransaction()``, so partitionsInTransaction (``added``)
carries into the next transaction, whose first batch to such a partition drains without an AddPartitionsToTxn
(``transactional.keeps_partitions_added``); without KIP-890's verification the batch hangs a transaction."""

from __future__ import annotations

import pytest
from eoscheck.checker.compose.testing import reachable_steps
from eoscheck.model.errors import Errors
from eoscheck.model.machines.eos import EosMachine
from eoscheck.model.machines.eos_model import BOUNDS
from eoscheck.model.producer import transactional as tx
from eoscheck.model.protocol import VARIANTS, Protocol
from eoscheck.model.state import TXN_ABORTABLE, TXN_BUMP, TXN_FATAL, TXN_IN_TXN, TXN_READY
from spec_pairs import check_spec_pair_member

PAIR = "eos-pid-mapping-abort-keeps-partitions-"
PID_MAPPING = int(Errors.INVALID_PRODUCER_ID_MAPPING)
#: the bounds of the spec pair: the coordinator aborts the transaction and the idle id expires
EXPIRY = {"transactions": 2, "txn_timeouts": 1, "txn_id_expirations": 1}


def _eos(protocol: Protocol, **bounds: int) -> EosMachine:
    values = {name: b.default for name, b in BOUNDS.items()}
    values.update(bounds)
    return EosMachine(protocol, values)


def _in_transaction(added: int) -> tx.TxnProducer:
    p = tx.with_producer_id(tx.new_producer(2), 7, 3)._replace(phase=TXN_READY)
    return tx.begin_transaction(p, 1, 0)._replace(added=added)


def test_only_an_abort_ended_by_init_producer_id_keeps_the_partitions() -> None:
    p = _in_transaction(0b01)
    bumping = p._replace(phase=TXN_BUMP, added=0)
    assert tx.keeps_partitions_added(bumping, p.added).added == 0b01
    # an abort completed by EndTxn (READY), or a producer that failed, starts from nothing
    for phase in (TXN_READY, TXN_FATAL):
        assert tx.keeps_partitions_added(p._replace(phase=phase, added=0), p.added).added == 0


def test_begin_transaction_keeps_what_the_last_transaction_left() -> None:
    ready = tx.with_producer_id(tx.new_producer(2), 7, 3)._replace(phase=TXN_READY, added=0b10)
    begun = tx.begin_transaction(ready, 1, 0)
    assert begun.added == 0b10 and tx.partitions_to_add(begun) == (0,)


def test_an_end_txn_abort_failed_with_a_bump_keeps_the_partitions() -> None:
    """EndTxn(ABORT) answered INVALID_PRODUCER_ID_MAPPING by the 2.5-3.9 client with a bump already required:
    abortableErrorIfPossible leaves the state ABORTING_TRANSACTION and the queued InitProducerId ends the abort."""
    m = _eos(VARIANTS["kafka-3.0-3.5"].protocol)
    p = _in_transaction(0b11)._replace(phase=TXN_ABORTABLE, bump_after_abort=True,
                                       parts=tuple(part._replace(batches=()) for part in _in_transaction(0).parts))
    after = tx.on_end_txn(p, False, PID_MAPPING, (-1, -1), tv2=False, bump_after_abort=True, cfg=m.cfg,
                          can_bump_epoch=True, pid_mapping_fatal=False)
    assert after is not None and (after.phase, after.added) == (TXN_BUMP, 0b11)
    ended = tx.on_end_txn(p, False, int(Errors.NONE), (-1, -1), tv2=False, bump_after_abort=True, cfg=m.cfg)
    assert ended is not None and (ended.phase, ended.added) == (TXN_BUMP, 0)


def _untracked_drains(protocol: Protocol) -> list[tuple[int, int]]:
    """(transaction, partition) of every Drain of a batch to a partition the coordinator does not track in the
    transaction of the producer's current producer id and epoch (a zombie's drain after the timeout abort bumped the
    epoch, or after the id expired, is not one)."""
    m = _eos(protocol, **EXPIRY)
    out = []
    for s, step, _ in reachable_steps(m):
        if step[0] != "Drain":
            continue
        v = m.view(s)
        p = step[2]
        producer, meta = v.producer[0], v.txn[0]
        current = (meta.producer_id, meta.epoch) == (producer.producer_id, producer.epoch)
        if producer.phase == TXN_IN_TXN and current and p not in meta.partitions:
            out.append((producer.txn, p))
    return out


@pytest.mark.parametrize(("variant", "fatal"), [("kafka-3.0-3.5", False), ("kafka-3.0-3.5", True),
                                                 ("kafka-2.5-2.8", False)])
def test_the_next_transaction_drains_a_carried_partition_without_adding_it(variant: str, fatal: bool) -> None:
    protocol = VARIANTS[variant].protocol.with_(client_pid_mapping_fatal=fatal, client_produce_pid_mapping_fatal=fatal)
    drains = _untracked_drains(protocol)
    if fatal:
        assert drains == []
    else:
        assert drains and all(txn == 1 for txn, _ in drains)


@pytest.mark.parametrize(("name", "length"), [(f"{PAIR}hanging-kafka-3.0-3.5", 13),
                                              (f"{PAIR}kafka-18019-client-rule", None)])
def test_the_pair(name: str, length: int | None) -> None:
    check_spec_pair_member(name, "NoHangingTransaction", length)


def test_epoch_bump_required_survives_into_the_next_transactions_end() -> None:
    """InitProducerIdHandler clears lastError, not epochBumpRequired (2.5.0, 3.9.1): after the carried abort the
    next EndTxn, a commit too, is followed by InitProducerId(producer id, epoch); a completed abort leaves none."""
    m = _eos(VARIANTS["kafka-3.0-3.5"].protocol)
    for bump_required in (True, False):
        bumping = _in_transaction(0)._replace(phase=TXN_BUMP if bump_required else TXN_READY)
        ended = tx.keeps_partitions_added(bumping, 0b01)
        ready = tx.on_init_producer_id(ended, int(Errors.NONE), 7, 4) if bump_required else ended
        assert ready is not None and ready.phase == TXN_READY
        begun = tx.begin_transaction(ready, 1, 0)
        committed = tx.finish_transaction(begun._replace(parts=ready.parts), True, begun.epoch,
                                          bump_after_abort=True, cfg=m.cfg)
        assert committed.phase == (TXN_BUMP if bump_required else TXN_READY)
        assert committed.bump_after_abort == 0
