"""The group coordinator, one function per request or event: TxnOffsetCommit (validation, then the
offsets pending until the marker), OffsetFetch (require_stable), the transaction marker on the
offsets partition, plain offset commits. The rules are ``model.group``'s, which the pipeline
machine uses."""

from __future__ import annotations

from typing import NamedTuple

from ..errors import Errors
from ..group.classic_offset_expiry import ClassicExpiryResult, GroupKind, cleanup_group_metadata
from ..group.leave_group import LeaveGroupResult, LeavingMember, leave_group
from ..group.metadata import (
    NO_INSTANCE_ID,
    CommittedOffset,
    GroupMeta,
    GroupState,
    new_group,
)
from ..group.offset_delete import (
    OffsetDeleteResult,
    delete_all_offsets,
    delete_offsets,
    delete_partitions,
    replay_offset_tombstone,
)
from ..group.offset_expiry import ExpiryResult, cleanup_expired_offsets
from ..group.offset_fetch import offset_fetch
from ..group.offsets_load import OffsetsLogRecord, coordinator_epoch_update, load_group
from ..group.pending_offsets import (
    complete_pending_txn_offset_commit,
    on_txn_offset_commit_append,
    prepare_txn_offset_commit,
)
from ..group.txn_offset_commit import (
    consumer_group_error,
    offset_commit_error_answer,
    unknown_group_error,
    validate_txn_offset_commit,
)
from .protocol import Protocol


class GroupCoordinatorState(NamedTuple):
    group: GroupMeta | None  # None: the coordinator does not know the group
    num_partitions: int
    #: the next offset in the group's ``__consumer_offsets`` partition
    log_end_offset: int = 0
    #: a KIP-848 consumer group: member id -> member epoch (None: a classic group)
    member_epochs: tuple[tuple[int, int], ...] | None = None
    #: the new group coordinator (KIP-848 ``group-coordinator`` module) instead of the classic one
    new_coordinator: bool = False


class TxnOffsetCommitRequest(NamedTuple):
    producer_id: int
    member_id: int
    generation_id: int
    offsets: tuple[tuple[int, int], ...]  # (partition, offset)
    instance_id: int = NO_INSTANCE_ID


def handle_txn_offset_commit(state: GroupCoordinatorState, req: TxnOffsetCommitRequest,
                             protocol: Protocol, *, append_error: int = Errors.NONE) -> tuple[int, GroupCoordinatorState]:
    """The error for every partition of the request (they share it) and the group after: on NONE
    the offsets are pending for the producer, their record written at the log end offset.
    ``append_error``: what the KIP-890 verification or the ``__consumer_offsets`` append answers
    (the unit tests mock it); a failed one answers ``offset_commit_error_answer`` and leaves no
    pending offsets."""
    errors, state = txn_offset_commit_errors(state, req, protocol, append_error=append_error)
    return (errors[0][1] if errors else int(Errors.NONE)), state


def txn_offset_commit_errors(state: GroupCoordinatorState, req: TxnOffsetCommitRequest, protocol: Protocol, *,
                             append_error: int = Errors.NONE, oversized: frozenset[int] = frozenset(),
                             offsets_partition_local: bool = True,
                             ) -> tuple[tuple[tuple[int, int], ...], GroupCoordinatorState]:
    """Each partition's error, in request order, and the group after (``handle_txn_offset_commit``). ``oversized``: the
    partitions whose metadata is too long (``model.group.offset_metadata_size``): once the group is validated they are
    left out and answered OFFSET_METADATA_TOO_LARGE, the others as before; a group error is every partition's.
    ``offsets_partition_local`` false: the broker no longer hosts the group's ``__consumer_offsets`` partition (the
    classic ``storeOffsets``' ``getMagic`` answers None, 2.0.0 .. 4.0.x): when some partition is left to write, every
    partition, an oversized one too, is answered NOT_COORDINATOR and nothing is written or left pending."""
    parts = tuple(p for p, _ in req.offsets)
    group = state.group
    if group is None:
        err = unknown_group_error(new_coordinator=state.new_coordinator, generation_id=req.generation_id)
        if err is not None:
            return tuple((p, err) for p in parts), state
        group = new_group(state.num_partitions)
    if state.member_epochs is not None:
        err = consumer_group_error(dict(state.member_epochs), req.member_id, req.generation_id)
    else:
        err = validate_txn_offset_commit(group, check=protocol.txn_offset_commit, generation_id=req.generation_id,
                                         member_id=req.member_id, instance_id=req.instance_id)
    if err != Errors.NONE:
        return tuple((p, err) for p in parts), state
    offsets = tuple((p, off) for p, off in req.offsets if p not in oversized)
    if offsets and not offsets_partition_local:
        return tuple((p, int(Errors.NOT_COORDINATOR)) for p in parts), state
    if append_error != Errors.NONE or not offsets:
        # nothing written: the kept partitions get the mapped append error
        kept = offset_commit_error_answer(append_error)
        return tuple((p, int(Errors.OFFSET_METADATA_TOO_LARGE) if p in oversized else kept) for p in parts), state
    at = state.log_end_offset
    group = prepare_txn_offset_commit(group, req.producer_id, offsets)
    for p, off in offsets:
        group = on_txn_offset_commit_append(group, req.producer_id, p, off, at)
    return (tuple((p, int(Errors.OFFSET_METADATA_TOO_LARGE) if p in oversized else int(Errors.NONE)) for p in parts),
            state._replace(group=group, log_end_offset=at + 1))


