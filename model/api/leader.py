"""A partition leader, one function per request or event: a produce batch (``UnifiedLog.append`` ->
``analyzeAndValidateProducerState`` -> ``ProducerAppendInfo``), a transaction marker, the periodic
producer-id expiry, the start of a KIP-890 verification.

The rules are the machines': ``partition.validation.validate_produce`` (duplicate, unknown
producer, epoch and sequence checks; a batch of several records is the sequence range
``base_sequence .. last_sequence``), ``validate_data_batch`` (epoch for every origin, the
transactional mix), ``append_marker``, ``producer_state`` (the cache of the last 5 batches, expiry).
"""

from __future__ import annotations

from typing import NamedTuple

from ..errors import Errors
from ..partition import log_cleaner as cleaner
from ..partition.late_transactions import has_late_transaction as _has_late_transaction
from ..partition.produce_request import (
    ProducePidCheck,
    Replica,
    partition_error,
    several_producers,
    started_before_check,
)
from ..partition.producer_state import (
    add_batch,
    begin_transaction,
    empty_entry,
    find_entry,
    is_producer_expired,
    put_entry,
    truncate_head,
)
from ..partition.producer_state import remove_expired_producers as _remove_expired
from ..partition.replica import marker_timestamp
from ..partition.stable_read import AbortedTxn, aborted_in_range, last_stable_offset
from ..partition.txn_produce import tv2_marker_refused
from ..partition.validation import AppendOrigin, validate_data_batch, validate_produce
from ..partition.validation import append_marker as _append_marker
from ..partition.verification import (
    Verifications,
    clear_verification,
    find_verification,
    marker_keeps_verification,
    missing_guard_error,
    new_producer_refuses,
    produce_verification_error,
    remove_expired_verifications,
    verification_refuses,
)
from ..partition.verification import start_verification as _start_verification
from ..state import ProducerStateEntry
from ..transactions.markers import TxnMarker
from .protocol import Protocol

APPENDED, REJECTED, DUPLICATE = "APPENDED", "REJECTED", "DUPLICATE"


class LeaderState(NamedTuple):
    producers: tuple[ProducerStateEntry, ...]
    log_end_offset: int
    now: int = 0
    verifications: Verifications = ()
    #: ``transaction.partition.verification.enable`` (KIP-890 part 1): a transactional batch of a
    #: producer with no transaction ongoing here must carry the guard of a verification
    verification_enabled: bool = False


class ProduceBatch(NamedTuple):
    producer_id: int
    epoch: int
    base_sequence: int
    last_sequence: int
    origin: int = AppendOrigin.CLIENT
    transactional: bool = False
    #: the offset the batch is written at (-1: the leader assigns the log end offset)
    first_offset: int = -1
    #: the batch's max timestamp (-1: now)
    timestamp: int = -1
    #: the request carries the guard of the producer's current verification entry (False: the
    #: SENTINEL guard; only read while verification is enabled)
    verified: bool = False
    #: records in a batch without a producer id (0: one per sequence)
    records: int = 0


class ProduceResult(NamedTuple):
    result: str  # APPENDED / REJECTED / DUPLICATE
    error: int
    first_offset: int = -1
    last_offset: int = -1


def _count(batch: ProduceBatch, max_seq: int) -> int:
    return (batch.last_sequence - batch.base_sequence) % (max_seq + 1) + 1


