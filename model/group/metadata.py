"""``GroupMetadata`` (classic group coordinator) as an immutable record of ints, bools and tuples.

Member ids are positive ints; ``NO_MEMBER_ID`` (0) stands for Kafka's empty member id ``""``.
Group instance ids are non-negative ints; ``NO_INSTANCE_ID`` (-1) stands for ``null`` (a dynamic
member). Offsets are per input partition, indexed by partition number.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

NO_MEMBER_ID = 0  # ""
NO_INSTANCE_ID = -1  # null group.instance.id
NO_GENERATION = -1
NO_OFFSET = -1
#: ``appendedBatchOffset`` not yet known (``None``): the offsets record is not yet in the log
NOT_APPENDED = -1


class GroupState(IntEnum):
    """``GroupState`` of the classic coordinator."""

    EMPTY = 0
    PREPARING_REBALANCE = 1
    COMPLETING_REBALANCE = 2
    STABLE = 3
    DEAD = 4


class CommittedOffset(NamedTuple):
    """``CommitRecordMetadataAndOffset``: the offset and the log offset of the record that wrote it."""

    offset: int
    appended_at: int


NO_COMMIT = CommittedOffset(NO_OFFSET, NOT_APPENDED)


class PendingTxnOffset(NamedTuple):
    """An entry of ``pendingTransactionalOffsetCommits[producerId][partition]``."""

    producer_id: int
    partition: int
    offset: int
    appended_at: int


class GroupMeta(NamedTuple):
    state: int
    generation_id: int
    #: member ids, sorted
    members: tuple[int, ...]
    #: (group instance id, member id) of static members, sorted
    static_members: tuple[tuple[int, int], ...]
    #: owner member id of each input partition (NO_MEMBER_ID: unassigned), from the last SyncGroup
    assignment: tuple[int, ...]
    #: committed offset of each input partition
    offsets: tuple[CommittedOffset, ...]
    #: pending transactional offsets, sorted by (producer id, partition)
    pending: tuple[PendingTxnOffset, ...]
    #: (producer id, 1 for COMMIT / 0 for ABORT) of markers written on __consumer_offsets whose
    #: completion the group coordinator's scheduler has not run yet (``scheduleHandleTxnCompletion``,
    #: 2.0-3.9; ``pending_offsets.defer_txn_offset_completion``), in marker order
    completing: tuple[tuple[int, int], ...] = ()


def new_group(num_partitions: int) -> GroupMeta:
    return GroupMeta(int(GroupState.EMPTY), 0, (), (), (NO_MEMBER_ID,) * num_partitions,
                     (NO_COMMIT,) * num_partitions, ())


def has_member(group: GroupMeta, member_id: int) -> bool:
    return member_id in group.members


def static_member_id(group: GroupMeta, instance_id: int) -> int:
    """``getStaticMemberId``: the member id registered for the instance id, NO_MEMBER_ID if none."""
    for inst, member in group.static_members:
        if inst == instance_id:
            return member
    return NO_MEMBER_ID


def partitions_of(group: GroupMeta, member_id: int) -> tuple[int, ...]:
    return tuple(p for p, owner in enumerate(group.assignment) if owner == member_id and member_id != NO_MEMBER_ID)
