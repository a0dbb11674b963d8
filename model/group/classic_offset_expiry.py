"""The classic group coordinator's offset retention with pending transactional offsets:
``GroupMetadataManager.cleanupGroupMetadata()`` -> ``GroupMetadata.removeExpiredOffsets``, then the group made Dead
when it is Empty and ``hasOffsets`` is false, with the tombstones written for the removed offsets and, for a Dead group
of generation > 0, for the group.

Two rules (``ClassicRetentionRule``, ``Protocol.classic_offset_retention``):

* ``"expire-timestamp"`` (2.0.0 .. 2.0.1, ``removeExpiredOffsets(startMs)``): each offset carries the expire timestamp
  KafkaApis gave it at its commit, commit timestamp + offsets.retention.ms (a TxnOffsetCommit always: 2.0.1
  ``KafkaApis.convertTxnOffsets`` l.1906-1917), and expires once ``expireTimestamp < now``, whatever the group's state.
* ``"kip-211"`` (KIP-211, KAFKA-4682 418a91b5d4e, first tag 2.1.0; the same at 2.3.0, 2.4.0 and 1eb7644): a
  TxnOffsetCommit's offset has no expire timestamp (2.1.0 ``convertTxnOffsets``: ``expireTimestamp = None``), and
  which offsets expire depends on the group: an Empty group with a protocol type, ``now - base >= retention`` where
  base is the time the group became Empty (``currentStateTimestamp``; the commit timestamp when the group was loaded
  from a metadata record without it); a group without protocol type (a simple consumer's), from each commit
  timestamp; from KIP-496 (KAFKA-8730 e24d0e22abb, first tag 2.4.0) a consumer group whose subscribed topics are known,
  the offsets of the topics it does not subscribe to, from each commit timestamp; any other group, none.

Both skip a partition with a pending *plain* offset commit (the model's group keeps none) and neither looks at the
pending transactional offsets: a partition whose transaction is still open loses its committed offset (its tombstone
is written) and keeps the pending one, which the marker may commit later. ``hasOffsets`` counts the pending
transactional offsets (2.0.1 l.462, 2.1.0 l.541, 1eb7644 l.835), so an Empty group with an open transaction is not made
Dead. KIP-496's branch runs, up to KAFKA-13636 (78a37894965, first tags 3.0.1, 3.1.1, 3.2.0), for a consumer group in
any non-Empty state, and from it only for a Stable one; this module takes the Stable group only (both rules agree
there). No machine reads this module; the conformance interface does.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from .metadata import NO_COMMIT, GroupMeta, GroupState

ClassicRetentionRule = Literal["expire-timestamp", "kip-211"]
CLASSIC_RETENTION_RULES: tuple[ClassicRetentionRule, ...] = ("expire-timestamp", "kip-211")


class ClassicExpiryResult(NamedTuple):
    #: the partitions whose committed offset expired (an offset-commit tombstone is written for each)
    expired: tuple[int, ...]
    group: GroupMeta
    #: the group was made Dead (Empty and ``hasOffsets`` false after the expiry)
    dead: bool
    #: and its group-metadata tombstone was written too (``generation > 0``: a generation-0 group only stored offsets)
    group_tombstone: bool


class GroupKind(NamedTuple):
    """What ``removeExpiredOffsets`` reads of the group besides its offsets."""

    #: the group's protocol type ("consumer", another, or None for a simple consumer's group)
    protocol_type: str | None
    #: ``currentStateTimestamp``: when the group entered its state (None: loaded from a record without it)
    current_state_timestamp: int | None
    #: the partitions of topics the group subscribes to, or None when the subscription is not known
    subscribed: frozenset[int] | None


def _expired(group: GroupMeta, kind: GroupKind, commit_timestamps: dict[int, int], now_ms: int, retention_ms: int,
             rule: ClassicRetentionRule, kip_496: bool) -> list[int]:
    committed = [p for p, c in enumerate(group.offsets) if c.offset >= 0]
    if rule == "expire-timestamp":
        return [p for p in committed if commit_timestamps.get(p, 0) + retention_ms < now_ms]
    if kind.protocol_type is not None and group.state == GroupState.EMPTY:
        return [p for p in committed if now_ms - (kind.current_state_timestamp
                                                  if kind.current_state_timestamp is not None
                                                  else commit_timestamps.get(p, 0)) >= retention_ms]
    if kind.protocol_type is None:
        return [p for p in committed if now_ms - commit_timestamps.get(p, 0) >= retention_ms]
    if (kip_496 and kind.protocol_type == "consumer" and kind.subscribed is not None
            and group.state == GroupState.STABLE):
        return [p for p in committed
                if p not in kind.subscribed and now_ms - commit_timestamps.get(p, 0) >= retention_ms]
    return []


def cleanup_group_metadata(group: GroupMeta, kind: GroupKind, commit_timestamps: dict[int, int], now_ms: int,
                           retention_ms: int, *, rule: ClassicRetentionRule, kip_496: bool) -> ClassicExpiryResult:
    """One group's pass of ``cleanupGroupMetadata`` at ``now_ms``; ``kip_496``: the version has KIP-496's branch."""
    expired = _expired(group, kind, commit_timestamps, now_ms, retention_ms, rule, kip_496)
    offsets = tuple(NO_COMMIT if p in expired else c for p, c in enumerate(group.offsets))
    kept = group._replace(offsets=offsets)
    has_offsets = any(c.offset >= 0 for c in offsets) or bool(kept.pending)
    dead = kept.state == GroupState.EMPTY and not has_offsets
    if dead:
        kept = kept._replace(state=int(GroupState.DEAD))
    return ClassicExpiryResult(tuple(expired), kept, dead, dead and kept.generation_id > 0)