#: the first TxnOffsetCommit version whose clients handle COORDINATOR_LOAD_IN_PROGRESS (KAFKA-7296)
LOAD_IN_PROGRESS_SINCE = 2


def txn_offset_commit_answer(error: int, request_version: int) -> int:
    """The partition error KafkaApis sends (``handleTxnOffsetCommitRequest``): producers of 0.11 .. 2.0
    (TxnOffsetCommit v0-1) could crash on COORDINATOR_LOAD_IN_PROGRESS, so they get
    COORDINATOR_NOT_AVAILABLE (also retriable, with a coordinator lookup)."""
    if error == Errors.COORDINATOR_LOAD_IN_PROGRESS and request_version < LOAD_IN_PROGRESS_SINCE:
        return int(Errors.COORDINATOR_NOT_AVAILABLE)
    return int(error)


def marker_answer(completion_error: int, *, new_coordinator: bool = True) -> int:
    """The WriteTxnMarkers answer for a ``__consumer_offsets`` partition when the group coordinator
    fails to complete the transaction (``KafkaApis.handleWriteTxnMarkersRequest``). The new group
    coordinator (``completeTransaction``): its coordinator errors become NOT_LEADER_OR_FOLLOWER, which the
    transaction coordinator's marker handler retries; others pass through. The old one
    (``new_coordinator=False``): the marker is written, and a failure to materialise the offsets
    (``onTransactionCompleted``; ``scheduleHandleTxnCompletion`` before 3.5.0) is UNKNOWN_SERVER_ERROR
    whatever the error (2.0.0 .. 4.0.x KafkaApis.scala, ``successfulOffsetsPartitions``; 4.1.0 has no old coordinator)."""
    if not new_coordinator:
        return int(Errors.UNKNOWN_SERVER_ERROR)
    if completion_error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.NOT_COORDINATOR):
        return int(Errors.NOT_LEADER_OR_FOLLOWER)
    return int(completion_error)


def handle_offset_fetch(state: GroupCoordinatorState, partitions: tuple[int, ...], *,
                        require_stable: bool) -> tuple[tuple[int, int], ...]:
    """(error, offset) per partition (``GroupMetadataManager.getOffsets`` / ``fetchOffsets``)."""
    return tuple(tuple(offset_fetch(state.group, p, require_stable=require_stable)) for p in partitions)  # type: ignore[misc]


def handle_offset_delete(state: GroupCoordinatorState, partitions: tuple[int, ...], *, subscribed: bool,
                         protocol: Protocol) -> tuple[OffsetDeleteResult, GroupCoordinatorState]:
    """OffsetDelete for partitions of one topic (``model.group.offset_delete``): the answer, the tombstones written and
    the group after their replay; the new coordinator's rule per version (``Protocol.offset_delete_pending``)."""
    if state.group is None:
        raise ValueError("OffsetDelete of a group the coordinator does not know")
    r = delete_offsets(state.group, partitions, subscribed=subscribed, new_coordinator=state.new_coordinator,
                       pending_aware=protocol.offset_delete_pending)
    at = state.log_end_offset + (1 if r.tombstones else 0)
    return r, state._replace(group=r.group, log_end_offset=at)


