"""The two coordinator-initiated aborts of an Ongoing transaction, both through PrepareEpochFence.

* Transaction timeout (``TransactionCoordinator.abortTimedOutTransactions``): for an Ongoing
  transaction with no pending state, ``prepareFenceProducerEpoch`` then ``endTransaction(ABORT,
  isFromClient = false, epoch = fenced epoch)``. The fenced epoch is installed in memory before the
  PrepareAbort write, so the ABORT markers carry it and the old producer is fenced everywhere
  (INVALID_PRODUCER_EPOCH at the partitions, PRODUCER_FENCED at the coordinator). This epoch bump came
  with KAFKA-6119 (apache/kafka PR #4137, October 2017), released in 0.11.0.2 and 1.0.0, not with
  KIP-360; in 0.11.0.0-0.11.0.1 the timeout abort used the current epoch (``bump_epoch=False``), so
  the timed-out producer could carry on with AddPartitionsToTxn / AddOffsetsToTxn, starting a new
  transaction from CompleteAbort with the same epoch, and commit half of its logical transaction.
* InitProducerId on an Ongoing transaction (``handleInitProducerId``): the same fence + abort,
  answered with CONCURRENT_TRANSACTIONS so the new producer instance retries (and then gets its own
  bump). The fence existed since 0.11.

Both write PrepareAbort through ``endTransaction``, which installs the fenced epoch in memory before the
append. When that append fails (``fence_write_failed``) the fenced epoch stays in memory, the
transaction stays Ongoing and nothing reaches the log; since KAFKA-9666 (2.6.0) the metadata remembers
it (``hasFailedEpochFence``) so the next fence does not bump again. The TV2 path after KAFKA-19367
(4.0.1, 4.1.0) installs nothing before the append and sets no flag on its failure: the metadata is left as
it was (``leaves_epoch``).
"""

from __future__ import annotations

from typing import NamedTuple

from eoscheck.checker.ops import CONCRETE
from eoscheck.model.coordinator.fencing import fence_producer_epoch

from .codes import NO_PENDING, NO_PRODUCER_EPOCH, Errors, TxnResult, TxnState
from .end_txn import end_txn, prepare_abort_or_commit
from .metadata import TxnMeta


class AbortOutcome(NamedTuple):
    error: int
    meta: TxnMeta
    #: a PrepareAbort record was written: ABORT markers must now be sent
    wrote: bool


def can_time_out(meta: TxnMeta) -> bool:
    """``timedOutTransactions``: Ongoing with no pending state (the clock is abstracted away)."""
    return meta.state == TxnState.ONGOING and meta.pending_state == NO_PENDING


def fence_and_abort(meta: TxnMeta, *, max_epoch: int, bump_epoch: bool = True, tv2: bool = False,
                    tv2_double_bump: bool = True) -> AbortOutcome:
    """prepareFenceProducerEpoch then endTransaction(ABORT, isFromClient=false) in one step.

    With ``bump_epoch=False`` (the 0.11.0.0-0.11.0.1 timeout abort, before KAFKA-6119) no fence is prepared and the abort uses
    the current epoch. With ``tv2`` (server transaction.version 2) and ``tv2_double_bump`` (the 2024
    snapshot and 4.0.0) ``prepareAbortOrCommit`` bumps once more: the PrepareAbort carries epoch + 2 and
    lastEpoch = epoch + 1, so the fenced producer's EndTxn is neither "current" nor a "retry" and gets
    PRODUCER_FENCED. KAFKA-19367 (apache/kafka PR #19910, June 2025; cherry-picked to the 4.0 branch as #19958 and #19991,
    first released in 4.0.1; 4.1.0+) removed that second bump (``tv2_double_bump=False``): the PrepareAbort carries the fenced epoch
    + 1 only, so the timed-out producer's EndTxn(ABORT, epoch) is a TV2 retry (fidelity audit B3). It is
    ``prepareAbortOrCommit``'s bump of the epoch in memory, at the server's version, so the record is the one a
    client's own TV2 abort would write: lastEpoch = the fenced producer's epoch (not -1 as after a TV1 or 4.0.0
    fence) and transaction version 2 (fid20a; before, the model wrote -1 and TV0). A fence that keeps the epoch
    (at ``max_epoch``, where Kafka's ``prepareFenceProducerEpoch`` throws and no TV2 producer holds the epoch)
    keeps the rule of before: the PrepareAbort at that epoch.
    """
    if not bump_epoch:
        return AbortOutcome(*end_txn(meta, meta.producer_id, meta.epoch, TxnResult.ABORT,
                                     is_from_client=False))
    fenced = fence_producer_epoch(CONCRETE, max_epoch=max_epoch, epoch=meta.epoch,
                                  has_failed_epoch_fence=meta.has_failed_epoch_fence)
    pending = meta._replace(pending_state=int(TxnState.PREPARE_EPOCH_FENCE))
    if tv2 and not tv2_double_bump and fenced != meta.epoch:
        # 4.0.1's endTransaction (TV2 path) validates the fenced epoch, installs nothing, and lets
        # prepareAbortOrCommit bump the current epoch at the server's version: epoch + 1, lastEpoch = epoch, TV2
        out = end_txn(pending, meta.producer_id, fenced, TxnResult.ABORT, is_from_client=False)
        if not out.wrote:
            return AbortOutcome(*out)
        return AbortOutcome(out.error, prepare_abort_or_commit(meta, int(TxnState.PREPARE_ABORT), 2), True)
    return AbortOutcome(*end_txn(pending, meta.producer_id, fenced, TxnResult.ABORT, is_from_client=False,
                                 tv2_bump=tv2 and tv2_double_bump))


