"""KIP-890 part 1 verification state at the partition leader (``VerificationStateEntry``).

Before a transactional batch of a producer without an open transaction on the partition is
appended, the leader asks the coordinator whether the partition is in the transaction and keeps a
verification entry: the lowest sequence it saw and the epoch. ``ProducerAppendInfo.checkSequence``
then refuses a first sequence above that lowest one (OUT_OF_ORDER_SEQUENCE_NUMBER), so a batch
cannot slip in ahead of an earlier one that is still being verified. Entries older than
``producer.id.expiration.ms`` are dropped with the expired producers.
"""

from __future__ import annotations

from typing import NamedTuple

from ..errors import Errors
from ..state import ProducerStateEntry


class VerificationEntry(NamedTuple):
    producer_id: int
    lowest_sequence: int
    epoch: int
    created: int  # the time the verification started
    #: the request that created the entry was a TV2 client's, whose leader adds the partition
    #: (``VerificationStateEntry.supportsEpochBump``, 4.0.0, KAFKA-18654): set once, at creation
    supports_epoch_bump: bool = False


Verifications = tuple[VerificationEntry, ...]


def find_verification(entries: Verifications, producer_id: int) -> VerificationEntry | None:
    return next((v for v in entries if v.producer_id == producer_id), None)


def start_verification(entries: Verifications, producer_id: int, seq: int, epoch: int, now: int, *,
                       supports_epoch_bump: bool = False) -> Verifications:
    """``maybeCreateVerificationStateEntry``: a new entry, or the existing one updated
    (``maybeUpdateLowestSequenceAndEpoch``): a higher epoch replaces both epoch and sequence (the
    producer restarted its sequences), the same epoch keeps the lowest sequence, an older epoch
    changes nothing (a zombie must not lower the bound the current producer is checked against).
    ``supports_epoch_bump`` is taken only by a new entry (4.0.0's ``computeIfAbsent``: an update keeps
    the flag the entry was created with)."""
    old = find_verification(entries, producer_id)
    if old is None:
        entry = VerificationEntry(producer_id, seq, epoch, now, supports_epoch_bump)
    elif epoch > old.epoch:
        entry = old._replace(lowest_sequence=seq, epoch=epoch)
    elif epoch == old.epoch:
        entry = old._replace(lowest_sequence=min(old.lowest_sequence, seq))
    else:
        entry = old
    return tuple(sorted([v for v in entries if v.producer_id != producer_id] + [entry]))


def clear_verification(entries: Verifications, producer_id: int) -> Verifications:
    """``clearVerificationStateEntry``: a transactional batch or marker was written for the producer
    (``UnifiedLog.updateProducers``), so the transaction is either ongoing or complete."""
    return tuple(v for v in entries if v.producer_id != producer_id)


def marker_keeps_verification(entry: VerificationEntry | None, marker_epoch: int) -> bool:
    """4.0.0's exception to ``clear_verification`` for a control marker (``UnifiedLog.updateProducers``'s
    ``isV2NextTransactionStarted``, KAFKA-18654 [1/2], PR 18720): the entry was created for a TV2 client
    (``supports_epoch_bump``) at the marker's epoch. A TV2 marker carries the epoch its EndTxn bumped to, the
    epoch the client's next transaction runs at, so such an entry is that next transaction's verification,
    started on a leader that still had the previous transaction open; clearing it would leave the batch's
    guard matching no entry once that transaction is complete (INVALID_TXN_STATE for a healthy batch)."""
    return entry is not None and entry.supports_epoch_bump and entry.epoch == marker_epoch


def new_producer_refuses(producer: ProducerStateEntry | None, first_seq: int) -> bool:
    """KAFKA-18202's test (4.1.0, ``ProducerAppendInfo.checkSequence``'s first), asked only under a TV2 client's
    entry (``supports_epoch_bump``): a first sequence other than 0 from a producer with no cached batch
    (``currentEntry.isEmpty()``: no entry at all, or one a marker's new epoch emptied). Only the first case is
    new: an entry at another epoch already asks a new epoch for sequence 0, and one at the batch's epoch with no
    batch expects 0 too (``inSequence(NO_SEQUENCE, seq)``); before, a producer without state was accepted at any
    sequence (KIP-360)."""
    return first_seq != 0 and (producer is None or not producer.batches)


def verification_refuses(entry: VerificationEntry | None, first_seq: int) -> bool:
    """``checkSequence``'s first test: a first sequence above the lowest one being verified."""
    return entry is not None and first_seq > entry.lowest_sequence


#: the guard a produce request carries from its verification to its append (``VerificationGuard``):
#: SENTINEL (the producer had a transaction ongoing, nothing was verified), GUARDED (the guard of the
#: producer's current verification entry), STALE (the entry it was handed was cleared since: a marker or a
#: transactional append of the producer, ``UnifiedLog.updateProducers``; a new entry has a new guard)
SENTINEL, GUARDED, STALE = 0, 1, 2


