"""Transactional offsets pending until their transaction's marker (``GroupMetadata``).

``prepareTxnOffsetCommit`` records the offsets as pending for the producer id before the
``__consumer_offsets`` write; ``onTxnOffsetCommitAppend`` records the log offset of the written
batch; ``failPendingTxnOffsetCommit`` drops an entry whose write failed. When the COMMIT or ABORT
marker lands on the offsets partition, ``completePendingTxnOffsetCommit`` runs: on COMMIT each
pending offset replaces the committed one only if there is none or the committed one was written
at a lower log offset (log order wins, not completion order); on ABORT they are dropped. Both
remove the producer's pending set; a marker for a producer without pending offsets is a no-op.
Pending offsets are invisible to OffsetFetch except through UNSTABLE_OFFSET_COMMIT.
"""

from __future__ import annotations

from .metadata import NOT_APPENDED, CommittedOffset, GroupMeta, PendingTxnOffset


def prepare_txn_offset_commit(group: GroupMeta, producer_id: int,
                              offsets: tuple[tuple[int, int], ...]) -> GroupMeta:
    """Record ``(partition, offset)`` pairs as pending for ``producer_id`` (a later commit of the
    same partition by the same producer replaces the earlier pending one)."""
    parts = {p for p, _ in offsets}
    kept = [e for e in group.pending if not (e.producer_id == producer_id and e.partition in parts)]
    added = [PendingTxnOffset(producer_id, p, off, NOT_APPENDED) for p, off in offsets]
    return group._replace(pending=tuple(sorted(kept + added)))


def on_txn_offset_commit_append(group: GroupMeta, producer_id: int, partition: int, offset: int,
                                log_offset: int) -> GroupMeta:
    """The offsets batch was written at ``log_offset``: remember it, if the pending entry is still
    the one written (a newer pending offset of the same producer is left alone)."""
    return group._replace(pending=tuple(
        e._replace(appended_at=log_offset) if (e.producer_id, e.partition, e.offset) == (producer_id, partition, offset)
        else e for e in group.pending))


def fail_pending_txn_offset_commit(group: GroupMeta, producer_id: int, partition: int) -> GroupMeta:
    return group._replace(pending=tuple(e for e in group.pending
                                        if not (e.producer_id == producer_id and e.partition == partition)))


def has_pending_txn_offsets(group: GroupMeta, partition: int) -> bool:
    """``hasPendingOffsetCommitsForTopicPartition`` (transactional part; plain in-flight commits are
    not modelled)."""
    return any(e.partition == partition for e in group.pending)


def complete_pending_txn_offset_commit(group: GroupMeta, producer_id: int, is_commit: bool) -> GroupMeta:
    mine = [e for e in group.pending if e.producer_id == producer_id]
    rest = tuple(e for e in group.pending if e.producer_id != producer_id)
    offsets = list(group.offsets)
    if is_commit:
        for e in mine:
            if e.appended_at == NOT_APPENDED:
                # Kafka throws IllegalStateException: a marker cannot precede the offsets write
                raise ValueError(f"pending offset of producer {producer_id} completed before it was appended")
            current = offsets[e.partition]
            if current.appended_at == NOT_APPENDED or current.appended_at < e.appended_at:
                offsets[e.partition] = CommittedOffset(e.offset, e.appended_at)
    return group._replace(offsets=tuple(offsets), pending=rest)


def defer_txn_offset_completion(group: GroupMeta, producer_id: int, is_commit: bool) -> GroupMeta:
    """The marker is written but its completion only scheduled (2.0-3.9: ``onTransactionCompleted`` ->
    ``scheduleHandleTxnCompletion``, KAFKA-6917): the producer's offsets stay pending until
    ``run_txn_offset_completion`` runs it, and WriteTxnMarkers answers meanwhile (KAFKA-17507)."""
    return group._replace(completing=(*group.completing, (producer_id, int(is_commit))))


def run_txn_offset_completion(group: GroupMeta, index: int) -> GroupMeta:
    """The scheduler runs the ``index``-th scheduled completion: ``completePendingTxnOffsetCommit`` on
    whatever the producer id has pending *now*, which includes the offsets of a transaction that began
    after the marker (the pending set is keyed by producer id alone)."""
    producer_id, is_commit = group.completing[index]
    rest = group.completing[:index] + group.completing[index + 1:]
    return complete_pending_txn_offset_commit(group._replace(completing=rest), producer_id, bool(is_commit))
