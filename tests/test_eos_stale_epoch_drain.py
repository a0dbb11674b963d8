"""Known gap (2) of session 28 (fid28b): after an abort that skipped EndTxn (2.5-3.9, InvalidPidMappingException) the
InitProducerId answer empties the client's sequence bookkeeping (``resetSequenceNumbers``), so 2.5.0 .. 4.1.0's
``shouldStopDrainBatchesForPartition`` no longer sees the old epoch's batches still in flight or in retry and drains
the next transaction's batches beside them; the idempotent client, whose guard still sees them, keeps waiting."""

from __future__ import annotations

from eoscheck.checker.compose.testing import reachable_steps
from eoscheck.model.machines.eos import EosMachine
from eoscheck.model.machines.eos_model import BOUNDS
from eoscheck.model.producer import client as cl
from eoscheck.model.producer import transactional as tx
from eoscheck.model.protocol import VARIANTS
from eoscheck.model.state import INFLIGHT, QUEUED


def _eos(**bounds: int) -> EosMachine:
    protocol = VARIANTS["kafka-4.0-dev-2025-01-28-leader-add"].protocol.with_(client_produce_pid_mapping_fatal=False)
    values = {name: b.default for name, b in BOUNDS.items()}
    values.update(bounds)
    return EosMachine(protocol, values)


def _after_skipped_abort() -> tuple[EosMachine, tx.TxnProducer]:
    """Epoch 3's batch still in flight, the producer at epoch 4 (its InitProducerId answered) in its next transaction
    with the partition added and one batch queued."""
    m = _eos(max_in_flight=2)  # with one request in flight per connection the old batch fills the window itself
    p = tx.with_producer_id(tx.new_producer(1), 7, 3)._replace(phase=tx.TXN_READY)
    p = tx.begin_transaction(p, 1, 0)._replace(added=1)
    drained = tx.drain(p, 0, 0, 0, m.cfg)
    assert drained is not None
    p = tx.with_producer_id(drained[0], 7, 4)._replace(phase=tx.TXN_READY)
    return m, tx.begin_transaction(p, 1, 0)._replace(added=1)


def test_the_transactional_client_drains_a_new_epoch_batch_beside_an_old_epoch_one() -> None:
    m, p = _after_skipped_abort()
    assert [(b.status, b.epoch) for b in p.parts[0].batches] == [(INFLIGHT, 3), (QUEUED, -1)]
    drained = tx.drain(p, 0, 0, 0, m.cfg)
    assert drained is not None
    after, req = drained
    assert (req.record, req.producer_id, req.epoch, req.seq) == (1, 7, 4, 0)
    assert [(b.status, b.epoch, b.seq) for b in after.parts[0].batches] == [(INFLIGHT, 3, 0), (INFLIGHT, 4, 0)]


def test_the_idempotent_client_still_waits_for_batches_it_tracks() -> None:
    m, p = _after_skipped_abort()
    assert cl.drain(p.parts[0], 0, 0, m.cfg) is None


def test_a_skipped_abort_with_a_new_producer_id_drains_beside_the_old_ones() -> None:
    """3.8-3.9, two partitions, two in flight: the coordinator's timeout aborts the first transaction, its id expires,
    the AddPartitionsToTxn of the second partition finds no mapping while the first partition's batch is in flight,
    the abort skips EndTxn and InitProducerId(producer id, epoch) answers a new producer id (KIP-360's recovery): some
    Drain sends the new id's batch while a batch of the old id is still in flight or in retry (before, it waited)."""
    m = EosMachine(VARIANTS["kafka-3.8-3.9"].protocol,
                   {**{name: b.default for name, b in BOUNDS.items()},
                    "transactions": 2, "max_in_flight": 2, "txn_timeouts": 1, "txn_id_expirations": 1})
    beside = []
    for s, step, _ in reachable_steps(m):
        if step[0] != "Drain":
            continue
        before = m.view(s).producer[step[1]]
        if any(tx.has_sequence(b) and (b.producer_id, b.epoch) != (before.producer_id, before.epoch)
               for b in before.parts[step[2]].batches):
            beside.append(step)
    assert beside
    assert all(step[-1] == 0 for step in beside)  # the new producer id's epoch