def append_batch(state: LeaderState, batch: ProduceBatch, protocol: Protocol, *,
                 check_duplicates: bool = True) -> tuple[ProduceResult, LeaderState]:
    """A produce batch through ``UnifiedLog`` (``check_duplicates=False``: through
    ``ProducerAppendInfo`` alone, as ProducerStateManagerTest drives it: no duplicate pre-check and
    no clearing of the verification entry, which ``UnifiedLog.updateProducers`` does)."""
    if batch.producer_id < 0:
        # no producer id: nothing to validate or track (``analyzeAndValidateProducerState`` skips it)
        first = state.log_end_offset
        last = first + max(batch.records, 1) - 1
        return ProduceResult(APPENDED, int(Errors.NONE), first, last), state._replace(log_end_offset=last + 1)
    entry = find_entry(state.producers, batch.producer_id)
    verification = find_verification(state.verifications, batch.producer_id)
    if batch.origin == AppendOrigin.CLIENT:
        d = validate_produce(entry, epoch=batch.epoch, seq=batch.base_sequence, last_seq=batch.last_sequence,
                             max_seq=protocol.max_seq, unknown_producer=protocol.broker_unknown_producer,
                             old_duplicate_error=protocol.broker_duplicate_sequence_error,
                             check_duplicates=check_duplicates)
        if d.duplicate_offset >= 0:
            cached = next(b for b in entry.batches if b.offset == d.duplicate_offset)  # type: ignore[union-attr]
            return ProduceResult(DUPLICATE, int(Errors.NONE), cached.offset - cached.delta, cached.offset), state
    if (check_duplicates and state.verification_enabled and batch.transactional
            and batch.origin != AppendOrigin.REPLICATION):
        # a transactional batch outside an ongoing transaction must carry the guard of a verification;
        # since KAFKA-19690 a batch of an epoch the entry has moved past is told so first (the marker of a
        # timeout abort landed after the leader skipped verification): kafka.eos's rule too
        guard_error = missing_guard_error(None if entry is None else entry.epoch, batch.epoch,
                                          ongoing=entry is not None and entry.current_txn_first_offset >= 0,
                                          guarded=verification is not None and batch.verified,
                                          stale_epoch_first=protocol.eos.stale_epoch_before_verification)
        if guard_error != Errors.NONE:
            return ProduceResult(REJECTED, guard_error), state
    if batch.origin == AppendOrigin.CLIENT:
        # ProducerAppendInfo: the epoch check, then checkSequence, whose first test is the
        # verification entry's lowest sequence
        if d.error != Errors.INVALID_PRODUCER_EPOCH and (
                verification_refuses(verification, batch.base_sequence)
                or (protocol.eos.tv2_new_producer_sequence_zero and verification is not None and verification.supports_epoch_bump
                    and d.duplicate_offset < 0 and new_producer_refuses(entry, batch.base_sequence))):
            # KAFKA-18202 (4.1.0) comes first in checkSequence; both answer OUT_OF_ORDER_SEQUENCE_NUMBER
            return ProduceResult(REJECTED, int(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER)), state
        if d.error != Errors.NONE:
            return ProduceResult(REJECTED, int(d.error)), state
    err = validate_data_batch(entry or empty_entry(batch.producer_id), epoch=batch.epoch,
                              transactional=batch.transactional, origin=AppendOrigin(batch.origin))
    if err != Errors.NONE:
        return ProduceResult(REJECTED, err), state
    first = batch.first_offset if batch.first_offset >= 0 else state.log_end_offset
    last = first + _count(batch, protocol.max_seq) - 1
    ts = batch.timestamp if batch.timestamp >= 0 else state.now
    new = add_batch(entry, batch.producer_id, batch.epoch, batch.last_sequence, last, ts, protocol.broker_batch_cache)
    delta = last - first
    if delta:
        new = new._replace(batches=new.batches[:-1] + (new.batches[-1]._replace(delta=delta),))
    verifications = state.verifications
    if batch.transactional:
        new = begin_transaction(new, first)
        if check_duplicates:
            verifications = clear_verification(verifications, batch.producer_id)
    return ProduceResult(APPENDED, int(Errors.NONE), first, last), state._replace(
        producers=put_entry(state.producers, new), log_end_offset=max(state.log_end_offset, last + 1),
        verifications=verifications)


class MarkerRequest(NamedTuple):
    producer_id: int
    epoch: int
    result: int  # TxnResult
    coordinator_epoch: int
    #: the offset the control batch is written at (-1: the log end offset)
    offset: int = -1


