"""The classic group coordinator's ``__consumer_offsets`` partition: loading a group from it, unloading it, and the
coordinator epoch both check (``GroupMetadataManager``, 2.0.0 .. 4.0.x; 4.1.0 has only the new coordinator).

Load (``doLoadGroupsAndOffsets``, read at 1eb7644 l.583-752 and 4.0.1 l.580-749, the same, 3.9.1 but for renamed
collection calls, and 2.0.0's replay, the same but for the empty control batch below): the log is replayed batch by
batch. A plain offset commit's record puts the partition's committed offset (with its batch's base offset), a
transactional batch's puts it pending for the batch's producer id; a null
value (a tombstone) removes the partition from the plain offsets, or, in a transactional batch, from that producer's
pending ones, so a plain tombstone leaves every open transaction's pending offset of the partition (the new
coordinator's replay drops them from KAFKA-14505 [8/8], 3.8.0: ``offset_delete.replay_offset_tombstone``). A COMMIT
marker materialises its producer's pending offsets where no committed offset was written later in the log (log order,
``olderThan``), an ABORT drops them; both forget the producer. A control batch without records changes nothing
(KAFKA-7467, 79757c90df8, first tags 2.0.1 and 2.2.0; 2.0.0 called ``batch.iterator.next()`` and the load threw, so
no group of the partition was loaded: ``empty_control_batch_ok``). A group metadata record makes the group (Stable
with members, else Empty); its tombstone forgets the record, not the offsets. A group is loaded when it has a group
record, committed offsets or pending transactional offsets; one without a record is Empty at generation 0. A group
still cached is kept as it is (``addGroup`` is putIfAbsent).

Coordinator epoch (KAFKA-10614, c72ce005e70, first tag 3.0.0: ``maybeUpdateCoordinatorEpoch``): a load at an epoch
below the one recorded for the partition is ignored; an unload too, unless it carries no epoch (a StopReplica), which
always unloads and leaves the recorded epoch; an accepted epoch higher than the recorded one replaces it, an equal one
is accepted. Before 3.0.0 (2.8.0 ``scheduleLoadGroupAndOffsets`` / ``removeGroupsForPartition``) there was no epoch:
every load and unload ran (``epoch_checked`` false). An unload removes the partition's groups with their committed and
pending offsets from memory; a reload rebuilds them from the log.

No machine reads this module (kafka.eos's group coordinator never moves); the conformance interface does.
"""

from __future__ import annotations

from typing import NamedTuple

from .metadata import NO_MEMBER_ID, CommittedOffset, GroupMeta, GroupState, PendingTxnOffset, new_group

#: the record kinds of a replayed ``__consumer_offsets`` partition
COMMIT, TOMBSTONE, MARKER, EMPTY_CONTROL, GROUP, GROUP_TOMBSTONE = (
    "commit", "tombstone", "marker", "empty_control", "group", "group_tombstone")
#: a record written outside a transaction
NO_PRODUCER = -1


class OffsetsLogRecord(NamedTuple):
    """One record of the group's ``__consumer_offsets`` partition; ``at`` is its batch's base offset."""

    kind: str
    at: int
    partition: int = -1
    offset: int = -1
    #: the transactional batch's producer id (NO_PRODUCER: a plain batch)
    producer_id: int = NO_PRODUCER
    #: a marker's result
    is_commit: bool = True
    generation: int = 0
    members: tuple[int, ...] = ()


def load_group(records: tuple[OffsetsLogRecord, ...], num_partitions: int, *,
               empty_control_batch_ok: bool = True) -> GroupMeta | None:
    """The group as a load of ``records`` builds it, None when it is not loaded (nothing of it in the log, or the
    load failed)."""
    loaded: dict[int, CommittedOffset] = {}
    pending: dict[int, dict[int, CommittedOffset]] = {}
    record: GroupMeta | None = None
    for r in records:
        if r.kind == EMPTY_CONTROL:
            if not empty_control_batch_ok:
                return None  # 2.0.0: NoSuchElementException ends the load before any group is added
            continue
        if r.kind == MARKER:
            if r.is_commit:
                for p, c in pending.get(r.producer_id, {}).items():
                    if p not in loaded or loaded[p].appended_at < c.appended_at:
                        loaded[p] = c
            pending.pop(r.producer_id, None)
        elif r.kind in (COMMIT, TOMBSTONE):
            target = loaded if r.producer_id == NO_PRODUCER else pending.setdefault(r.producer_id, {})
            if r.kind == COMMIT:
                target[r.partition] = CommittedOffset(r.offset, r.at)
            else:
                target.pop(r.partition, None)
        elif r.kind == GROUP:
            state = GroupState.STABLE if r.members else GroupState.EMPTY
            record = new_group(num_partitions)._replace(state=int(state), generation_id=r.generation,
                                                         members=tuple(sorted(set(r.members))))
        elif r.kind == GROUP_TOMBSTONE:
            record = None
        else:
            raise ValueError(f"unknown __consumer_offsets record kind {r.kind!r}")
    has_pending = any(p for p in pending.values())
    if record is None and not loaded and not has_pending:
        return None
    group = record if record is not None else new_group(num_partitions)
    offsets = list(group.offsets)
    for p, c in loaded.items():
        offsets[p] = c
    entries = tuple(sorted(PendingTxnOffset(pid, p, c.offset, c.appended_at)
                           for pid, parts in pending.items() for p, c in parts.items()))
    return group._replace(offsets=tuple(offsets), pending=entries,
                          assignment=(NO_MEMBER_ID,) * num_partitions)


def coordinator_epoch_update(current: int | None, epoch: int | None, *, checked: bool) -> tuple[bool, int | None]:
    """``maybeUpdateCoordinatorEpoch``: whether a load or unload at ``epoch`` (None: an unload without one) runs, and
    the partition's recorded epoch after (None: none recorded)."""
    if not checked:
        return True, None
    if epoch is None:
        return True, current
    updated = epoch if current is None or epoch > current else current
    return epoch == updated, updated
