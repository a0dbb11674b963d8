"""OffsetDelete (KIP-496, KAFKA-8730 e24d0e22abb, first tag 2.4.0) for the partitions of one topic, and what it does to
the group's pending transactional offsets.

The classic coordinator (2.4.0 .. 4.0.x ``GroupCoordinator.handleDeleteOffsets`` -> ``GroupMetadata.removeOffsets``):
a topic the group is subscribed to is refused with GROUP_SUBSCRIBED_TO_TOPIC; otherwise every partition is answered
NONE, its committed offset removed (a tombstone written for it) and its pending offsets, plain and transactional, of
every producer dropped from memory without a record (2.4.0 and 4.0.0 alike; the model's group keeps the transactional
ones only, a plain commit's pending offset is the harness's).

The new group coordinator (``OffsetMetadataManager.deleteOffsets`` and the tombstone's ``replay``): the same answers;
from KAFKA-14505 [8/8] (e7fa0edd635, first tag 3.8.0; the same at 4.0.0 .. 4.2.0-rc1) a tombstone is written when the
partition has a committed offset *or* a pending transactional one, and its replay removes the committed offset and the
partition's pending offsets of every open transaction of the group; 3.7.x wrote it for a committed offset only and its
replay left the pending ones.

DeleteGroups on the new coordinator (``OffsetMetadataManager.deleteAllOffsets``, then the tombstones' replay): a
tombstone for every committed offset of the group and, from KAFKA-14505 [8/8] (the same commit), one for every partition
with only pending transactional offsets (none twice); the count of tombstones is what it answers. 3.7.x tombstoned the
committed offsets only, and their replay left the pending ones (read at 3.7.0 l.641-657, 1eb7644, 3.9.1 and 4.1.0
l.796-823 alike). A tombstone's replay (``OffsetMetadataManager.replay`` of a null value) removes the committed offset
and, from that commit, the partition's pending offsets of every open transaction of the group.

A topic deletion on the new coordinator (``GroupCoordinatorService.onPartitionsDeleted`` -> each shard's
``OffsetMetadataManager.onPartitionsDeleted``, then the tombstones' replay): from KAFKA-16168 (af41fc3614, first tag
3.8.0; the same at 1eb7644 and 4.2.0-rc1 l.1087-1118) a tombstone for each deleted partition of every group with a
committed offset, then one for each open transaction holding a pending offset for it (``pendingTransactionalOffsets``
walked producer by producer, so a partition can get several); 3.7.x's ``onPartitionsDeleted`` only checked that the
coordinator is active (3.7.2 GroupCoordinatorService l.1001-1006) and deleted nothing.

No machine reads this module (kafka.eos's groups delete no offsets); the conformance interface does.
"""

from __future__ import annotations

from typing import NamedTuple

from ..errors import Errors
from .metadata import NO_COMMIT, GroupMeta


class OffsetDeleteResult(NamedTuple):
    #: the error of each requested partition, in request order
    errors: tuple[int, ...]
    #: the partitions an offset-commit tombstone is written for
    tombstones: tuple[int, ...]
    group: GroupMeta


def _drop(group: GroupMeta, partition: int, *, pending: bool) -> GroupMeta:
    offsets = list(group.offsets)
    offsets[partition] = NO_COMMIT
    kept = tuple(e for e in group.pending if e.partition != partition) if pending else group.pending
    return group._replace(offsets=tuple(offsets), pending=kept)


def replay_offset_tombstone(group: GroupMeta, partition: int, *, pending_aware: bool) -> GroupMeta:
    """The replay of an offset-commit tombstone for ``partition``; ``pending_aware``: KAFKA-14505 [8/8]
    (``Protocol.offset_delete_pending``) also drops the partition's pending transactional offsets."""
    return _drop(group, partition, pending=pending_aware)


def delete_all_offsets(group: GroupMeta, *, pending_aware: bool) -> tuple[tuple[int, ...], GroupMeta]:
    """``deleteAllOffsets`` (the new coordinator's DeleteGroups): the partitions tombstoned, committed ones first as
    Kafka writes them (their count is the answer), and the group after the tombstones' replay."""
    committed = tuple(p for p, c in enumerate(group.offsets) if c.offset >= 0)
    # KAFKA-14505 [8/8]: a partition with both gets one tombstone, not two
    pending_only = tuple(sorted({e.partition for e in group.pending} - set(committed))) if pending_aware else ()
    tombstones = committed + pending_only
    for p in tombstones:
        group = replay_offset_tombstone(group, p, pending_aware=pending_aware)
    return tombstones, group


def delete_offsets(group: GroupMeta, partitions: tuple[int, ...], *, subscribed: bool, new_coordinator: bool,
                   pending_aware: bool) -> OffsetDeleteResult:
    """``partitions`` of one topic; ``subscribed``: the group is subscribed to the topic; ``pending_aware``: the new
    coordinator's rule from KAFKA-14505 [8/8] (``Protocol.offset_delete_pending``)."""
    if subscribed:
        return OffsetDeleteResult((int(Errors.GROUP_SUBSCRIBED_TO_TOPIC),) * len(partitions), (), group)
    tombstones: list[int] = []
    for p in partitions:
        committed = group.offsets[p].offset >= 0
        has_pending = any(e.partition == p for e in group.pending)
        if new_coordinator:
            if committed or (pending_aware and has_pending):
                tombstones.append(p)
                group = _drop(group, p, pending=pending_aware)
        else:
            if committed:
                tombstones.append(p)
            group = _drop(group, p, pending=True)
    return OffsetDeleteResult((int(Errors.NONE),) * len(partitions), tuple(tombstones), group)


def delete_partitions(group: GroupMeta, partitions: tuple[int, ...], *,
                      pending_aware: bool) -> tuple[tuple[int, ...], GroupMeta]:
    """One group's part of a topic deletion (KAFKA-16168's ``onPartitionsDeleted``): the tombstones written, the
    committed offsets' first and then each open transaction's, producer by producer, and the group after their replay
    (``pending_aware``: KAFKA-14505 [8/8]'s replay, which drops the pending offsets too)."""
    deleted = frozenset(partitions)
    tombstones = [p for p, c in enumerate(group.offsets) if c.offset >= 0 and p in deleted]
    for pid in sorted({e.producer_id for e in group.pending}):
        tombstones += sorted({e.partition for e in group.pending if e.producer_id == pid and e.partition in deleted})
    for p in tombstones:
        group = replay_offset_tombstone(group, p, pending_aware=pending_aware)
    return tuple(tombstones), group