def append_marker(state: LeaderState, marker: MarkerRequest, protocol: Protocol, *,
                  origin: int = AppendOrigin.COORDINATOR, unified_log: bool = True,
                  transaction_version: int = 0) -> tuple[ProduceResult, LeaderState]:
    """WriteTxnMarkers on this partition (origin COORDINATOR; REPLICATION skips the checks); through
    ``UnifiedLog`` (``unified_log``) the marker also clears the producer's verification entry.
    ``transaction_version`` is the marker's (WriteTxnMarkers v2); only kafka.eos's ``tv2_marker_epoch_check`` other than
    lenient (``protocol.eos``) reads it."""
    entry = find_entry(state.producers, marker.producer_id) or empty_entry(marker.producer_id)
    offset = marker.offset if marker.offset >= 0 else state.log_end_offset
    mk = TxnMarker(0, marker.producer_id, marker.epoch, marker.result, marker.coordinator_epoch)
    if transaction_version >= 2 and origin != AppendOrigin.REPLICATION and \
            tv2_marker_refused(entry, mk, protocol.eos.tv2_marker_epoch_check.value):
        # KAFKA-19446 / KAFKA-19999 (4.2.0-rc1 ProducerAppendInfo.checkProducerEpoch): a TV2 marker must be above the
        # producer's epoch, or at it with no transaction open
        return ProduceResult(REJECTED, int(Errors.INVALID_PRODUCER_EPOCH)), state
    if origin == AppendOrigin.REPLICATION:
        # a follower applies the marker without the epoch and coordinator-epoch checks
        d = _append_marker(entry._replace(epoch=min(entry.epoch, marker.epoch)), mk, timestamp=state.now,
                           check_coordinator_epoch=False)
    else:
        d = _append_marker(entry, mk, timestamp=state.now)
    if d.error != Errors.NONE:
        return ProduceResult(REJECTED, int(d.error)), state
    if not protocol.marker_sets_producer_timestamp:
        # before KAFKA-9144 (2.4.1 / 2.5.0) a marker left lastTimestamp at the last cached data batch's
        d = d._replace(entry=marker_timestamp(find_entry(state.producers, marker.producer_id), d.entry, False))
    pending = next((v for v in state.verifications if v.producer_id == marker.producer_id), None)
    if not unified_log or (protocol.eos.tv2_marker_keeps_verification and marker_keeps_verification(pending, marker.epoch)):
        # KAFKA-18654 [1/2] (4.0.0): a TV2 client's entry at the marker's epoch is the next transaction's
        verifications = state.verifications
    else:
        verifications = clear_verification(state.verifications, marker.producer_id)
    return ProduceResult(APPENDED, int(Errors.NONE), offset, offset), state._replace(
        producers=put_entry(state.producers, d.entry), log_end_offset=max(state.log_end_offset, offset + 1),
        verifications=verifications)


def batch_last_offset(batch: ProduceBatch, first_offset: int) -> int:
    """The last offset of ``batch`` written at ``first_offset``: one record per sequence, or its
    ``records`` when it has no producer id."""
    if batch.producer_id < 0 or batch.base_sequence < 0:
        return first_offset + max(batch.records, 1) - 1
    return first_offset + (batch.last_sequence - batch.base_sequence) % 2**31


def offsets_monotonic(batches: tuple[ProduceBatch, ...]) -> bool:
    """``UnifiedLog.analyzeAndValidateRecords``: the batches of one append with offsets given (a
    follower's) must have increasing last offsets; ``appendAsFollower`` throws
    ``OffsetsOutOfOrderException`` otherwise (before any producer state is touched)."""
    last = -1
    for b in batches:
        end = batch_last_offset(b, b.first_offset)
        if b.first_offset >= 0 and end <= last:
            return False
        last = max(last, end)
    return True


def append_empty_control_batch(state: LeaderState, producer_id: int, offset: int) -> tuple[ProduceResult, LeaderState]:
    """A control batch with no records (its transaction was cleaned away by compaction):
    ``ProducerAppendInfo.append`` returns without a marker, and the manager's update stores the
    producer's entry unchanged (an empty one if it had none): no transaction starts or ends."""
    entry = find_entry(state.producers, producer_id) or empty_entry(producer_id)
    at = offset if offset >= 0 else state.log_end_offset
    return ProduceResult(APPENDED, int(Errors.NONE), at, at), state._replace(
        producers=put_entry(state.producers, entry), log_end_offset=max(state.log_end_offset, at + 1))


def remove_expired_producers(state: LeaderState, expiration_ms: int) -> LeaderState:
    """``ProducerStateManager.removeExpiredProducers``: producers idle ``expiration_ms`` with no open
    transaction, and verification entries as old."""
    return state._replace(producers=_remove_expired(state.producers, state.now, expiration_ms),
                          verifications=remove_expired_verifications(state.verifications, state.now, expiration_ms))


def move_log_start_offset(state: LeaderState, log_start_offset: int, protocol: Protocol) -> LeaderState:
    """Retention or DeleteRecords moves the log start offset: since KAFKA-7190 (2.4.0) the producer
    state stays (``onLogStartOffsetIncremented``); before, producers whose last batch is below the
    new log start offset are evicted (``truncateHead``)."""
    if protocol.broker_retain_producer_state:
        return state
    return state._replace(producers=truncate_head(state.producers, log_start_offset))


def has_late_transaction(state: LeaderState, now_ms: int, max_txn_timeout_ms: int) -> bool:
    """``ProducerStateManager.hasLateTransaction(now)`` (KIP-664, KAFKA-13221, 3.2.0+): the oldest ongoing transaction's
    producer wrote nothing for more than ``max_txn_timeout_ms`` plus 5 minutes."""
    return _has_late_transaction(state.producers, now_ms, max_txn_timeout_ms)


