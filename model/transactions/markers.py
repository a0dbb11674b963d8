"""WriteTxnMarkers: sending on the transaction coordinator, appending on the partition leader.

Coordinator (``TransactionMarkerChannelManager`` / ``TransactionMarkerRequestCompletionHandler``):
after a PrepareCommit/PrepareAbort record is written, one marker per partition carries
(pid, the metadata's *current* producer epoch, result, coordinator epoch). A NONE answer removes the
partition from ``topicPartitions``; retriable errors resend; INVALID_PRODUCER_EPOCH and
TRANSACTION_COORDINATOR_FENCED stop sending (this coordinator abandons the transaction, which stays
in PrepareX until a newer coordinator loads it). When no partition remains, CompleteCommit /
CompleteAbort is written (``prepareComplete``: no partitions, ``hasFailedEpochFence`` cleared).

Partition leader (``ProducerAppendInfo.appendEndTxnMarker``, origin COORDINATOR): a marker whose
epoch is below the stored producer epoch gets INVALID_PRODUCER_EPOCH; one whose coordinator epoch is
below the stored coordinator epoch gets TRANSACTION_COORDINATOR_FENCED; otherwise the marker is
written, the pid's open transaction on the partition is closed, and the stored epoch and
coordinator epoch become the marker's (a higher marker epoch bumps the partition's producer epoch).
"""

from __future__ import annotations

from typing import NamedTuple

from eoscheck.checker.ops import CONCRETE, Ops

from .codes import Errors, TxnResult, TxnState
from .metadata import TxnMeta, transit

#: answers on which the coordinator resends the marker for the partition (the same six from 2.5.0 to 4.2.0-rc1; the
#: handler's case list, TransactionMarkerRequestCompletionHandler.scala, identical at 2.5.0, 3.9.1 and 4.2.0-rc1 but
#: for NOT_LEADER_FOR_PARTITION's rename to NOT_LEADER_OR_FOLLOWER, the same code 6, KAFKA-10223)
RETRIABLE_MARKER_ERRORS = frozenset({
    Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.NOT_LEADER_OR_FOLLOWER, Errors.REQUEST_TIMED_OUT,
    Errors.NOT_ENOUGH_REPLICAS, Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND, Errors.KAFKA_STORAGE_ERROR,
})
#: answers after which the partition counts as done (a broker too old for markers: nothing to write)
DONE_MARKER_ERRORS = frozenset({Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT, Errors.UNSUPPORTED_VERSION})
#: answers on which the coordinator stops sending markers for the transaction
ABANDON_MARKER_ERRORS = frozenset({Errors.INVALID_PRODUCER_EPOCH, Errors.TRANSACTION_COORDINATOR_FENCED})
#: the retriable answer a version before KAFKA-9749 (5a1567631d, first tag 2.5.0; 4c96b7deba on trunk, 2.6.0) did not
#: name: 2.0.0 .. 2.4.1's handler falls to ``case other`` and throws IllegalStateException
KAFKA_9749_RETRIABLE = Errors.KAFKA_STORAGE_ERROR


class TxnMarker(NamedTuple):
    """One WriteTxnMarkers entry for one partition (``TxnMarkerEntry``)."""

    partition: int
    producer_id: int
    producer_epoch: int
    result: int
    coordinator_epoch: int


def marker_result(state: int) -> int:
    """COMMIT for PrepareCommit, ABORT for PrepareAbort."""
    return int(TxnResult.COMMIT) if state == TxnState.PREPARE_COMMIT else int(TxnResult.ABORT)


def markers_to_send(meta: TxnMeta, coordinator_epoch: int, *,
                    rotation_markers_new_producer_id: bool = False) -> tuple[TxnMarker, ...]:
    """``addTxnMarkersToSend``: one marker per partition still in the transaction (none unless PrepareX),
    with the producer id and the (bumped) epoch of the PrepareX record, also when a TV2 transaction
    rotates to a new producer id (KIP-890 part 2). ``rotation_markers_new_producer_id`` is the
    counterfactual that writes a rotating transaction's markers under the new producer id (epoch 0)."""
    if meta.state not in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
        return ()
    res = marker_result(meta.state)
    pid, epoch = meta.producer_id, meta.epoch
    if rotation_markers_new_producer_id and meta.next_producer_id >= 0:
        pid, epoch = meta.next_producer_id, 0
    return tuple(TxnMarker(p, pid, epoch, res, coordinator_epoch) for p in meta.partitions)


