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
    c = lambda v: ops.const(int(v), 16)  # noqa: E731 - error codes and state ids fit 16 bits
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


def add_partitions_to_txn(meta: TxnMeta | None, producer_id: int, epoch: int,
                          partitions: tuple[int, ...]) -> AddPartitionsOutcome:
    """Handle AddPartitionsToTxn / AddOffsetsToTxn on concrete metadata (``None`` or ``exists=False``:
    unknown transactional id)."""
    if meta is None or not meta.exists:
        # An unknown transactional id has no metadata to return; callers keep theirs.
        return AddPartitionsOutcome(int(Errors.INVALID_PRODUCER_ID_MAPPING), meta, False)  # type: ignore[arg-type]
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


def verify_partition(meta: TxnMeta | None, producer_id: int, epoch: int, partition: int) -> int:
    """KIP-890 part 1 (3.6+): the coordinator's answer to a leader's AddPartitionsToTxn with
    ``verifyOnly``: NONE only if the producer's transaction is Ongoing with ``partition`` added
    under this producer id and epoch; otherwise the leader refuses the batch (INVALID_TXN_STATE,
    TRANSACTION_ABORTABLE for clients that know it)."""
    if meta is None or not meta.exists or meta.producer_id != producer_id:
        return int(Errors.INVALID_PRODUCER_ID_MAPPING)
    if meta.epoch != epoch:
        return int(Errors.INVALID_PRODUCER_EPOCH)
    if meta.state != TxnState.ONGOING or partition not in meta.partitions:
        return int(Errors.INVALID_TXN_STATE)
    return int(Errors.NONE)
