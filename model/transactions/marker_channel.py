"""The transaction coordinator's marker queues (``TransactionMarkerChannelManager``), as the conformance interface
drives them; kafka.eos abstracts them to one marker per partition, each delivered on its own (``markers``).

Read at 1eb7644 and 4.2.0-rc1 (the same rules; 4.2.0-rc1's marker entry also carries the transaction version,
KAFKA-19446 [2/3]); before KAFKA-16352 (3.8.0) dropped markers dropped whatever completion was pending for the id
(``Channel.by_identity``):

- ``addTxnMarkersToSend`` records the transaction's pending completion (``transactionsWithPendingMarkers``, one per
  transactional id: a newer one replaces it), groups its partitions by their leader and queues one marker entry per
  leader, under the ``__transaction_state`` partition of the transactional id. A leader known but not available
  (``Node.noNode``) puts the entry in the unknown-broker queue, which ``generateRequests`` drains and resolves again
  each time. No leader at all: the partitions are taken out of the transaction (the partition is likely deleted) if the
  cache still holds the transaction at the marker's coordinator epoch; otherwise the pending completion is dropped.
- ``generateRequests`` first retries the completion appends that answered COORDINATOR_NOT_AVAILABLE, then drains the
  unknown-broker queue into the brokers' queues, then makes one WriteTxnMarkers request per broker with every queued
  entry (``TxnMarkerQueue.totalNumMarkers`` counts entries, by ``__transaction_state`` partition).
- an answer (``TransactionMarkerRequestCompletionHandler``) first looks the transactional id up: NOT_COORDINATOR or
  COORDINATOR_LOAD_IN_PROGRESS, or a cache at another coordinator epoch than the marker's, drops the pending
  completion of that request only (``transactionsWithPendingMarkers.remove(id, pending)``: a newer one stays); a
  disconnection queues the entry again; a partition answered NONE leaves the transaction, and when none is left the
  completion is written once: the pending entry is removed before the write (``maybeWriteTxnCompletion``), which looks
  the id up again and appends only at the same coordinator epoch.
- ``removeMarkersForTxnTopicPartition`` (the partition emigrated or is reloaded) drops the queued entries of that
  ``__transaction_state`` partition and their pending completions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .codes import Errors, TxnState
from .markers import ABANDON_MARKER_ERRORS, DONE_MARKER_ERRORS, RETRIABLE_MARKER_ERRORS
from .metadata import TxnMeta

#: ``Node.noNode``: the leader is known but its endpoint is not available
NO_NODE = -1


@dataclass(frozen=True, eq=False)
class Pending:
    """A ``PendingCompleteTxn``: compared by identity, as Kafka's ``remove(id, pending)`` does."""

    transactional_id: str
    coordinator_epoch: int
    result: int


@dataclass(frozen=True)
class Entry:
    """A ``PendingCompleteTxnAndMarkerEntry``: one marker entry (producer id, epoch, partitions) for one leader."""

    pending: Pending
    txn_partition: int
    producer_id: int
    producer_epoch: int
    partitions: tuple[int, ...]


@dataclass
class Channel:
    #: broker id -> queued entries (``markersQueuePerBroker``; a broker once queued for keeps its queue)
    brokers: dict[int, list[Entry]] = field(default_factory=dict)
    unknown: list[Entry] = field(default_factory=list)
    pending: dict[str, Pending] = field(default_factory=dict)
    retry_appends: list[tuple[Pending, TxnMeta]] = field(default_factory=list)
    #: (transactional id, coordinator epoch) of every completion append made
    appends: list[tuple[str, int]] = field(default_factory=list)
    #: KAFKA-16352 (3.8.0): dropped markers drop their own pending completion only; before, whichever the id had
    by_identity: bool = True

    def num_markers(self, broker: int | None, txn_partition: int | None = None) -> int | None:
        """``queueForBroker(id).get.totalNumMarkers`` (None: no queue; ``broker`` None: the unknown-broker queue)."""
        queue = self.unknown if broker is None else self.brokers.get(broker)
        if queue is None:
            return None
        return sum(1 for e in queue if txn_partition is None or e.txn_partition == txn_partition)


class Env:
    """What the channel asks the rest of the broker: the leaders, the cache, the completion append's answer, and the
    metadata it changes (the conformance world's)."""

    def leader(self, partition: int) -> int | None:
        raise NotImplementedError

    def lookup(self, tid: str) -> tuple[int, int]:
        """What ``getTransactionState`` answers: an error, or none (0) and the cache's coordinator epoch."""
        raise NotImplementedError

    def metadata(self, tid: str) -> TxnMeta | None:
        """The transaction's metadata (the object the pending completion holds; None: not in the cache)."""
        raise NotImplementedError

    def set_metadata(self, tid: str, meta: TxnMeta) -> None:
        raise NotImplementedError

    def append_completion(self, pending: Pending, meta: TxnMeta) -> int:
        """Append CompleteCommit / CompleteAbort; the answer its callback gets."""
        raise NotImplementedError


def add_txn_markers_to_send(ch: Channel, env: Env, tid: str, txn_partition: int, coordinator_epoch: int,
                            meta: TxnMeta, *, check_completion: bool = True) -> Pending:
    result = 1 if meta.state == TxnState.PREPARE_COMMIT else 0
    pending = Pending(tid, coordinator_epoch, result)
    ch.pending[tid] = pending
    add_to_broker_queue(ch, env, pending, txn_partition, meta.producer_id, meta.epoch, meta.partitions)
    if check_completion:
        maybe_write_completion(ch, env, tid)
    return pending