def abort_timed_out(meta: TxnMeta, *, max_epoch: int, bump_epoch: bool = True, tv2: bool = False,
                    tv2_double_bump: bool = True) -> AbortOutcome:
    """The timeout abort; NONE with no write if the transaction is not (or no longer) Ongoing."""
    if not can_time_out(meta):
        return AbortOutcome(int(Errors.NONE), meta, False)
    return fence_and_abort(meta, max_epoch=max_epoch, bump_epoch=bump_epoch, tv2=tv2, tv2_double_bump=tv2_double_bump)


def init_producer_id_on_ongoing(meta: TxnMeta, *, max_epoch: int, tv2: bool = False,
                                tv2_double_bump: bool = True) -> AbortOutcome:
    """InitProducerId for a transactional id whose transaction is Ongoing (not pending): fence the
    producer, abort the transaction, and answer CONCURRENT_TRANSACTIONS (the error of the abort if it
    failed). The client retries; the retry meets PrepareAbort (CONCURRENT_TRANSACTIONS) until the
    markers complete, then bumps the epoch again in Empty/CompleteAbort."""
    out = fence_and_abort(meta, max_epoch=max_epoch, bump_epoch=True, tv2=tv2, tv2_double_bump=tv2_double_bump)
    err = out.error if out.error != Errors.NONE else int(Errors.CONCURRENT_TRANSACTIONS)
    return AbortOutcome(err, out.meta, out.wrote)


def fence_write_failed(meta: TxnMeta, *, max_epoch: int, keeps_epoch: bool, leaves_epoch: bool = False) -> TxnMeta:
    """The metadata after a fence whose PrepareAbort append failed (``endTransaction``'s append callback
    with an error and ``isEpochFence``): ``endTransaction`` had already set the fenced epoch and
    lastProducerEpoch = -1 in memory and cleared the pending PrepareEpochFence, so the transaction stays
    Ongoing at the fenced epoch with nothing written. ``keeps_epoch`` is KAFKA-9666 (2.6.0,
    ``hasFailedEpochFence``): the failure is remembered and the next fence keeps this epoch; before
    (2.5.1 and earlier ``prepareFenceProducerEpoch``) every fence bumps again, so repeated failures
    (InitProducerId retries while the log is unavailable) walk the epoch towards exhaustion.
    The same for TV2: its second bump is in the PrepareAbort record, which was not written. 2.5.x also
    kept the old epoch as lastProducerEpoch, which its caller sets (``model.api.coordinator``).

    ``leaves_epoch``: the TV2 fence-abort after KAFKA-19367 (4.0.1, 4.1.0; the caller passes it only when the
    server's transaction version, which the coordinator's own aborts use, is 2). ``endTransaction`` no longer
    installs the fenced epoch before the append (``prepareAbortOrCommit`` bumps the current one in the record
    only) and its failure callback no longer sets hasFailedEpochFence; ``TransactionStateManager`` resets
    the pending PrepareAbort. So the metadata is as before the fence: epoch, lastProducerEpoch and the flag
    unchanged, the producer's epoch still current, and the next fence bumps from the same epoch."""
    if leaves_epoch:
        return meta._replace(pending_state=NO_PENDING)
    if not keeps_epoch:
        meta = meta._replace(has_failed_epoch_fence=False)
    fenced = fence_producer_epoch(CONCRETE, max_epoch=max_epoch, epoch=meta.epoch,
                                  has_failed_epoch_fence=meta.has_failed_epoch_fence)
    return meta._replace(epoch=fenced, last_epoch=NO_PRODUCER_EPOCH, pending_state=NO_PENDING,
                         has_failed_epoch_fence=keeps_epoch)
