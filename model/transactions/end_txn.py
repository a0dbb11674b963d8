"""EndTxn on the transaction coordinator (``TransactionCoordinator.endTransaction``), TV1 rules.

Validation (snapshot 2024-10, TV1 / pre-KIP-890-part-2), in Kafka's order:

    no metadata                                   -> INVALID_PRODUCER_ID_MAPPING
    pid != meta.pid                               -> INVALID_PRODUCER_ID_MAPPING
    epoch invalid                                 -> PRODUCER_FENCED
        valid := epoch == meta.epoch (from a client) | epoch >= meta.epoch (coordinator-internal abort)
    pending state defined and != PrepareEpochFence -> CONCURRENT_TRANSACTIONS
    Ongoing                                       -> PrepareCommit / PrepareAbort (then markers)
    CompleteCommit: COMMIT -> NONE (retry), ABORT -> INVALID_TXN_STATE
    CompleteAbort:  ABORT  -> NONE (retry), COMMIT -> INVALID_TXN_STATE
    PrepareCommit:  COMMIT -> CONCURRENT_TRANSACTIONS, ABORT -> INVALID_TXN_STATE
    PrepareAbort:   ABORT  -> CONCURRENT_TRANSACTIONS, COMMIT -> INVALID_TXN_STATE
    Empty                                         -> INVALID_TXN_STATE

The coordinator answers NONE right after the PrepareX record is written, before any marker lands.

TV2 (KIP-890 part 2): every EndTxn sent with transaction version 2 bumps the epoch in PrepareX
(``prepare_abort_or_commit``: lastEpoch := old epoch); at an exhausted epoch (>= max_epoch - 1) it
also allocates ``nextProducerId``, which replaces the producer id (epoch 0) when the transaction
completes (``markers.complete_if_done``). Each transition records the transaction version it was
made with (``TxnMetadata.tv``), so the version is carried by each transaction, not by a global
switch. Three validations:

* ``end_txn`` - TV1 (every Kafka before KIP-890 part 2; also used with a TV2 *request* on metadata
  whose last transition was TV0/1 in the 2024 snapshot, which then still bumps: ``tv2_bump``);
* ``end_txn_snapshot`` - the 2024-10 snapshot: TV1 or TV2 rules chosen by the *metadata's* version,
  the bump by the *request's* (test ``shouldReturnCorrectlyWhenTransactionVersionUpgraded``);
  ``retryOnEpochBump`` and ``retryOnOverflow``;
* ``end_txn_tv2`` - the later-trunk TV2 table (``endTransaction`` split by the request's version).

A PrepareX written clears ``hasFailedEpochFence``: Kafka clears it in ``prepareComplete``, which the
append callback of the PrepareX record calls at once, before any marker is sent.
"""

from __future__ import annotations

from typing import NamedTuple

from eoscheck.checker.ops import CONCRETE, Ops, Term

from .codes import NO_PENDING, NO_PRODUCER_ID, Errors, TxnResult, TxnState
from .metadata import TxnMeta, transit


class EndTxnDecision(NamedTuple):
    """Terms of the ``ops`` the decision ran over: ints under CONCRETE, Z3 terms in a proof."""

    error: Term
    #: the state the metadata moves to (PrepareCommit / PrepareAbort), or the current state if none
    next_state: Term


def end_txn_decision(ops: Ops, *, is_from_client: bool, meta_exists, meta_producer_id, meta_epoch, meta_state,
                     meta_pending, req_producer_id, req_epoch, req_result) -> EndTxnDecision:
    """The TV1 EndTxn decision over ``ops`` (``is_from_client`` is fixed per call site, not a term).

    The epoch rule is 2.6+ (KAFKA-9600): a client needs the exact epoch. 2.5.x refused only a lower
    epoch and answered INVALID_PRODUCER_EPOCH (PRODUCER_FENCED is 2.7+); not modelled (audit C2)."""
    E, S = Errors, TxnState
    c = lambda v: ops.const(int(v), 16)
    commit = ops.eq(req_result, c(TxnResult.COMMIT))
    st = lambda s: ops.eq(meta_state, c(s))
    epoch_ok = ops.eq(req_epoch, meta_epoch) if is_from_client else ops.ge(req_epoch, meta_epoch)
    pending_blocks = ops.and_(ops.ne(meta_pending, c(NO_PENDING)), ops.ne(meta_pending, c(S.PREPARE_EPOCH_FENCE)))
    # the answer for each state, (error for COMMIT, error for ABORT)
    by_state = ops.ite(st(S.ONGOING), c(E.NONE),
               ops.ite(st(S.COMPLETE_COMMIT), ops.ite(commit, c(E.NONE), c(E.INVALID_TXN_STATE)),
               ops.ite(st(S.COMPLETE_ABORT), ops.ite(commit, c(E.INVALID_TXN_STATE), c(E.NONE)),
               ops.ite(st(S.PREPARE_COMMIT), ops.ite(commit, c(E.CONCURRENT_TRANSACTIONS), c(E.INVALID_TXN_STATE)),
               ops.ite(st(S.PREPARE_ABORT), ops.ite(commit, c(E.INVALID_TXN_STATE), c(E.CONCURRENT_TRANSACTIONS)),
                       c(E.INVALID_TXN_STATE))))))  # Empty (and Dead/PrepareEpochFence, never completed)
    error = ops.ite(ops.not_(meta_exists), c(E.INVALID_PRODUCER_ID_MAPPING),
            ops.ite(ops.ne(meta_producer_id, req_producer_id), c(E.INVALID_PRODUCER_ID_MAPPING),
            ops.ite(ops.not_(epoch_ok), c(E.PRODUCER_FENCED),
            ops.ite(pending_blocks, c(E.CONCURRENT_TRANSACTIONS),
                    by_state))))
    moves = ops.and_(ops.eq(error, c(E.NONE)), st(S.ONGOING))
    target = ops.ite(commit, c(S.PREPARE_COMMIT), c(S.PREPARE_ABORT))
    return EndTxnDecision(error, ops.ite(moves, target, meta_state))


