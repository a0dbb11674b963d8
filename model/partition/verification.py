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


class VerificationEntry(NamedTuple):
    producer_id: int
    lowest_sequence: int
    epoch: int
    created: int  # the time the verification started


Verifications = tuple[VerificationEntry, ...]


def find_verification(entries: Verifications, producer_id: int) -> VerificationEntry | None:
    return next((v for v in entries if v.producer_id == producer_id), None)


def start_verification(entries: Verifications, producer_id: int, seq: int, epoch: int, now: int) -> Verifications:
    """``maybeCreateVerificationStateEntry``: a new entry, or the existing one updated
    (``maybeUpdateLowestSequenceAndEpoch``): a higher epoch replaces both epoch and sequence (the
    producer restarted its sequences), the same epoch keeps the lowest sequence, an older epoch
    changes nothing (a zombie must not lower the bound the current producer is checked against)."""
    old = find_verification(entries, producer_id)
    if old is None:
        entry = VerificationEntry(producer_id, seq, epoch, now)
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


def verification_refuses(entry: VerificationEntry | None, first_seq: int) -> bool:
    """``checkSequence``'s first test: a first sequence above the lowest one being verified."""
    return entry is not None and first_seq > entry.lowest_sequence


def remove_expired_verifications(entries: Verifications, now: int, expiration: int) -> Verifications:
    return tuple(v for v in entries if now - v.created < expiration)