def handle_delete_all_offsets(state: GroupCoordinatorState,
                              protocol: Protocol) -> tuple[tuple[int, ...], GroupCoordinatorState]:
    """The new coordinator's DeleteGroups of the group (``deleteAllOffsets``, ``model.group.offset_delete``): the
    partitions tombstoned and the group after their replay, per version (``Protocol.offset_delete_pending``)."""
    if state.group is None:
        raise ValueError("deleteAllOffsets of a group the coordinator does not know")
    tombstones, group = delete_all_offsets(state.group, pending_aware=protocol.offset_delete_pending)
    return tombstones, state._replace(group=group, log_end_offset=state.log_end_offset + len(tombstones))


def handle_partitions_deleted(state: GroupCoordinatorState, partitions: tuple[int, ...],
                              protocol: Protocol) -> tuple[tuple[int, ...], GroupCoordinatorState]:
    """One group's share of the new coordinator's ``onPartitionsDeleted`` (a topic deletion, ``model.group.offset_delete``):
    the tombstones written and the group after their replay; nothing before KAFKA-16168
    (``Protocol.offsets_deleted_with_topic``)."""
    if state.group is None or not protocol.offsets_deleted_with_topic:
        return (), state
    tombstones, group = delete_partitions(state.group, partitions, pending_aware=protocol.offset_delete_pending)
    return tombstones, state._replace(group=group, log_end_offset=state.log_end_offset + len(tombstones))


def replay_offset_tombstone_record(state: GroupCoordinatorState, partition: int,
                                   protocol: Protocol) -> GroupCoordinatorState:
    """The replay of an offset-commit tombstone written at the log end (``OffsetMetadataManager.replay``), per version
    (``Protocol.offset_delete_pending``)."""
    if state.group is None:
        raise ValueError("an offset tombstone of a group the coordinator does not know")
    group = replay_offset_tombstone(state.group, partition, pending_aware=protocol.offset_delete_pending)
    return state._replace(group=group, log_end_offset=state.log_end_offset + 1)


def handle_cleanup_expired_offsets(state: GroupCoordinatorState, commit_timestamps: dict[int, int],
                                   unsubscribed: frozenset[int], now_ms: int, retention_ms: int,
                                   protocol: Protocol) -> tuple[ExpiryResult, GroupCoordinatorState]:
    """The new coordinator's ``cleanupExpiredOffsets`` (``model.group.offset_expiry``): whether the group may be
    deleted, the tombstones written and the group after their replay, per version (``Protocol.offset_delete_pending``,
    ``Protocol.expiry_keeps_group_with_open_txns``)."""
    if state.group is None:
        raise ValueError("cleanupExpiredOffsets of a group the coordinator does not know")
    r = cleanup_expired_offsets(state.group, commit_timestamps, unsubscribed, now_ms, retention_ms,
                                pending_aware=protocol.offset_delete_pending,
                                keep_with_open_txns=protocol.expiry_keeps_group_with_open_txns)
    return r, state._replace(group=r.group, log_end_offset=state.log_end_offset + len(r.tombstones))


def handle_cleanup_group_metadata(state: GroupCoordinatorState, kind: GroupKind, commit_timestamps: dict[int, int],
                                  now_ms: int, retention_ms: int,
                                  protocol: Protocol) -> tuple[ClassicExpiryResult, GroupCoordinatorState]:
    """The classic coordinator's ``cleanupGroupMetadata`` of the group (``model.group.classic_offset_expiry``): the
    expired offsets, whether the group became Dead, per version (``Protocol.classic_offset_retention``, KIP-496's
    branch from ``FEATURE_SINCE['kip-496']``); each tombstone is one record of the offsets log."""
    if state.group is None:
        raise ValueError("cleanupGroupMetadata of a group the coordinator does not know")
    r = cleanup_group_metadata(state.group, kind, commit_timestamps, now_ms, retention_ms,
                               rule=protocol.classic_offset_retention, kip_496="kip-496" not in protocol.lacks)
    written = len(r.expired) + int(r.group_tombstone)
    return r, state._replace(group=r.group, log_end_offset=state.log_end_offset + written)


class OffsetsPartition(NamedTuple):
    """The classic coordinator's view of the group's ``__consumer_offsets`` partition: the coordinator epoch recorded
    for it (``epochForPartitionId``; None: none) and its log (what a load replays)."""

    epoch: int | None
    log: tuple[OffsetsLogRecord, ...]