class EndTxnOutcome(NamedTuple):
    error: int
    meta: TxnMeta
    #: a PrepareCommit/PrepareAbort record was written: markers must now be sent
    wrote: bool


def is_epoch_exhausted(epoch: int, max_epoch: int) -> bool:
    """``TransactionMetadata.isEpochExhausted``: epoch >= max_epoch - 1."""
    return epoch >= max_epoch - 1


def prepare_abort_or_commit(meta: TxnMeta, state: int, tv: int, next_producer_id: int = NO_PRODUCER_ID) -> TxnMeta:
    """``prepareAbortOrCommit`` + its completion: PrepareCommit/PrepareAbort recording the request's
    transaction version; with TV2 the epoch is bumped (lastEpoch := old epoch) and ``nextProducerId``
    kept for the completion; with TV0/1 epoch and lastEpoch stay. The write clears
    hasFailedEpochFence (``prepareComplete`` runs in its append callback)."""
    if tv >= 2:
        meta = meta._replace(epoch=meta.epoch + 1, last_epoch=meta.epoch, next_producer_id=next_producer_id)
    return transit(meta, state=int(state), tv=tv, has_failed_epoch_fence=False)


def end_txn(meta: TxnMeta | None, producer_id: int, epoch: int, result: int, *, is_from_client: bool = True,
            tv2_bump: bool = False, client_tv: int | None = None, max_epoch: int = 32767,
            new_producer_id: int = NO_PRODUCER_ID) -> EndTxnOutcome:
    """Handle EndTxn on concrete metadata (``None`` or ``exists=False``: unknown transactional id)
    with the TV1 validation. ``tv2_bump``: the request's transaction version is 2, so PrepareX bumps
    the epoch (and, at an exhausted epoch outside a fence, takes ``new_producer_id`` as
    nextProducerId: a caller without an allocator passes -1 and gets no rotation). ``client_tv``:
    the version recorded (default 2 with ``tv2_bump``, else 0)."""
    if meta is None or not meta.exists:
        return EndTxnOutcome(int(Errors.INVALID_PRODUCER_ID_MAPPING), meta, False)  # type: ignore[arg-type]
    d = end_txn_decision(CONCRETE, is_from_client=is_from_client, meta_exists=True,
                         meta_producer_id=meta.producer_id, meta_epoch=meta.epoch, meta_state=meta.state,
                         meta_pending=meta.pending_state, req_producer_id=producer_id, req_epoch=epoch,
                         req_result=result)
    if d.error != Errors.NONE or d.next_state == meta.state:
        return EndTxnOutcome(int(d.error), meta, False)
    tv = (2 if tv2_bump else 0) if client_tv is None else client_tv
    nxt = _prepare(meta, int(d.next_state), epoch, tv2_bump, tv, max_epoch, new_producer_id)
    return EndTxnOutcome(int(Errors.NONE), nxt, True)


def _prepare(meta: TxnMeta, state: int, epoch: int, tv2_bump: bool, tv: int, max_epoch: int,
             new_producer_id: int) -> TxnMeta:
    fence = meta.pending_state == TxnState.PREPARE_EPOCH_FENCE
    next_pid = new_producer_id if tv2_bump and not fence and is_epoch_exhausted(meta.epoch, max_epoch) \
        else NO_PRODUCER_ID
    if fence:
        # the fenced epoch is installed in memory before the PrepareAbort write (§6.3)
        meta = meta._replace(pending_state=NO_PENDING, epoch=epoch, last_epoch=-1)
    if tv2_bump:
        return prepare_abort_or_commit(meta, state, max(tv, 2), next_pid)
    return prepare_abort_or_commit(meta, state, min(tv, 1))


