"""The partition leader's transactional path with sequence numbers (``UnifiedLog.appendAsLeader`` for
a transactional producer): KIP-890 part-1 verification, the idempotent checks (duplicate in the
5-batch cache, epoch, sequence), the transactional checks of ``appendDataBatch``, the append that
opens the producer's transaction on the partition, the COMMIT/ABORT marker append, and the last
stable offset as the producer state table sees it.

The leader's log holds ``transactions.log.LogEntry`` values (data and markers), so the log-reading
rules of ``transactions.log`` (open transactions, LSO, read_committed) apply to it unchanged.
"""

from __future__ import annotations

from typing import NamedTuple

from ..errors import Errors
from ..state import ProduceRequest, ProducerStateEntry, TxnPartitionState
from ..transactions.codes import TxnResult
from ..transactions.log import EntryKind, LogEntry
from ..transactions.markers import TxnMarker
from .producer_state import (
    add_batch,
    begin_transaction,
    empty_entry,
    find_entry,
    is_producer_expired,
    maybe_update_epoch,
    put_entry,
    remove_expired_producers,
)
from .replica import marker_timestamp
from .validation import (
    AppendOrigin,
    append_marker,
    validate_data_batch,
    validate_produce,
)
from .verification import (
    GUARDED,
    SENTINEL,
    STALE,
    clear_verification,
    find_verification,
    marker_keeps_verification,
    missing_guard_error,
    new_producer_refuses,
    remove_expired_verifications,
    start_verification,
    verification_refuses,
)

#: ``handle_txn_produce``'s ``guard`` when verification is atomic with the append (no guard to check), and
#: when the append trusts the verification without a guard (the counterfactual ``verification_guard=False``)
NO_GUARD_CHECK, TRUSTED = -1, -2


class PendingProduce(NamedTuple):
    """A produce request the leader took off its connection and verifies with the transaction coordinator
    (``ReplicaManager.appendRecords`` -> ``AddPartitionsToTxnManager.verifyTransaction``, the append in its
    callback). The socket server reads no further request of the connection until this one is answered."""

    request: ProduceRequest
    #: the produce error the coordinator's answer converts to (``verification.verification_produce_error``;
    #: NONE: append)
    answer: int
    #: the guard the request carries to its append (``verification.SENTINEL`` / ``GUARDED`` / ``STALE``)
    guard: int
    #: with ``verification_answers``: the coordinator epoch of the coordinator the request went to (the
    #: leader's metadata names the coordinator when it starts the verification); 0 otherwise
    sent_to: int = 0
    #: with ``verification_answers``: 1 when the request is a TV2 leader's add (KIP-890 part 2, the
    #: coordinator writes it when it answers), 0 for KIP-890 part 1's verify-only request
    adds: int = 0


#: ``PendingProduce.answer`` while the coordinator has not answered yet (``verification_answers``): no
#: error code (Kafka's are -1..~130)
AWAITED = -100


def clear_guard(partition: TxnPartitionState, producer_id: int) -> TxnPartitionState:
    """``clearVerificationStateEntry``: a transactional batch or a marker of the producer was written, so
    its verification entry goes and the requests holding the entry's guard now hold a stale one."""
    if not partition.verifications and not partition.pending:
        return partition  # the one-step rule keeps neither
    pending = tuple(sorted(p._replace(guard=STALE) if p.guard == GUARDED and p.request.producer_id == producer_id
                           else p for p in partition.pending))
    return partition._replace(verifications=clear_verification(partition.verifications, producer_id), pending=pending)


def clear_guard_after_marker(partition: TxnPartitionState, marker: TxnMarker) -> TxnPartitionState:
    """``clear_guard`` for a written marker, unless the producer's entry is a TV2 client's at the marker's
    epoch (``verification.marker_keeps_verification``, 4.0.0): then the entry and its guards stay."""
    if not partition.verifications and not partition.pending:
        return partition  # the hot path (no leader holds anything without verification_steps): nothing to look up
    if marker_keeps_verification(find_verification(partition.verifications, marker.producer_id),
                                 marker.producer_epoch):
        return partition
    return clear_guard(partition, marker.producer_id)