def first_undecided_offset(state: LeaderState) -> int:
    """``ProducerStateManager.firstUndecidedOffset``: the first offset of the earliest transaction
    still open on the partition (-1: none)."""
    return min((e.current_txn_first_offset for e in state.producers if e.current_txn_first_offset >= 0), default=-1)


class VerifiedAppend(NamedTuple):
    #: the append's answer (None while the batch waits for the coordinator's)
    result: ProduceResult | None
    #: the batch waits for the coordinator's answer (``complete_verified_append``)
    pending: bool


def start_replica_append(state: LeaderState, batch: ProduceBatch, protocol: Protocol, *,
                         transactional_id: bool) -> tuple[VerifiedAppend, LeaderState]:
    """``ReplicaManager.appendRecords`` for one partition: a transactional batch of a request with a
    transactional id is verified with the coordinator first while verification is enabled, unless the
    producer has a transaction ongoing here (``maybeStartTransactionVerification`` answers the
    SENTINEL guard); otherwise it is appended at once."""
    if transactional_id and batch.transactional and state.verification_enabled:
        if stale_at_verification(state, batch.producer_id, batch.epoch, protocol):
            return VerifiedAppend(ProduceResult(REJECTED, int(Errors.INVALID_PRODUCER_EPOCH)), False), state
        entry = find_entry(state.producers, batch.producer_id)
        if entry is None or entry.current_txn_first_offset < 0:
            return VerifiedAppend(None, True), start_verification(state, batch.producer_id, batch.base_sequence,
                                                                  batch.epoch)
    res, state = append_batch(state, batch, protocol)
    return VerifiedAppend(res, False), state


def complete_verified_append(state: LeaderState, batch: ProduceBatch, protocol: Protocol,
                             callback_error: int) -> tuple[ProduceResult, LeaderState]:
    """The verification's answer for the partition (``postVerificationCallback``): a failure answers
    ``produce_verification_error`` and leaves the entry (its lowest sequence still bounds the
    producer's next batch); success appends the batch with the guard."""
    if callback_error != Errors.NONE:
        return ProduceResult(REJECTED, produce_verification_error(callback_error)), state
    return append_batch(state, batch._replace(verified=True), protocol)


def lookup_error(replica: Replica, in_metadata_cache: bool, *, needs_leader: bool = True) -> int:
    """``ReplicaManager.getPartitionOrException`` for a partition this broker holds as ``replica``: the produce path
    and the start of a verification need the leader (``partition.produce_request.partition_error``)."""
    return int(partition_error(replica, in_metadata_cache, needs_leader=needs_leader))


class PidCheck(NamedTuple):
    #: ReplicaManager throws InvalidPidMappingException before AddPartitionsToTxnManager is asked
    refused: bool
    #: the modelled partition's verification was started before the check threw (3.6.0 .. 3.7.x)
    started_first: bool


def produce_request_pid_check(batches: tuple[ProduceBatch, ...], rule: ProducePidCheck, *,
                              verifying: bool) -> PidCheck:
    """The several-producer check of a produce request over every partition's batches (the transactional ones with
    a producer id count): ``partition.produce_request.several_producers`` under the profile's rule."""
    pairs = [(b.producer_id, b.epoch) for b in batches if b.transactional and b.producer_id >= 0]
    refused = several_producers(pairs, rule, verifying=verifying)
    return PidCheck(refused, refused and verifying and started_before_check(rule))


class ReadCommitted(NamedTuple):
    last_stable_offset: int
    #: (first offset, last offset, records) of each batch returned, control batches included
    batches: tuple[tuple[int, int, int], ...]
    aborted: tuple[AbortedTxn, ...]


def read_committed(log: tuple[ProduceBatch | MarkerRequest, ...], fetch_offset: int, log_end_offset: int,
                   first_unstable: int | None, high_watermark: int, aborted_index: tuple[AbortedTxn, ...]
                   ) -> ReadCommitted:
    """A read_committed consumer's fetch from ``fetch_offset`` (``ReplicaManager.readFromLog`` ->
    ``UnifiedLog.read(TXN_COMMITTED)``): the whole batches from the fetch offset below the last stable offset, with
    the aborted transactions overlapping [fetch offset, log end offset) (``partition.stable_read``); at or past the
    last stable offset nothing is read and the aborted list is empty (``emptyFetchDataInfo``). The fetch's max bytes
    are taken to hold every batch (the offset index has no entry inside so small a segment)."""
    lso = last_stable_offset(first_unstable, high_watermark)
    if fetch_offset >= lso:
        return ReadCommitted(lso, (), ())
    batches = []
    for x in log:
        first = x.offset if isinstance(x, MarkerRequest) else x.first_offset
        last = first if isinstance(x, MarkerRequest) else batch_last_offset(x, first)
        if fetch_offset <= first < lso:
            batches.append((first, last, last - first + 1))
    return ReadCommitted(lso, tuple(batches), aborted_in_range(aborted_index, fetch_offset, log_end_offset))