def end_txn_snapshot(meta: TxnMeta | None, producer_id: int, epoch: int, result: int, *, client_tv: int,
                     is_from_client: bool = True, max_epoch: int = 32767,
                     new_producer_id: int = NO_PRODUCER_ID) -> EndTxnOutcome:
    """``TransactionCoordinator.endTransaction`` of the 2024-10 snapshot (1eb7644): the validation is
    TV2's when the *metadata's* last transition was TV2 and no fence is pending, TV1's otherwise;
    the *request's* version decides whether PrepareX bumps the epoch. TV2 validation: Ongoing/Empty
    need the current epoch; PrepareX a retry (metadata epoch = epoch + 1); CompleteX a retry or a
    retry after an overflow (previous producer id, epoch max_epoch - 1, metadata epoch 0), which is
    also the one case where another producer id is accepted."""
    E, S = Errors, TxnState
    if meta is None or not meta.exists:
        return EndTxnOutcome(int(E.INVALID_PRODUCER_ID_MAPPING), meta, False)  # type: ignore[arg-type]
    fence = meta.pending_state == S.PREPARE_EPOCH_FENCE
    v2 = not fence and meta.tv >= 2
    retry_overflow = v2 and meta.prev_producer_id == producer_id and epoch == max_epoch - 1 and meta.epoch == 0
    retry_bump = v2 and meta.epoch == epoch + 1
    st = meta.state
    if v2:
        if st in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
            valid = retry_bump
        elif st in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
            valid = retry_bump or retry_overflow
        else:
            valid = epoch == meta.epoch
    else:
        valid = (not is_from_client or epoch == meta.epoch) and epoch >= meta.epoch

    def answer(err: int) -> EndTxnOutcome:
        return EndTxnOutcome(int(err), meta, False)

    if meta.producer_id != producer_id and not retry_overflow:
        return answer(E.INVALID_PRODUCER_ID_MAPPING)
    if not valid:
        return answer(E.PRODUCER_FENCED)
    if meta.pending_state != NO_PENDING and not fence:
        return answer(E.CONCURRENT_TRANSACTIONS)
    commit = result == TxnResult.COMMIT
    if st == S.ONGOING:
        target = S.PREPARE_COMMIT if commit else S.PREPARE_ABORT
        return EndTxnOutcome(int(E.NONE), _prepare(meta, int(target), epoch, client_tv >= 2, client_tv, max_epoch,
                                                   new_producer_id), True)
    if st in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
        return answer(E.NONE if commit == (st == S.COMPLETE_COMMIT) else E.INVALID_TXN_STATE)
    if st in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
        return answer(E.CONCURRENT_TRANSACTIONS if commit == (st == S.PREPARE_COMMIT) else E.INVALID_TXN_STATE)
    return answer(E.INVALID_TXN_STATE)  # Empty (Dead / PrepareEpochFence never completed)


