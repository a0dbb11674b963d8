"""Produce-side validation on the partition leader (``UnifiedLog.analyzeAndValidateProducerState``
and ``ProducerAppendInfo``), with the historical behaviours of §2.4 as switches.

``unknown_producer`` says what a sequence other than 0 from a producer without state gets:
``"out_of_order"`` (0.11), ``"unknown_producer_id"`` (1.0-2.4, with the log start offset in the
response), ``"accept"`` (2.5+, KIP-360: any sequence accepted).
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

from eoscheck.checker.ops import CONCRETE

from ..errors import Errors
from ..state import ProducerStateEntry
from ..transactions.markers import TxnMarker, append_end_txn_marker
from .producer_state import end_transaction, find_duplicate_batch
from .sequence import in_sequence

UNKNOWN_PRODUCER_MODES = ("out_of_order", "unknown_producer_id", "accept")


class ProduceDecision(NamedTuple):
    error: int
    duplicate_offset: int  # >= 0: a duplicate of a cached batch; answer with its offset, write nothing
    append: bool  # write the batch


def validate_produce(entry: ProducerStateEntry | None, *, epoch: int, seq: int, max_seq: int,
                     unknown_producer: str, old_duplicate_error: bool = False,
                     last_seq: int | None = None, check_duplicates: bool = True) -> ProduceDecision:
    """``old_duplicate_error``: 1.0.0-1.0.1 answered a same-epoch batch older than every cached one
    with DUPLICATE_SEQUENCE_NUMBER (the spurious-OutOfOrderSequence design, item 5), except a batch
    ending at sequence 0 (``isDuplicate`` exempts ``lastSeq == 0``); 0.11 and 1.0.2+ (KAFKA-6683)
    answer OUT_OF_ORDER_SEQUENCE_NUMBER. (Compared without wrap-around, as Kafka did.)"""
    # 1. duplicate of a cached batch: success with the original offset, nothing written
    # a batch of several records: seq .. last_seq; ``check_duplicates=False`` is ProducerAppendInfo
    # on its own (UnifiedLog runs the duplicate check before it)
    dup = find_duplicate_batch(entry, epoch, seq, last_seq) if check_duplicates else None
    if dup is not None:
        return ProduceDecision(Errors.NONE, dup.offset, False)
    if entry is None or entry.epoch == -1:
        # no state for this producer id (never written, expired, or evicted by retention)
        if seq == 0 or unknown_producer == "accept":
            return ProduceDecision(Errors.NONE, -1, True)
        if unknown_producer == "out_of_order":
            return ProduceDecision(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, -1, False)
        return ProduceDecision(Errors.UNKNOWN_PRODUCER_ID, -1, False)
    # 2. checkProducerEpoch
    if epoch < entry.epoch:
        return ProduceDecision(Errors.INVALID_PRODUCER_EPOCH, -1, False)
    # 3. checkSequence
    if epoch != entry.epoch:
        ok = seq == 0  # a higher epoch must start at sequence 0
    else:
        if old_duplicate_error and seq != 0 and entry.batches and seq < entry.batches[0].seq:
            return ProduceDecision(Errors.DUPLICATE_SEQUENCE_NUMBER, -1, False)
        last_seq = entry.batches[-1].seq if entry.batches else -1
        ok = bool(in_sequence(CONCRETE, max_seq=max_seq, last_seq=last_seq, next_seq=seq))
    if ok:
        return ProduceDecision(Errors.NONE, -1, True)
    return ProduceDecision(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, -1, False)


# --- the transactional path (``appendDataBatch`` / ``appendEndTxnMarker``) ---------------------------


class AppendOrigin(IntEnum):
    """``AppendOrigin``: who writes the batch (only CLIENT batches get sequence checks)."""

    CLIENT = 0
    COORDINATOR = 1  # the group coordinator's offset commits, the transaction coordinator's markers
    REPLICATION = 2


def validate_data_batch(entry: ProducerStateEntry, *, epoch: int, transactional: bool, origin: AppendOrigin) -> int:
    """The epoch and transaction checks of ``appendDataBatch`` (§2.3): a lower epoch ->
    INVALID_PRODUCER_EPOCH (REPLICATION only warns); then a non-transactional batch while the
    producer has an open transaction on the partition -> INVALID_TXN_STATE. Sequence checks
    (``validate_produce``, CLIENT origin) come between the two in Kafka; a caller that tracks
    sequences runs them as well."""
    if origin != AppendOrigin.REPLICATION and epoch < entry.epoch:
        return int(Errors.INVALID_PRODUCER_EPOCH)
    if not transactional and entry.current_txn_first_offset >= 0:
        return int(Errors.INVALID_TXN_STATE)
    return int(Errors.NONE)


class MarkerDecision(NamedTuple):
    error: int
    entry: ProducerStateEntry  # after the marker (unchanged when refused)


def append_marker(entry: ProducerStateEntry, marker: TxnMarker, *, timestamp: int,
                  check_coordinator_epoch: bool = True) -> MarkerDecision:
    """``appendEndTxnMarker`` from the coordinator: the producer epoch check, then the coordinator
    epoch check (``transactions.markers.end_txn_marker_error``); a written marker updates the entry
    (``end_transaction``). ``check_coordinator_epoch=False`` is the counterfactual leader that ignores
    the coordinator epoch."""
    stored_coordinator_epoch = entry.coordinator_epoch if check_coordinator_epoch else -1
    app = append_end_txn_marker(entry.epoch, stored_coordinator_epoch, marker)
    if app.error != Errors.NONE:
        return MarkerDecision(app.error, entry)
    return MarkerDecision(int(Errors.NONE), end_transaction(entry, marker.producer_epoch, marker.coordinator_epoch,
                                                            timestamp))