def expire_producer_state(partition: TxnPartitionState, now: int, expiration: int) -> TxnPartitionState | None:
    """``ProducerStateManager.removeExpiredProducers`` (the leader's periodic check, 3.6.0 to 2024-10 trunk
    alike): producers idle ``expiration`` with no open transaction are forgotten, and so is every
    verification entry started ``expiration`` ago or earlier, whatever its producer does (the entry keeps
    the time it was created; an update does not renew it). A request still holding an expired entry's
    guard now holds a stale one: ``UnifiedLog.verificationGuard`` answers SENTINEL for a producer with no
    entry, which no handed-out guard equals. None when nothing expires."""
    expired = any(is_producer_expired(e, now, expiration) for e in partition.producers)
    entries = remove_expired_verifications(partition.verifications, now, expiration)
    if not expired and len(entries) == len(partition.verifications):
        return None
    out = partition._replace(producers=remove_expired_producers(partition.producers, now, expiration))
    for gone in set(partition.verifications) - set(entries):
        out = clear_guard(out, gone.producer_id)
    return out


def begin_verified_produce(partition: TxnPartitionState, request: ProduceRequest, answer: int | None,
                           now: int, *, sent_to: int = 0, adds: int = 0,
                           supports_epoch_bump: bool = False) -> TxnPartitionState:
    """The leader starts a transactional batch (``maybeStartTransactionVerification``): with the producer's
    transaction ongoing on the partition nothing is verified (``answer`` None: the SENTINEL guard, and the
    append follows in the same request handler, after the log's lock was let go); otherwise the producer's
    verification entry is created or updated (``verification.start_verification``) and ``answer`` is the
    coordinator's, as the produce request will see it, or ``AWAITED`` (``verification_answers``: the
    request went to the coordinator of epoch ``sent_to``, ``adds`` for a TV2 leader's add, and
    ``answer_verification`` fills the answer in later). ``supports_epoch_bump``: a new entry is a TV2 client's
    (``verification.marker_keeps_verification``)."""
    if answer is None:
        item = PendingProduce(request, int(Errors.NONE), SENTINEL)
        return partition._replace(pending=tuple(sorted((*partition.pending, item))))
    entries = start_verification(partition.verifications, request.producer_id, request.seq, request.epoch, now,
                                 supports_epoch_bump=supports_epoch_bump)
    item = PendingProduce(request, answer, GUARDED, sent_to, adds)
    return partition._replace(verifications=entries, pending=tuple(sorted((*partition.pending, item))))


def refuse_before_verification(partition: TxnPartitionState, request: ProduceRequest,
                               error: int) -> TxnPartitionState:
    """The leader's check of the producer's state failed before any verification started
    (``maybeStartTransactionVerificationForPartition``'s ``Left(error)``, KAFKA-18575's
    CONCURRENT_TRANSACTIONS): no verification entry, nothing sent to the coordinator; the request waits
    for its callback with ``error`` (as converted for the produce answer) and appends nothing."""
    item = PendingProduce(request, error, SENTINEL)
    return partition._replace(pending=tuple(sorted((*partition.pending, item))))


def answer_verification(partition: TxnPartitionState, item: PendingProduce, answer: int) -> TxnPartitionState:
    """The coordinator's answer reaches the leader (``AddPartitionsToTxnHandler.onComplete``, the callback
    scheduled on a request handler thread): the held request ``item`` now carries the produce error its
    answer converts to; the guard and the verification entry stay as they are now (a marker since the start
    made the guard stale whatever the coordinator answers)."""
    assert item.answer == AWAITED
    pending = tuple(sorted(p._replace(answer=answer) if p == item else p for p in partition.pending))
    return partition._replace(pending=pending)