def add_to_broker_queue(ch: Channel, env: Env, pending: Pending, txn_partition: int, producer_id: int, epoch: int,
                        partitions: tuple[int, ...]) -> None:
    by_leader: dict[int | None, list[int]] = {}
    for p in partitions:
        by_leader.setdefault(env.leader(p), []).append(p)
    for leader, parts in by_leader.items():
        entry = Entry(pending, txn_partition, producer_id, epoch, tuple(parts))
        if leader == NO_NODE:
            ch.unknown.append(entry)
        elif leader is not None:
            ch.brokers.setdefault(leader, []).append(entry)
        else:
            error, epoch_now = env.lookup(pending.transactional_id)
            meta = env.metadata(pending.transactional_id)
            if error or epoch_now != pending.coordinator_epoch:
                _remove_pending(ch, pending)
            elif meta is None:
                raise ValueError("the coordinator owns the partition but has no metadata")
            else:
                env.set_metadata(pending.transactional_id,
                                 meta._replace(partitions=tuple(x for x in meta.partitions if x not in parts)))
                maybe_write_completion(ch, env, pending.transactional_id)


def _remove_pending(ch: Channel, pending: Pending) -> None:
    if pending.transactional_id in ch.pending and (ch.pending[pending.transactional_id] is pending
                                                    or not ch.by_identity):
        del ch.pending[pending.transactional_id]


def maybe_write_completion(ch: Channel, env: Env, tid: str) -> None:
    pending = ch.pending.get(tid)
    meta = env.metadata(tid)
    if pending is None or (meta is not None and meta.partitions):
        return
    del ch.pending[tid]
    error, epoch_now = env.lookup(tid)
    if error in (Errors.NOT_COORDINATOR, Errors.COORDINATOR_LOAD_IN_PROGRESS):
        return
    if error:
        raise ValueError(f"unhandled error {error} fetching the transaction state")
    if meta is None:
        raise ValueError("the coordinator owns the partition but has no metadata")
    if epoch_now == pending.coordinator_epoch:
        _try_append(ch, env, pending, meta)


def _try_append(ch: Channel, env: Env, pending: Pending, meta: TxnMeta) -> None:
    ch.appends.append((pending.transactional_id, pending.coordinator_epoch))
    answer = env.append_completion(pending, meta)
    if answer == Errors.COORDINATOR_NOT_AVAILABLE:
        ch.retry_appends.append((pending, meta))
    elif answer not in (Errors.NONE, Errors.NOT_COORDINATOR, Errors.COORDINATOR_LOAD_IN_PROGRESS):
        raise ValueError(f"unexpected error {answer} appending the transaction's completion")


class Request:
    def __init__(self, broker: int, entries: list[Entry]) -> None:
        self.broker, self.entries = broker, entries


def generate_requests(ch: Channel, env: Env) -> list[Request]:
    retries, ch.retry_appends = ch.retry_appends, []
    for pending, meta in retries:
        _try_append(ch, env, pending, meta)
    unknown, ch.unknown = ch.unknown, []
    for e in unknown:
        add_to_broker_queue(ch, env, e.pending, e.txn_partition, e.producer_id, e.producer_epoch, e.partitions)
    requests = []
    for broker in sorted(ch.brokers):
        if ch.brokers[broker]:
            requests.append(Request(broker, ch.brokers[broker]))
            ch.brokers[broker] = []
    return requests


def on_response(ch: Channel, env: Env, request: Request, errors: dict[int, dict[int, int]] | None) -> None:
    """The request's answer: ``errors`` by producer id and partition, None for a disconnection."""
    for e in request.entries:
        tid = e.pending.transactional_id
        error, epoch_now = env.lookup(tid)
        meta = env.metadata(tid)
        if error in (Errors.NOT_COORDINATOR, Errors.COORDINATOR_LOAD_IN_PROGRESS):
            _remove_pending(ch, e.pending)
            continue
        if error:
            raise ValueError(f"unhandled error {error} fetching the transaction state")
        if meta is None:
            raise ValueError("the coordinator owns the partition but has no metadata")
        if epoch_now != e.pending.coordinator_epoch:
            _remove_pending(ch, e.pending)
            continue
        if errors is None:
            add_to_broker_queue(ch, env, e.pending, e.txn_partition, e.producer_id, e.producer_epoch, e.partitions)
            continue
        answers = errors.get(e.producer_id)
        if answers is None:
            raise ValueError(f"no errors for producer id {e.producer_id}")
        retry, abandon, parts = [], False, meta.partitions
        for p, err in answers.items():
            if err == Errors.NONE or err in DONE_MARKER_ERRORS:
                parts = tuple(x for x in parts if x != p)
            elif err in RETRIABLE_MARKER_ERRORS:
                retry.append(p)
            elif err in ABANDON_MARKER_ERRORS:
                _remove_pending(ch, e.pending)
                abandon = True
            else:
                raise ValueError(f"marker answer {err} is not expected")
        env.set_metadata(tid, meta._replace(partitions=parts))
        if abandon:
            continue
        if retry:
            add_to_broker_queue(ch, env, e.pending, e.txn_partition, e.producer_id, e.producer_epoch, tuple(retry))
        else:
            maybe_write_completion(ch, env, tid)


def remove_markers_for_txn_topic_partition(ch: Channel, txn_partition: int) -> None:
    for queue in (ch.unknown, *ch.brokers.values()):
        for e in [e for e in queue if e.txn_partition == txn_partition]:
            queue.remove(e)
            _remove_pending(ch, e.pending)