class MarkerResponseOutcome(NamedTuple):
    meta: TxnMeta
    #: resend this partition's marker
    retry: bool
    #: stop sending markers for this transaction (fenced)
    abandon: bool


def on_marker_response(meta: TxnMeta, partition: int, error: int, *,
                       storage_error_retriable: bool = True) -> MarkerResponseOutcome:
    """``TransactionMarkerRequestCompletionHandler`` for one partition's answer; ``storage_error_retriable``: the
    version has KAFKA-9749 (2.5.0). Any other answer (CORRUPT_MESSAGE, MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE,
    INVALID_REQUIRED_ACKS by name, the rest by ``case other``) raises ValueError, Kafka's IllegalStateException."""
    if error == Errors.NONE or error in DONE_MARKER_ERRORS:
        return MarkerResponseOutcome(meta._replace(partitions=tuple(p for p in meta.partitions if p != partition)),
                                     False, False)
    if error in ABANDON_MARKER_ERRORS:
        return MarkerResponseOutcome(meta, False, True)
    if error in RETRIABLE_MARKER_ERRORS and (storage_error_retriable or error != KAFKA_9749_RETRIABLE):
        return MarkerResponseOutcome(meta, True, False)
    raise ValueError(f"IllegalStateException: unexpected marker answer {error}")


def complete_if_done(meta: TxnMeta, *, tv2_last_epoch: str = "keep") -> tuple[TxnMeta, bool]:
    """``writeTxnCompletion``: PrepareX with every marker acknowledged -> CompleteX (written).

    ``prepareComplete``: with TV2 and a ``nextProducerId`` (the EndTxn bumped an exhausted epoch)
    the producer id rotates: nextProducerId at epoch 0, previousProducerId := the old id. With TV2,
    ``tv2_last_epoch`` says what lastProducerEpoch becomes: ``"keep"`` (later trunk: the epoch the
    client used before the bump) or ``"current"`` (the 2024-10 snapshot: the pre-completion epoch).
    """
    if meta.state not in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT) or meta.partitions:
        return meta, False
    target = TxnState.COMPLETE_COMMIT if meta.state == TxnState.PREPARE_COMMIT else TxnState.COMPLETE_ABORT
    done = transit(meta, state=int(target), partitions=(), has_failed_epoch_fence=False)
    if meta.tv >= 2:
        if tv2_last_epoch == "current":
            done = done._replace(last_epoch=meta.epoch)
        if meta.next_producer_id >= 0:
            done = done._replace(producer_id=meta.next_producer_id, prev_producer_id=meta.producer_id, epoch=0,
                                 next_producer_id=-1)
    return done, True


# --- partition leader -------------------------------------------------------------------------------

def end_txn_marker_error(ops: Ops, *, stored_epoch, stored_coordinator_epoch, marker_epoch,
                         marker_coordinator_epoch):
    """``appendEndTxnMarker`` checks for a marker from the coordinator (not replication): producer
    epoch first, then coordinator epoch."""
    c = lambda v: ops.const(int(v), 16)
    return ops.ite(ops.lt(marker_epoch, stored_epoch), c(Errors.INVALID_PRODUCER_EPOCH),
           ops.ite(ops.lt(marker_coordinator_epoch, stored_coordinator_epoch), c(Errors.TRANSACTION_COORDINATOR_FENCED),
                   c(Errors.NONE)))


class MarkerAppend(NamedTuple):
    error: int
    #: the producer-state entry's epoch and coordinator epoch after the append (unchanged on error)
    epoch: int
    coordinator_epoch: int


def append_end_txn_marker(stored_epoch: int, stored_coordinator_epoch: int, marker: TxnMarker) -> MarkerAppend:
    """The leader's decision for a marker, on concrete values (``-1``: no entry for the producer)."""
    err = end_txn_marker_error(CONCRETE, stored_epoch=stored_epoch, stored_coordinator_epoch=stored_coordinator_epoch,
                               marker_epoch=marker.producer_epoch,
                               marker_coordinator_epoch=marker.coordinator_epoch)
    if err != Errors.NONE:
        return MarkerAppend(int(err), stored_epoch, stored_coordinator_epoch)
    return MarkerAppend(int(Errors.NONE), marker.producer_epoch, marker.coordinator_epoch)