def finish_verified_produce(partition: TxnPartitionState, item: PendingProduce, *, value: int, max_seq: int,
                            cache_size: int, unknown_producer: str, old_duplicate_error: bool,
                            stale_epoch_first: bool, check_guard: bool = True,
                            ongoing_at_epoch: bool = False, concurrent_below_epoch: bool = False,
                            new_producer_seq_zero: bool = False) -> TxnProduceOutcome:
    """The verification's callback (``appendEntries``): a failed verification is answered with its error
    and leaves the verification entry; otherwise the batch is appended with its guard
    (``handle_txn_produce``; ``check_guard=False``: the counterfactual append that trusts any guard)."""
    assert item.answer != AWAITED, "the coordinator has not answered this request yet"
    rest = partition._replace(pending=tuple(p for p in partition.pending if p != item))
    req = item.request
    return handle_txn_produce(rest, producer_id=req.producer_id, epoch=req.epoch, seq=req.seq, value=value,
                              timestamp=req.created, max_seq=max_seq, cache_size=cache_size,
                              unknown_producer=unknown_producer, old_duplicate_error=old_duplicate_error,
                              verification_error=item.answer, guard=item.guard if check_guard else TRUSTED,
                              stale_epoch_first=stale_epoch_first, ongoing_at_epoch=ongoing_at_epoch,
                              concurrent_below_epoch=concurrent_below_epoch, new_producer_seq_zero=new_producer_seq_zero)


def needs_verification(partition: TxnPartitionState, producer_id: int, at_epoch: int | None = None) -> bool:
    """KIP-890 part 1: a transactional batch is verified with the coordinator unless the producer
    already has a transaction open on the partition (``VerificationGuard``): at any epoch (3.6-3.9's
    ``hasOngoingTransaction(producerId)``) or, given ``at_epoch``, at that epoch (4.0.0+, KAFKA-14563's
    ``hasOngoingTransaction(producerId, producerEpoch)``)."""
    entry = find_entry(partition.producers, producer_id)
    return entry is None or entry.current_txn_first_offset < 0 or (at_epoch is not None and entry.epoch != at_epoch)


class TxnProduceOutcome(NamedTuple):
    error: int
    #: the batch's offset (a duplicate's original offset), -1 when refused
    offset: int
    partition: TxnPartitionState