def missing_guard_error(entry_epoch: int | None, batch_epoch: int, *, ongoing: bool, guarded: bool,
                        stale_epoch_first: bool) -> int:
    """``UnifiedLog.analyzeAndValidateProducerState`` for a client's transactional batch, after the
    duplicate check (NONE: go on to ``ProducerAppendInfo``): with no transaction ongoing for the producer
    on the partition, the request must carry the guard of its current verification entry
    (``batchMissingRequiredVerification``), else INVALID_TXN_STATE. Since KAFKA-19690
    (``stale_epoch_first``) a batch below the epoch of the producer's entry (``entry_epoch``, None: no
    entry) is told INVALID_PRODUCER_EPOCH first, which a client recovers from by aborting."""
    if ongoing or guarded:
        return int(Errors.NONE)
    if stale_epoch_first and entry_epoch is not None and batch_epoch < entry_epoch:
        return int(Errors.INVALID_PRODUCER_EPOCH)
    return int(Errors.INVALID_TXN_STATE)


def remove_expired_verifications(entries: Verifications, now: int, expiration: int) -> Verifications:
    return tuple(v for v in entries if now - v.created < expiration)


# --- the requests that carry a verification (``AddPartitionsToTxnManager``, ``ReplicaManager``) ------


def verification_callback_errors(partition_errors: dict[int, int], *, generic_error: bool) -> dict[int, int]:
    """What ``AddPartitionsToTxnManager`` hands the produce path for the coordinator's per-partition
    answers to a verify-only AddPartitionsToTxn (``AddPartitionsToTxnHandler.onComplete``): verified
    partitions are left out, PRODUCER_FENCED becomes INVALID_PRODUCER_EPOCH (what a producer expects
    from a produce request), and TRANSACTION_ABORTABLE reaches only produce requests that know it
    (v11+, ``genericError``); older ones get INVALID_TXN_STATE."""
    out: dict[int, int] = {}
    for partition, error in partition_errors.items():
        if error == Errors.NONE:
            continue
        if error == Errors.PRODUCER_FENCED:
            error = int(Errors.INVALID_PRODUCER_EPOCH)
        elif error == Errors.TRANSACTION_ABORTABLE and not generic_error:
            error = int(Errors.INVALID_TXN_STATE)
        out[partition] = int(error)
    return out


def verification_top_level_error(error: int) -> int:
    """What ``AddPartitionsToTxnManager`` hands every partition's produce callback for a top-level error of the
    coordinator's answer: CLUSTER_AUTHORIZATION_FAILED (the broker's own request refused) becomes INVALID_TXN_STATE,
    "the client should not be exposed to CLUSTER_AUTHORIZATION_FAILED" (3.6.0's AddPartitionsToTxnManager.scala
    l.144-146, 1eb7644's l.209-212, 4.2.0-rc1's Java AddPartitionsToTxnManager l.160-162); another passes as it is.
    No machine answers a verification with a top-level error."""
    return int(Errors.INVALID_TXN_STATE) if error == Errors.CLUSTER_AUTHORIZATION_FAILED else int(error)


#: ``AddPartitionsToTxnManager.verifyTransaction`` when the transaction coordinator cannot be found
#: (no __transaction_state topic, no leader, the leader unavailable): every partition, at once
NO_COORDINATOR_ANSWER = int(Errors.COORDINATOR_NOT_AVAILABLE)


def superseded_verification(queued_epoch: int, incoming_epoch: int) -> tuple[int, int]:
    """``AddPartitionsToTxnManager.addTxnData`` when a verification for the same transactional id is
    still queued: (the answer to the queued one, the answer to the incoming one), NONE = still
    queued. The same epoch is a client retry (the queued one gets the retriable NETWORK_EXCEPTION and
    is replaced); a higher epoch fences the queued one; a lower one is fenced itself at once."""
    if incoming_epoch < queued_epoch:
        return int(Errors.NONE), int(Errors.INVALID_PRODUCER_EPOCH)
    if incoming_epoch == queued_epoch:
        return int(Errors.NETWORK_EXCEPTION), int(Errors.NONE)
    return int(Errors.INVALID_PRODUCER_EPOCH), int(Errors.NONE)


#: coordinator errors a verification can end with that older producers do not retry on a produce request
_RETRY_AS_NOT_ENOUGH_REPLICAS = frozenset({Errors.CONCURRENT_TRANSACTIONS, Errors.NETWORK_EXCEPTION,
                                           Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.COORDINATOR_NOT_AVAILABLE,
                                           Errors.NOT_COORDINATOR})


def produce_verification_error(error: int) -> int:
    """The produce answer for a failed verification (``ReplicaManager.appendRecords``'s
    ``postVerificationCallback``): a retriable coordinator error becomes NOT_ENOUGH_REPLICAS, which
    every producer retries without a metadata refresh; any other error is answered as it is."""
    return int(Errors.NOT_ENOUGH_REPLICAS) if error in _RETRY_AS_NOT_ENOUGH_REPLICAS else int(error)


def verification_produce_error(coordinator_error: int, *, generic_error: bool) -> int:
    """A produce request's error for the coordinator's answer about its partition (NONE: append): what
    ``AddPartitionsToTxnManager`` hands the produce path (``verification_callback_errors``; ``generic_error``:
    the request is Produce v11+, a 3.8+ client), then ReplicaManager's conversion of retriable coordinator
    errors (``produce_verification_error``). The leader's verify-only request (KIP-890 part 1) and its
    add (KIP-890 part 2, ``tv2_partition_add``) go through the same handler."""
    converted = verification_callback_errors({0: coordinator_error}, generic_error=generic_error).get(0, Errors.NONE)
    return produce_verification_error(converted)
