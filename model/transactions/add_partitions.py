"""AddPartitionsToTxn and AddOffsetsToTxn (``TransactionCoordinator.handleAddPartitionsToTransaction``).

AddOffsetsToTxn is AddPartitionsToTxn of the group's ``__consumer_offsets`` partition
(``handleAddOffsetsToTxn`` maps the group id to that partition), so one rule serves both.
"""

from __future__ import annotations

from typing import NamedTuple

from eoscheck.checker.ops import CONCRETE, Ops

from .codes import NO_PENDING, Errors, TxnState
from .metadata import TxnMeta, transit, with_partitions


def add_partitions_error(ops: Ops, *, meta_exists, meta_producer_id, meta_epoch, meta_state, meta_pending,
                         req_producer_id, req_epoch):
    """The error of AddPartitionsToTxn, in Kafka's check order; NONE means accepted.

    Whether the partitions were already added does not change the error: an accepted request either
    needs no write (Ongoing and every partition already added) or moves the metadata to Ongoing.
    """
    E = Errors
    c = lambda v: ops.const(int(v), 16)
    prepare = ops.or_(ops.eq(meta_state, c(TxnState.PREPARE_COMMIT)), ops.eq(meta_state, c(TxnState.PREPARE_ABORT)))
    return ops.ite(ops.not_(meta_exists), c(E.INVALID_PRODUCER_ID_MAPPING),
           ops.ite(ops.ne(meta_producer_id, req_producer_id), c(E.INVALID_PRODUCER_ID_MAPPING),
           ops.ite(ops.ne(meta_epoch, req_epoch), c(E.PRODUCER_FENCED),
           ops.ite(ops.ne(meta_pending, c(NO_PENDING)), c(E.CONCURRENT_TRANSACTIONS),
           ops.ite(prepare, c(E.CONCURRENT_TRANSACTIONS),
                   c(E.NONE))))))


class AddPartitionsOutcome(NamedTuple):
    error: int
    meta: TxnMeta
    #: a ``__transaction_state`` write happened (False for errors and for the already-added case)
    wrote: bool


def completing(meta: TxnMeta) -> bool:
    """Whether the transaction is still completing: a pending transition, or PrepareX, which the composed
    machines write in one step with its completion still to come (Kafka's PrepareX always has CompleteX
    pending once its record is written: ``prepareComplete`` runs in the append callback)."""
    return meta.pending_state != NO_PENDING or meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT)


def add_partitions_to_txn(meta: TxnMeta | None, producer_id: int, epoch: int,
                          partitions: tuple[int, ...], *, pending_first: bool = False) -> AddPartitionsOutcome:
    """Handle AddPartitionsToTxn / AddOffsetsToTxn on concrete metadata (``None`` or ``exists=False``:
    unknown transactional id). ``pending_first``: a transaction still completing is answered
    CONCURRENT_TRANSACTIONS before the producer id and epoch are checked (4.0.0, KAFKA-18660, PR 18730:
    the first add under the producer id a TV2 rotation answered arrives before the rotation completes)."""
    if meta is None or not meta.exists:
        # An unknown transactional id has no metadata to return; callers keep theirs.
        return AddPartitionsOutcome(int(Errors.INVALID_PRODUCER_ID_MAPPING), meta, False)  # type: ignore[arg-type]
    if pending_first and completing(meta):
        return AddPartitionsOutcome(int(Errors.CONCURRENT_TRANSACTIONS), meta, False)
    added = set(partitions) <= set(meta.partitions)
    err = add_partitions_error(CONCRETE, meta_exists=True, meta_producer_id=meta.producer_id,
                               meta_epoch=meta.epoch, meta_state=meta.state,
                               meta_pending=meta.pending_state, req_producer_id=producer_id, req_epoch=epoch)
    if err != Errors.NONE:
        return AddPartitionsOutcome(err, meta, False)
    if meta.state == TxnState.ONGOING and added:
        return AddPartitionsOutcome(int(Errors.NONE), meta, False)
    # Empty / CompleteCommit / CompleteAbort / Ongoing -> Ongoing (prepareAddPartitions)
    return AddPartitionsOutcome(int(Errors.NONE),
                                transit(meta, state=int(TxnState.ONGOING), partitions=with_partitions(meta, partitions)),
                                True)


def verify_partitions(meta: TxnMeta | None, producer_id: int, epoch: int,
                      partitions: tuple[int, ...], *, abortable: bool = True) -> tuple[tuple[int, int], ...]:
    """KIP-890 part 1's verify-only AddPartitionsToTxn (``handleVerifyPartitionsInTransaction``):
    (partition, error) for each: NONE if it is in the transaction, TRANSACTION_ABORTABLE if not
    (``abortable``: KAFKA-16314, 3.8.0; INVALID_TXN_STATE in 3.6.0-3.7.1);
    an unknown transactional id or another producer id -> INVALID_PRODUCER_ID_MAPPING, another epoch
    -> PRODUCER_FENCED, PrepareX -> CONCURRENT_TRANSACTIONS, for every partition. The pending state
    is not checked (the append re-validates). Nothing is written."""
    if meta is None or not meta.exists or meta.producer_id != producer_id:
        err = int(Errors.INVALID_PRODUCER_ID_MAPPING)
    elif meta.epoch != epoch:
        err = int(Errors.PRODUCER_FENCED)
    elif meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
        err = int(Errors.CONCURRENT_TRANSACTIONS)
    else:
        outside = int(Errors.TRANSACTION_ABORTABLE) if abortable else int(Errors.INVALID_TXN_STATE)
        return tuple((p, int(Errors.NONE) if p in meta.partitions else outside) for p in partitions)
    return tuple((p, err) for p in partitions)