def start_verification(state: LeaderState, producer_id: int, seq: int, epoch: int, *,
                       supports_epoch_bump: bool = False) -> LeaderState:
    """``UnifiedLog.maybeStartTransactionVerification``: nothing to verify (the SENTINEL guard) while
    the producer has a transaction ongoing on this partition; otherwise the entry is created or updated
    (``supports_epoch_bump``: the request is a TV2 client's, which a new entry records). The caller asks
    ``stale_at_verification`` first (KAFKA-18042)."""
    entry = find_entry(state.producers, producer_id)
    if entry is not None and entry.current_txn_first_offset >= 0:
        return state
    return state._replace(verifications=_start_verification(state.verifications, producer_id, seq, epoch, state.now,
                                                            supports_epoch_bump=supports_epoch_bump))


def stale_at_verification(state: LeaderState, producer_id: int, epoch: int, protocol: Protocol) -> bool:
    """KAFKA-18042 (kafka.eos's ``verification_rejects_lower_epoch``, 4.1.0): ``maybeStartTransactionVerification`` throws
    InvalidProducerEpochException for an epoch below the producer's entry, before anything else."""
    entry = find_entry(state.producers, producer_id)
    return protocol.eos.verification_rejects_lower_epoch and entry is not None and epoch < entry.epoch


#: producer-state snapshots by offset (``ProducerStateManager``'s snapshot files)
Snapshots = tuple[tuple[int, tuple[ProducerStateEntry, ...]], ...]


def take_snapshot(state: LeaderState, snapshots: Snapshots) -> Snapshots:
    """``takeSnapshot`` at the map end offset: each producer with its last cached batch only
    (``writeSnapshot`` persists one ``BatchMetadata``), its epoch, coordinator epoch, timestamp and
    open transaction (``partition.replica.snapshot_at`` keeps the same)."""
    taken = tuple(e._replace(batches=e.batches[-1:]) for e in state.producers)
    return tuple(sorted({**dict(snapshots), state.log_end_offset: taken}.items()))


def truncate_and_reload(state: LeaderState, snapshots: Snapshots, log_start: int, log_end: int, now: int,
                        expiration_ms: int, protocol: Protocol,
                        unreadable: frozenset[int] = frozenset()) -> tuple[LeaderState, Snapshots]:
    """``truncateAndReload``: snapshots above the new log end or at or below the log start are deleted;
    if the map end offset moves, the table is rebuilt from the latest snapshot left (its producers not
    expired at ``now``; none: empty, the map end at the log start), else only the log start moves
    (``move_log_start_offset``: before KAFKA-7190 that evicts producers below it). A snapshot in
    ``unreadable`` (a file that fails to parse) is deleted when the load reaches it and the next older one
    is tried (``loadFromSnapshot``'s CorruptSnapshotException loop, read at 1eb7644 and 4.2.0-rc1), so a
    damaged latest snapshot costs the producer state written after the one before it, never the load."""
    kept = tuple((o, p) for o, p in snapshots if log_start < o <= log_end)
    if log_end == state.log_end_offset:
        return move_log_start_offset(state, log_start, protocol), kept
    while kept and kept[-1][0] in unreadable:
        kept = kept[:-1]
    if kept:
        offset, producers = kept[-1]
        loaded = tuple(e for e in producers if not is_producer_expired(e, now, expiration_ms))
        return state._replace(producers=loaded, log_end_offset=offset), kept
    return state._replace(producers=(), log_end_offset=log_start), kept


def clean_log(batches: tuple[cleaner.LogBatch, ...], aborted: tuple[cleaner.IndexedAbort, ...], state: LeaderState,
              cleaning: cleaner.CleanPass) -> cleaner.Cleaned:
    """One log-cleaner pass over a compacted partition (``LogCleaner.Cleaner.doClean`` / ``cleanSegments``): the
    producers' last records come from the leader's producer state (``lastRecordsOfActiveProducers``). The rules are
    KAFKA-8335's and KIP-534's (``FEATURE_SINCE['kafka-8335']``, ``['kafka-8522']``); ``Cleaned.horizon_consulted``
    says whether the answer hung on a delete horizon, which an earlier release took from segment times."""
    last = {e.producer_id: cleaner.LastRecord(e.batches[-1].offset if e.batches else -1, e.epoch)
            for e in state.producers}
    return cleaner.clean(batches, aborted, last, cleaning)