def handle_txn_produce(partition: TxnPartitionState, *, producer_id: int, epoch: int, seq: int, value: int,
                       timestamp: int, max_seq: int, cache_size: int, unknown_producer: str,
                       old_duplicate_error: bool, verification_error: int = Errors.NONE,
                       guard: int = NO_GUARD_CHECK, stale_epoch_first: bool = False,
                       ongoing_at_epoch: bool = False, concurrent_below_epoch: bool = False,
                       new_producer_seq_zero: bool = False, tv2_verified: bool = False) -> TxnProduceOutcome:
    """One transactional batch from a client. ``verification_error`` is the coordinator's answer to
    the leader's verification (NONE when it was not asked); verification runs before the append
    and, with ``guard`` = NO_GUARD_CHECK, is atomic with it, so it is checked first. Otherwise
    (``verification_steps``: ``finish_verified_produce``) the batch carries the guard it was handed
    (``verification.SENTINEL`` / ``GUARDED`` / ``STALE``), checked after the duplicate check
    (``verification.missing_guard_error``; ``stale_epoch_first``: KAFKA-19690), and the producer's
    verification entry bounds its first sequence (``ProducerAppendInfo.checkSequence``). The guard is
    not asked for while the producer has a transaction ongoing on the partition: at any epoch (3.6-3.9's
    ``hasOngoingTransaction(producerId)``), or with ``ongoing_at_epoch`` at the batch's epoch (4.0's
    ``hasOngoingTransaction(producerId, producerEpoch)``, since KAFKA-14563's commit of December 2024), and
    with ``concurrent_below_epoch`` that check refuses a batch above the epoch of the producer's open
    transaction with CONCURRENT_TRANSACTIONS (KAFKA-18575's ConcurrentTransactionsException, January 22 -
    February 3, 2025). With ``new_producer_seq_zero`` (KAFKA-18202, 4.1.0) a batch appended under a TV2 client's
    verification entry (the guarded path: the producer's entry has ``supports_epoch_bump``; the one-step rule:
    ``tv2_verified``, the batch was verified and its entry was created with the flag) must start at sequence 0
    when the producer has no cached batch (``new_producer_refuses``)."""
    if verification_error != Errors.NONE:
        return TxnProduceOutcome(int(verification_error), -1, partition)
    entry = find_entry(partition.producers, producer_id)
    decision = validate_produce(entry, epoch=epoch, seq=seq, max_seq=max_seq, unknown_producer=unknown_producer,
                                old_duplicate_error=old_duplicate_error)
    if guard != NO_GUARD_CHECK and decision.duplicate_offset < 0:
        if concurrent_below_epoch and open_below(entry, epoch):
            return TxnProduceOutcome(int(Errors.CONCURRENT_TRANSACTIONS), -1, partition)
        error = missing_guard_error(None if entry is None else entry.epoch, epoch,
                                    ongoing=entry is not None and entry.current_txn_first_offset >= 0 and (
                                        not ongoing_at_epoch or entry.epoch == epoch),
                                    guarded=guard in (GUARDED, TRUSTED), stale_epoch_first=stale_epoch_first)
        if error == Errors.NONE and decision.error != Errors.INVALID_PRODUCER_EPOCH:
            # ProducerAppendInfo.checkSequence, after checkProducerEpoch: KAFKA-18202's test, then the entry's
            # lowest sequence (both answer OUT_OF_ORDER_SEQUENCE_NUMBER)
            verification = find_verification(partition.verifications, producer_id)
            if (new_producer_seq_zero and verification is not None and verification.supports_epoch_bump
                    and new_producer_refuses(entry, seq)) or verification_refuses(verification, seq):
                error = int(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER)
        if error != Errors.NONE:
            return TxnProduceOutcome(error, -1, partition)
    elif (new_producer_seq_zero and tv2_verified and decision.duplicate_offset < 0
          and decision.error != Errors.INVALID_PRODUCER_EPOCH and new_producer_refuses(entry, seq)):
        # the one-step rule: the entry the verification created is there at the append (its lowest sequence is
        # the batch's own, so only KAFKA-18202's test can refuse)
        return TxnProduceOutcome(int(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), -1, partition)
    if decision.error != Errors.NONE or not decision.append:
        return TxnProduceOutcome(int(decision.error), decision.duplicate_offset, partition)
    error = validate_data_batch(entry if entry is not None else empty_entry(producer_id), epoch=epoch,
                                transactional=True, origin=AppendOrigin.CLIENT)
    if error != Errors.NONE:
        return TxnProduceOutcome(error, -1, partition)
    offset = len(partition.log)
    updated = begin_transaction(add_batch(entry, producer_id, epoch, seq, offset, timestamp, cache_size), offset)
    log = partition.log + (LogEntry(producer_id, epoch, int(EntryKind.TXN_DATA), value),)
    written = partition._replace(log=log, producers=put_entry(partition.producers, updated))
    return TxnProduceOutcome(int(Errors.NONE), offset, clear_guard(written, producer_id))


def append_coordinator_batch(partition: TxnPartitionState, *, producer_id: int, epoch: int, value: int,
                             verification_error: int = Errors.NONE) -> TxnProduceOutcome:
    """A transactional batch the group coordinator writes for a producer (TxnOffsetCommit, origin
    COORDINATOR: no sequence checks): the epoch check of ``appendDataBatch``, then the append that
    opens the producer's transaction on the partition."""
    if verification_error != Errors.NONE:
        return TxnProduceOutcome(int(verification_error), -1, partition)
    entry = find_entry(partition.producers, producer_id) or empty_entry(producer_id)
    error = validate_data_batch(entry, epoch=epoch, transactional=True, origin=AppendOrigin.COORDINATOR)
    if error != Errors.NONE:
        return TxnProduceOutcome(error, -1, partition)
    offset = len(partition.log)
    updated = begin_transaction(maybe_update_epoch(entry, epoch), offset)
    log = partition.log + (LogEntry(producer_id, epoch, int(EntryKind.TXN_DATA), value),)
    written = partition._replace(log=log, producers=put_entry(partition.producers, updated))
    return TxnProduceOutcome(int(Errors.NONE), offset, clear_guard(written, producer_id))


