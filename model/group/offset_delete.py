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
