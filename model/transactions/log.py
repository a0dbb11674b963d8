"""A partition's log as the transactions see it: transactional batches, markers, LSO, read_committed.

Each entry is one batch (one record in the model). A transactional batch of a producer id opens a
transaction for that pid on the partition (``currentTxnFirstOffset``) unless one is open; a COMMIT or
ABORT marker of the pid closes it. The last stable offset is the first offset of the earliest open
transaction, or the high watermark (the log end: the model appends with acks=all and no lagging
replica). A read_committed consumer reads only below the LSO and skips batches of aborted
transactions (the aborted-transaction index); read_uncommitted reads everything below the high
watermark. Open transactions are derived from the log instead of stored, so they cannot disagree.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple


class EntryKind(IntEnum):
    DATA = 0  # non-transactional batch
    TXN_DATA = 1  # transactional batch
    COMMIT = 2  # control batch: COMMIT marker
    ABORT = 3  # control batch: ABORT marker


class LogEntry(NamedTuple):
    producer_id: int
    producer_epoch: int
    kind: int
    #: the payload (e.g. the input record the output came from), or the coordinator epoch of a marker
    value: int


Log = tuple[LogEntry, ...]

# the kinds as plain ints for the scans below (properties run them on every memo miss; reading an
# IntEnum member and comparing with it costs ~100 ns each, an int constant a few)
_TXN_DATA, _COMMIT = int(EntryKind.TXN_DATA), int(EntryKind.COMMIT)
_MARKERS = frozenset({int(EntryKind.COMMIT), int(EntryKind.ABORT)})


def is_marker(e: LogEntry) -> bool:
    return e.kind in _MARKERS


def open_transactions(log: Log) -> tuple[tuple[int, int], ...]:
    """``(producer_id, first offset)`` of every transaction still open on the partition, by pid."""
    first: dict[int, int] = {}
    for offset, e in enumerate(log):
        if e.kind == _TXN_DATA:
            first.setdefault(e.producer_id, offset)
        elif e.kind in _MARKERS:
            first.pop(e.producer_id, None)
    return tuple(sorted(first.items()))


def has_open_transaction(log: Log, producer_id: int) -> bool:
    return any(pid == producer_id for pid, _ in open_transactions(log))


def last_stable_offset(log: Log) -> int:
    opened = open_transactions(log)
    return min((off for _, off in opened), default=len(log))


def outcome_of(log: Log, offset: int) -> int:
    """The kind of the marker that closed the transaction holding ``log[offset]`` (``TXN_DATA`` if
    still open; ``DATA`` for a non-transactional batch)."""
    e = log[offset]
    if e.kind != _TXN_DATA:
        return int(e.kind)
    pid = e.producer_id
    for later in log[offset + 1:]:
        if later.producer_id == pid and later.kind in _MARKERS:
            return int(later.kind)
    return _TXN_DATA


def read_committed(log: Log) -> tuple[tuple[int, LogEntry], ...]:
    """``(offset, entry)`` of each data batch a read_committed consumer returns."""
    lso = last_stable_offset(log)
    return tuple((off, e) for off, e in enumerate(log[:lso])
                 if e.kind == EntryKind.DATA or (e.kind == EntryKind.TXN_DATA and outcome_of(log, off) == EntryKind.COMMIT))


def read_uncommitted(log: Log) -> tuple[tuple[int, LogEntry], ...]:
    return tuple((off, e) for off, e in enumerate(log) if not is_marker(e))


def committed_values(log: Log) -> tuple[int, ...]:
    """The payloads of committed transactional batches (what read_committed eventually sees)."""
    return tuple([e.value for off, e in enumerate(log) if e.kind == _TXN_DATA and outcome_of(log, off) == _COMMIT])