def open_below(entry: ProducerStateEntry | None, epoch: int) -> bool:
    """The producer has a transaction open on the partition at an epoch below ``epoch``: KAFKA-18575's
    ``hasOngoingTransaction`` throws ConcurrentTransactionsException then (``tv2_leader_concurrent_below_epoch``):
    with TV2 the previous transaction is likely still completing."""
    return entry is not None and entry.current_txn_first_offset >= 0 and entry.epoch < epoch


def tv2_marker_refused(entry: ProducerStateEntry, marker: TxnMarker, check: str) -> bool:
    """The transaction-version-2 epoch check of a marker (``Protocol.tv2_marker_epoch_check``): ``strict``
    (KAFKA-19446) refuses a marker not above the stored epoch, as the previous transaction's; ``strict-retry``
    (KAFKA-19999) lets one at the stored epoch through when the producer has no open transaction (the
    coordinator's retry of a marker already written); ``lenient`` leaves the check to ``append_marker``."""
    if check == "lenient" or entry.epoch < 0 or marker.producer_epoch > entry.epoch:
        return False
    retry = marker.producer_epoch == entry.epoch and entry.current_txn_first_offset < 0
    return not (check == "strict-retry" and retry)


def write_marker(partition: TxnPartitionState, marker: TxnMarker, *, timestamp: int,
                 check_coordinator_epoch: bool, sets_timestamp: bool = True,
                 tv2_epoch_check: str = "lenient") -> tuple[int, TxnPartitionState]:
    """WriteTxnMarkers on the leader: ``append_marker``'s checks on the producer's entry (a fresh one
    if the producer has no state, as ``appendEndTxnMarker`` creates it), then the control batch.
    ``sets_timestamp=False`` is the entry's lastTimestamp before KAFKA-9144 (``replica.marker_timestamp``);
    ``tv2_epoch_check`` the transaction-version-2 epoch check (``tv2_marker_refused``). The producer's
    verification entry goes with the marker (``clear_guard``) unless it is a TV2 client's at the marker's
    epoch (``verification.marker_keeps_verification``, 4.0.0); entries only carry that flag where
    ``Protocol.tv2_marker_keeps_verification`` sets it."""
    found = find_entry(partition.producers, marker.producer_id)
    entry: ProducerStateEntry = found or empty_entry(marker.producer_id)
    if tv2_marker_refused(entry, marker, tv2_epoch_check):
        return int(Errors.INVALID_PRODUCER_EPOCH), partition
    decision = append_marker(entry, marker, timestamp=timestamp, check_coordinator_epoch=check_coordinator_epoch)
    if decision.error != Errors.NONE:
        return decision.error, partition
    decision = decision._replace(entry=marker_timestamp(found, decision.entry, sets_timestamp))
    kind = EntryKind.COMMIT if marker.result == TxnResult.COMMIT else EntryKind.ABORT
    control = LogEntry(marker.producer_id, marker.producer_epoch, int(kind), marker.coordinator_epoch)
    log = partition.log + (control,)
    written = partition._replace(log=log, producers=put_entry(partition.producers, decision.entry))
    return int(Errors.NONE), clear_guard_after_marker(written, marker)


def producer_state_lso(partition: TxnPartitionState) -> int:
    """The last stable offset as the leader computes it: the first offset of the earliest transaction
    its producer state table holds open (``ongoingTxns``), or the log end."""
    firsts = [e.current_txn_first_offset for e in partition.producers if e.current_txn_first_offset >= 0]
    return min(firsts, default=len(partition.log))
