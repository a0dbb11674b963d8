"""The new group coordinator's offset retention with pending transactional offsets: ``OffsetMetadataManager.
cleanupExpiredOffsets(groupId, records)`` -> whether the group may be deleted, and the tombstones it writes.

For every committed offset of a topic the group is not subscribed to, the offset expires when ``now - its commit
timestamp >= offsets.retention.ms`` (``OffsetExpirationConditionImpl``, no per-partition expire timestamp); from
KAFKA-14505 [8/8] (e7fa0edd635, first tag 3.8.0) an expired offset whose partition has a pending transactional offset
is kept (3.7.x expired it). The group may be deleted when every offset expired and no transaction of the group is open
(the same commit). A group with no committed offset at all was deletable at once until KAFKA-19163 (1293658cca, first
tag 4.1.0; 48f75616d7 on the 4.0 branch, first tag 4.0.1): from then it too is kept while it has open transactions.
Read at 1eb7644 (l.862-898), 3.7.0, 3.8.0, 3.9.1, 4.0.0, 4.0.1 and 4.1.0 (l.1022-1061).

The model's open transactions of a group are its pending transactional offsets (4.1.0's ``OpenTransactions``, kept per
partition; 1eb7644's per group until the marker, which differs only once a tombstone dropped a producer's last pending
offset). No machine reads this module; the conformance interface does.
"""

from __future__ import annotations

from typing import NamedTuple

from .metadata import NO_COMMIT, GroupMeta


class ExpiryResult(NamedTuple):
    #: the partitions an offset-commit tombstone is written for (their replay removes the offsets)
    tombstones: tuple[int, ...]
    group: GroupMeta
    #: cleanupExpiredOffsets' answer: the group may be deleted
    deletable: bool


def cleanup_expired_offsets(group: GroupMeta, commit_timestamps: dict[int, int], unsubscribed: frozenset[int],
                            now_ms: int, retention_ms: int, *, pending_aware: bool,
                            keep_with_open_txns: bool) -> ExpiryResult:
    """``unsubscribed``: the partitions whose topic the group is not subscribed to; ``pending_aware``: KAFKA-14505 [8/8]
    (``Protocol.offset_delete_pending``); ``keep_with_open_txns``: KAFKA-19163."""
    open_txns = bool(group.pending)
    committed = [p for p, c in enumerate(group.offsets) if c.offset >= 0]
    if not committed:
        return ExpiryResult((), group, not (keep_with_open_txns and open_txns))
    all_expired = True
    tombstones: list[int] = []
    offsets = list(group.offsets)
    for p in committed:
        expired = p in unsubscribed and now_ms - commit_timestamps.get(p, 0) >= retention_ms
        if expired and not (pending_aware and any(e.partition == p for e in group.pending)):
            tombstones.append(p)
            offsets[p] = NO_COMMIT
        else:
            all_expired = False
    kept = group._replace(offsets=tuple(offsets))
    if pending_aware:
        # the tombstone's replay drops the partition's pending offsets too (none here: such a partition was kept)
        kept = kept._replace(pending=tuple(e for e in kept.pending if e.partition not in tombstones))
    return ExpiryResult(tuple(tombstones), kept, all_expired and not (pending_aware and open_txns))
