"""OffsetFetch with require_stable (KIP-447) and the consumer's reaction.

Coordinator (``GroupMetadataManager.getOffsets``): an unknown or Dead group answers offset -1 with
NONE; with require_stable, a partition with pending transactional offsets answers -1 with
UNSTABLE_OFFSET_COMMIT (KIP-447's text proposed PENDING_TRANSACTION(85); Kafka shipped code 88);
otherwise the committed offset, or -1 if none. Pending offsets are never returned.

Consumer (``ConsumerCoordinator.fetchCommittedOffsets``): UNSTABLE_OFFSET_COMMIT on any partition
fails the whole fetch with a retriable exception; the consumer backs off (100 ms doubling to 1 s) and
retries. When the partition has no committed offset the position comes from ``auto.offset.reset``
(earliest in the model: offset 0).

Whether the request sets require_stable (``require_stable`` switch):
``"always"`` - the shipped consumer (2.5+) always sets it (OffsetFetch v7+);
``"read_committed"`` - the KIP text: only read_committed (EOS) consumers wait for pending offsets;
``"never"`` - before KIP-447 (or a broker too old for v7: the flag is silently dropped).
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

from eoscheck.model.transactions.codes import Errors

from .metadata import NO_OFFSET, GroupMeta, GroupState
from .pending_offsets import has_pending_txn_offsets

REQUIRE_STABLE_MODES = ("always", "read_committed", "never")


def sends_require_stable(mode: str, *, read_committed: bool) -> bool:
    if mode not in REQUIRE_STABLE_MODES:
        raise ValueError(f"unknown require_stable mode {mode!r}; one of {REQUIRE_STABLE_MODES}")
    return mode == "always" or (mode == "read_committed" and read_committed)


class OffsetFetchAnswer(NamedTuple):
    error: int
    offset: int


def offset_fetch(group: GroupMeta | None, partition: int, *, require_stable: bool) -> OffsetFetchAnswer:
    if group is None or group.state == GroupState.DEAD:
        return OffsetFetchAnswer(int(Errors.NONE), NO_OFFSET)
    if require_stable and has_pending_txn_offsets(group, partition):
        return OffsetFetchAnswer(int(Errors.UNSTABLE_OFFSET_COMMIT), NO_OFFSET)
    return OffsetFetchAnswer(int(Errors.NONE), group.offsets[partition].offset)


class FetchReaction(IntEnum):
    RETRY = 0  # back off and send the OffsetFetch again
    POSITION = 1  # start fetching at the answered offset


#: ``auto.offset.reset = earliest`` in the model
EARLIEST_OFFSET = 0


def on_offset_fetch_answer(answer: OffsetFetchAnswer) -> tuple[int, int]:
    """(reaction, position): retry on UNSTABLE_OFFSET_COMMIT, else start at the committed offset or
    at the reset offset when none is committed."""
    if answer.error == Errors.UNSTABLE_OFFSET_COMMIT:
        return int(FetchReaction.RETRY), NO_OFFSET
    if answer.error != Errors.NONE:
        raise ValueError(f"OffsetFetch error {answer.error} is not modelled")
    pos = answer.offset if answer.offset != NO_OFFSET else EARLIEST_OFFSET
    return int(FetchReaction.POSITION), pos


class ConsumerFetchReaction(NamedTuple):
    """The consumer's reaction to one partition of an OffsetFetch answer."""

    retry: bool  # back off and fetch again (a RetriableException)
    failed: bool  # the fetch fails for good (the exception reaches the application)
    position: int  # the committed offset to start from (-1: none yet / no committed offset)


def consumer_offset_fetch_reaction(error: int, offset: int) -> ConsumerFetchReaction:
    """``ConsumerCoordinator.fetchCommittedOffsets`` / ``CommitRequestManager`` per partition:
    UNSTABLE_OFFSET_COMMIT is retriable (the partition stays initializing until a later fetch
    answers NONE); another partition error fails the fetch; NONE gives the committed offset
    (-1: none committed, the reset policy decides)."""
    if error == Errors.UNSTABLE_OFFSET_COMMIT:
        return ConsumerFetchReaction(True, False, NO_OFFSET)
    if error != Errors.NONE:
        return ConsumerFetchReaction(False, True, NO_OFFSET)
    return ConsumerFetchReaction(False, False, offset)