def end_txn_tv2(meta: TxnMeta | None, producer_id: int, epoch: int, result: int, *, max_epoch: int = 32767,
                new_producer_id: int = NO_PRODUCER_ID, prepare_pending: bool = False,
                epoch_first: bool = False, producer_id_first: bool = False,
                late_commit_fenced: bool = False) -> EndTxnOutcome:
    """EndTxn from a TV2 client (KIP-890 part 2), as the later-trunk ``endTransaction`` tabulates it.

    Every accepted EndTxn bumps the epoch (lastEpoch := the old one); the client learns the new epoch
    from the answer (EndTxn v5). A request whose epoch is one below the metadata's is a *retry* of an
    EndTxn that already bumped; one with the metadata's epoch is *current*:

        Ongoing:        current -> PrepareX with a bump; otherwise PRODUCER_FENCED
        PrepareX:       retry with the same result -> CONCURRENT_TRANSACTIONS, the other -> INVALID_TXN_STATE
        CompleteCommit: COMMIT retry -> NONE; COMMIT current -> INVALID_TXN_STATE; ABORT retry ->
                        INVALID_TXN_STATE; ABORT current -> abort with no partitions (epoch bump)
        CompleteAbort:  ABORT retry -> NONE; ABORT current -> epoch bump; COMMIT -> INVALID_TXN_STATE
        Empty:          ABORT current -> epoch bump; COMMIT current -> INVALID_TXN_STATE
        anything else   -> PRODUCER_FENCED

    At an exhausted epoch the bump allocates ``new_producer_id`` as nextProducerId (rotation at
    completion); a retry after that rotation (previous producer id, epoch max_epoch - 1, metadata at
    epoch 0) is answered like a retry of the completed transaction.

    A pending transition is answered CONCURRENT_TRANSACTIONS before the producer id and the epoch are
    checked (4.0.0 to trunk: KAFKA-18464 moved it before the epoch, KAFKA-18660 before the producer id,
    ``endTransaction`` at the 4.0.0 tag). ``prepare_pending``: PrepareX counts as pending, as in Kafka once
    its record is written (CompleteX pending while the markers go out; the composed machines write PrepareX
    in one step). ``producer_id_first``: the order before KAFKA-18660 (PR 18730, 4.0 trunk before January
    30, 2025): the producer id first, so an EndTxn under the producer id a rotation answered, sent while
    the rotation completes (the metadata still holds the old one), is INVALID_PRODUCER_ID_MAPPING.
    ``late_commit_fenced``: KAFKA-20785 (PR 23204, trunk 2026): a COMMIT retry in CompleteAbort is
    PRODUCER_FENCED, not INVALID_TXN_STATE. A client's own EndTxn retry carries its own result, so only a
    coordinator-side abort (timeout, fence) leaves a commit at the retry epoch of a CompleteAbort.
    ``epoch_first``: the order before KAFKA-18464 (4.0 trunk before January 10, 2025; implies
    ``producer_id_first``): an invalid epoch is PRODUCER_FENCED even while the transaction completes, so
    an abort at the epoch the commit answered, sent before that commit completes, fences its own producer.
    """
    E, S = Errors, TxnState
    if meta is None or not meta.exists:
        return EndTxnOutcome(int(E.INVALID_PRODUCER_ID_MAPPING), meta, False)  # type: ignore[arg-type]
    st = meta.state
    preparing = st in (S.PREPARE_COMMIT, S.PREPARE_ABORT)
    pending = meta.pending_state != NO_PENDING or (prepare_pending and preparing)
    if pending and not (producer_id_first or epoch_first):
        return EndTxnOutcome(int(E.CONCURRENT_TRANSACTIONS), meta, False)
    overflow_retry = (meta.producer_id != producer_id and meta.prev_producer_id == producer_id
                      and epoch == max_epoch - 1 and meta.epoch == 0
                      and meta.state in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT))
    if meta.producer_id != producer_id and not overflow_retry:
        return EndTxnOutcome(int(E.INVALID_PRODUCER_ID_MAPPING), meta, False)
    commit = result == TxnResult.COMMIT
    retry, current = meta.epoch == epoch + 1 or overflow_retry, meta.epoch == epoch and not overflow_retry
    if pending:
        # isValidEpoch by state: PrepareX needs a retry, CompleteX a retry or the current epoch, the rest current
        valid = retry if preparing else (retry or current) if st in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT) else current
        error = E.PRODUCER_FENCED if epoch_first and not valid else E.CONCURRENT_TRANSACTIONS
        return EndTxnOutcome(int(error), meta, False)
    target = S.PREPARE_COMMIT if commit else S.PREPARE_ABORT

    def bump(state: int) -> EndTxnOutcome:
        next_pid = new_producer_id if is_epoch_exhausted(meta.epoch, max_epoch) else NO_PRODUCER_ID
        return EndTxnOutcome(int(E.NONE), prepare_abort_or_commit(meta, state, 2, next_pid), True)

    def answer(err: int) -> EndTxnOutcome:
        return EndTxnOutcome(int(err), meta, False)

    if st == S.ONGOING:
        return bump(target) if current else answer(E.PRODUCER_FENCED)
    if st in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
        if not retry:
            return answer(E.PRODUCER_FENCED)
        return answer(E.CONCURRENT_TRANSACTIONS if st == target else E.INVALID_TXN_STATE)
    if st in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
        done = S.COMPLETE_COMMIT if commit else S.COMPLETE_ABORT
        if retry:
            if commit and st == S.COMPLETE_ABORT and late_commit_fenced:
                return answer(E.PRODUCER_FENCED)
            return answer(E.NONE if st == done else E.INVALID_TXN_STATE)
        if current:
            return bump(S.PREPARE_ABORT) if not commit else answer(E.INVALID_TXN_STATE)
        return answer(E.PRODUCER_FENCED)
    if st == S.EMPTY and current:
        return answer(E.INVALID_TXN_STATE) if commit else bump(S.PREPARE_ABORT)
    return answer(E.PRODUCER_FENCED)


def answer_after_end_txn(meta: TxnMeta, next_producer_id: bool = True) -> tuple[int, int]:
    """The producer id and epoch an accepted TV2 EndTxn answers with (EndTxn v5): the bumped pair, or
    the next producer id at epoch 0 when the epoch overflowed. ``next_producer_id`` False: the 4.0 trunk
    before KAFKA-18660 (January 30, 2025) answered the old producer id with the exhausted epoch
    (``txnMetadata``'s pair, not ``newPreSendMetadata``'s)."""
    if next_producer_id and meta.next_producer_id >= 0:
        return meta.next_producer_id, 0
    return meta.producer_id, meta.epoch