def handle_load_offsets_partition(state: GroupCoordinatorState, partition: OffsetsPartition, coordinator_epoch: int,
                                  protocol: Protocol) -> tuple[bool, OffsetsPartition, GroupCoordinatorState]:
    """``loadGroupsAndOffsets`` at ``coordinator_epoch`` (``model.group.offsets_load``): whether it ran (the epoch
    check, ``Protocol.group_load_epoch_checked``), the partition's epoch after, and the coordinator after. A group
    still cached is kept (``addGroup``)."""
    ran, epoch = coordinator_epoch_update(partition.epoch, coordinator_epoch, checked=protocol.group_load_epoch_checked)
    partition = partition._replace(epoch=epoch)
    if not ran or state.group is not None:
        return ran, partition, state
    group = load_group(partition.log, state.num_partitions, empty_control_batch_ok=protocol.empty_control_batch_ok)
    end = max((r.at + 1 for r in partition.log), default=state.log_end_offset)
    return ran, partition, state._replace(group=group, log_end_offset=max(state.log_end_offset, end))


def handle_unload_offsets_partition(state: GroupCoordinatorState, partition: OffsetsPartition,
                                    coordinator_epoch: int | None,
                                    protocol: Protocol) -> tuple[bool, OffsetsPartition, GroupCoordinatorState]:
    """``removeGroupsAndOffsets`` (None: a StopReplica without an epoch): whether it ran, the partition's epoch after,
    and the coordinator after (the group, its offsets and pending transactional offsets gone from memory)."""
    ran, epoch = coordinator_epoch_update(partition.epoch, coordinator_epoch, checked=protocol.group_load_epoch_checked)
    return ran, partition._replace(epoch=epoch), (state._replace(group=None) if ran else state)


def handle_leave_group(state: GroupCoordinatorState, leaving: tuple[LeavingMember, ...],
                       protocol: Protocol) -> tuple[LeaveGroupResult, GroupCoordinatorState]:
    """A classic group's LeaveGroup (``model.group.leave_group``, per version: ``Protocol.leave_group``): the answer and
    the group after; a removed member's next TxnOffsetCommit is UNKNOWN_MEMBER_ID."""
    if state.group is None:
        raise ValueError("LeaveGroup of a group the coordinator does not know")
    if state.member_epochs is not None:
        raise ValueError("LeaveGroup of a KIP-848 consumer group (a classic member of one is not modelled)")
    r = leave_group(state.group, leaving, rule=protocol.leave_group)
    return r, state._replace(group=r.group)


def handle_txn_marker(state: GroupCoordinatorState, producer_id: int, is_commit: bool) -> GroupCoordinatorState:
    """A COMMIT/ABORT marker on the offsets partition: the producer's pending offsets are
    materialised where no newer commit was written (log order), or dropped."""
    if state.group is None:
        return state
    return state._replace(group=complete_pending_txn_offset_commit(state.group, producer_id, is_commit),
                          log_end_offset=state.log_end_offset + 1)


def append_offset_commit(state: GroupCoordinatorState, partition: int, offset: int,
                         log_offset: int | None = None) -> GroupCoordinatorState:
    """A plain OffsetCommit whose record was written at ``log_offset`` (default the log end)."""
    group = state.group if state.group is not None else new_group(state.num_partitions)
    at = state.log_end_offset if log_offset is None else log_offset
    offsets = list(group.offsets)
    offsets[partition] = CommittedOffset(offset, at)
    return state._replace(group=group._replace(offsets=tuple(offsets)), log_end_offset=max(state.log_end_offset, at + 1))


__all__ = [
    "ExpiryResult",
    "GroupCoordinatorState",
    "GroupState",
    "LeaveGroupResult",
    "LeavingMember",
    "OffsetDeleteResult",
    "OffsetsLogRecord",
    "OffsetsPartition",
    "TxnOffsetCommitRequest",
    "append_offset_commit",
    "handle_cleanup_expired_offsets",
    "handle_delete_all_offsets",
    "handle_leave_group",
    "handle_load_offsets_partition",
    "handle_offset_delete",
    "handle_offset_fetch",
    "handle_partitions_deleted",
    "handle_txn_marker",
    "handle_txn_offset_commit",
    "handle_unload_offsets_partition",
    "marker_answer",
    "replay_offset_tombstone_record",
    "txn_offset_commit_answer",
    "txn_offset_commit_errors",
]
