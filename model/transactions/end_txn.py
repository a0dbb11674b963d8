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

TV2 (KIP-890 part 2) is a documented switch only for the epoch bump of PrepareX (``tv2_bump``): every
EndTxn bumps the epoch (lastEpoch := old epoch). Its different validation (retry on epoch bump,
overflow, Empty -> PrepareAbort) is not modelled; see the module docs of ``states``.
"""

from __future__ import annotations

from typing import NamedTuple

from eoscheck.checker.ops import CONCRETE, Ops

from .codes import NO_PENDING, Errors, TxnResult, TxnState
from .metadata import TxnMeta, transit


class EndTxnDecision(NamedTuple):
    error: object
    #: the state the metadata moves to (PrepareCommit / PrepareAbort), or the current state if none
    next_state: object


def end_txn_decision(ops: Ops, *, is_from_client: bool, meta_exists, meta_producer_id, meta_epoch, meta_state,
                     meta_pending, req_producer_id, req_epoch, req_result) -> EndTxnDecision:
    """The TV1 EndTxn decision over ``ops`` (``is_from_client`` is fixed per call site, not a term)."""
    E, S = Errors, TxnState
    c = lambda v: ops.const(int(v), 16)  # noqa: E731
    commit = ops.eq(req_result, c(TxnResult.COMMIT))
    st = lambda s: ops.eq(meta_state, c(s))  # noqa: E731
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


def end_txn(meta: TxnMeta | None, producer_id: int, epoch: int, result: int, *, is_from_client: bool = True,
            tv2_bump: bool = False) -> EndTxnOutcome:
    """Handle EndTxn on concrete metadata (``None`` or ``exists=False``: unknown transactional id)."""
    if meta is None or not meta.exists:
        return EndTxnOutcome(int(Errors.INVALID_PRODUCER_ID_MAPPING), meta, False)  # type: ignore[arg-type]
    d = end_txn_decision(CONCRETE, is_from_client=is_from_client, meta_exists=True,
                         meta_producer_id=meta.producer_id, meta_epoch=meta.epoch, meta_state=meta.state,
                         meta_pending=meta.pending_state, req_producer_id=producer_id, req_epoch=epoch,
                         req_result=result)
    if d.error != Errors.NONE or d.next_state == meta.state:
        return EndTxnOutcome(int(d.error), meta, False)
    nxt = meta
    if meta.pending_state == TxnState.PREPARE_EPOCH_FENCE:
        # the fenced epoch is installed in memory before the PrepareAbort write (§6.3)
        nxt = nxt._replace(pending_state=NO_PENDING, epoch=epoch, last_epoch=-1)
    if tv2_bump:
        # prepareAbortOrCommit with TV2: epoch + 1, lastEpoch := old epoch (overflow rotation not modelled)
        nxt = nxt._replace(epoch=nxt.epoch + 1, last_epoch=nxt.epoch)
    return EndTxnOutcome(int(Errors.NONE), transit(nxt, state=int(d.next_state)), True)


def end_txn_tv2(meta: TxnMeta | None, producer_id: int, epoch: int, result: int, *, new_producer_id: int = -1,
                max_epoch: int = 32767) -> EndTxnOutcome:
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

    Epoch overflow (with ``new_producer_id`` given): an EndTxn whose epoch is exhausted
    (``max_epoch - 1``) still bumps to ``max_epoch`` for the PrepareX record and its markers, and
    records ``new_producer_id`` as ``nextProducerId``; the transaction completes onto it at epoch 0
    (``markers.complete_if_done``) and the answer carries it (``answer_after_end_txn``). Without
    ``new_producer_id`` an exhausted epoch simply bumps (the callers' bounds cut those states). Not
    modelled: an EndTxn retry across the rotation, and the snapshot's variations.
    """
    E, S = Errors, TxnState
    if meta is None or not meta.exists or meta.producer_id != producer_id:
        return EndTxnOutcome(int(E.INVALID_PRODUCER_ID_MAPPING), meta, False)  # type: ignore[arg-type]
    if meta.pending_state != NO_PENDING:
        return EndTxnOutcome(int(E.CONCURRENT_TRANSACTIONS), meta, False)
    commit = result == TxnResult.COMMIT
    retry, current = meta.epoch == epoch + 1, meta.epoch == epoch
    st = meta.state
    target = S.PREPARE_COMMIT if commit else S.PREPARE_ABORT

    rotate = new_producer_id >= 0 and meta.epoch >= max_epoch - 1

    def bump(state: int) -> EndTxnOutcome:
        return EndTxnOutcome(int(E.NONE), transit(meta, state=int(state), epoch=meta.epoch + 1, last_epoch=meta.epoch,
                                                  next_producer_id=new_producer_id if rotate else -1), True)

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
            return answer(E.NONE if st == done else E.INVALID_TXN_STATE)
        if current:
            return bump(S.PREPARE_ABORT) if not commit else answer(E.INVALID_TXN_STATE)
        return answer(E.PRODUCER_FENCED)
    if st == S.EMPTY and current:
        return answer(E.INVALID_TXN_STATE) if commit else bump(S.PREPARE_ABORT)
    return answer(E.PRODUCER_FENCED)


def answer_after_end_txn(meta: TxnMeta) -> tuple[int, int]:
    """The producer id and epoch an accepted TV2 EndTxn answers with (EndTxn v5): the bumped pair, or
    the next producer id at epoch 0 when the epoch overflowed."""
    if meta.next_producer_id >= 0:
        return meta.next_producer_id, 0
    return meta.producer_id, meta.epoch
