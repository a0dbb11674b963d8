"""What one pass of the log cleaner keeps of a compacted partition's transactional data (``LogCleaner.Cleaner.cleanInto``
with ``CleanedTransactionMetadata``, read at 1eb7644; the same rules at 3.9.1 .. 4.2.0-rc1, where the class moved to
the storage module by KAFKA-14485).

The rules: a batch of an aborted transaction is dropped whatever its keys; a data record is kept unless the pass's
offset map holds its key at a later offset; an ABORT marker stays while a batch of its transaction is still read, a
COMMIT marker while a batch of its transaction is read in the same pass (KAFKA-8335); a marker with nothing left of its
transaction gets a delete horizon (now + delete.retention.ms) the first time and goes in a pass at or past it (KIP-534,
KAFKA-8522); the batch holding a live producer's last data offset, or, when it has none, its last marker of the current
epoch, is kept even if emptied (KAFKA-5490, KAFKA-6854), so a reload rebuilds its last sequence and epoch."""

from __future__ import annotations

from typing import NamedTuple

DATA, COMMIT, ABORT = 0, 1, 2


class LogBatch(NamedTuple):
    base_offset: int
    last_offset: int
    producer_id: int  # -1: none
    epoch: int
    last_sequence: int  # -1: none
    transactional: bool
    kind: int  # DATA / COMMIT / ABORT
    #: the records left: (offset, key); a control batch holds its one marker record until a pass discards it
    records: tuple[tuple[int, str | None], ...]
    #: KIP-534's delete horizon in the batch header (-1: not set)
    delete_horizon: int = -1


class IndexedAbort(NamedTuple):
    """An aborted transaction index entry (``AbortedTxn``): the producer, the transaction's first offset, its marker's."""

    producer_id: int
    first_offset: int
    last_offset: int


class LastRecord(NamedTuple):
    """``UnifiedLog.lastRecordsOfActiveProducers``: a live producer's last data offset (-1: none) and epoch."""

    last_data_offset: int
    epoch: int


class CleanPass(NamedTuple):
    """One pass: the batches below ``clean_upto`` are cleaned; the offset map holds the keys of the non-aborted data
    records in [``map_from``, ``map_upto``) at their latest offset."""

    clean_upto: int
    map_from: int
    map_upto: int
    now: int
    delete_retention_ms: int


class Cleaned(NamedTuple):
    batches: tuple[LogBatch, ...]
    aborted_index: tuple[IndexedAbort, ...]
    #: a control batch whose removal was decided by the delete horizon (the rule KIP-534 changed)
    horizon_consulted: bool


class _Txns:
    """``CleanedTransactionMetadata``: the transactions the pass is inside as it reads the log in offset order."""

    def __init__(self, aborted: tuple[IndexedAbort, ...]) -> None:
        self.pending = sorted(aborted, key=lambda a: a.first_offset)
        self.aborted: dict[int, tuple[IndexedAbort, bool]] = {}
        self.committed: set[int] = set()
        self.index: list[IndexedAbort] = []

    def _up_to(self, offset: int) -> None:
        while self.pending and self.pending[0].first_offset <= offset:
            a = self.pending.pop(0)
            self.aborted.setdefault(a.producer_id, (a, False))

    def data(self, b: LogBatch) -> bool:
        """A data batch read: True when it belongs to an aborted transaction (it can go)."""
        self._up_to(b.last_offset)
        if not b.transactional:
            return False
        if b.producer_id in self.aborted:
            self.aborted[b.producer_id] = (self.aborted[b.producer_id][0], True)
            return True
        self.committed.add(b.producer_id)
        return False

    def control(self, b: LogBatch) -> bool:
        """A marker read: True when nothing of its transaction is left (it can go once its horizon passed)."""
        self._up_to(b.last_offset)
        if not b.records:
            return True
        if b.kind == ABORT:
            entry = self.aborted.pop(b.producer_id, None)
            if entry is not None and entry[1]:
                self.index.append(entry[0])
                return False
            return True
        if b.producer_id in self.committed:
            self.committed.discard(b.producer_id)
            return False
        return True


def latest_offsets(batches: tuple[LogBatch, ...], aborted: tuple[IndexedAbort, ...], lo: int,
                   hi: int) -> dict[str | None, int]:
    """``buildOffsetMap``: each key's latest offset among the data records in [lo, hi), aborted batches skipped."""
    txns, out = _Txns(aborted), dict[str | None, int]()
    for b in batches:
        if b.kind != DATA:
            txns.control(b)
            continue
        if txns.data(b) or b.base_offset >= hi:
            continue
        out.update((key, off) for off, key in b.records if lo <= off < hi)
    return out


def clean(batches: tuple[LogBatch, ...], aborted: tuple[IndexedAbort, ...], producers: dict[int, LastRecord],
          p: CleanPass) -> Cleaned:
    """One cleaning pass over the batches below ``p.clean_upto``; ``aborted`` is the transaction index of the log.
    The index entries of the cleaned range are rewritten: an aborted transaction stays indexed while its marker still
    has batches to abort."""
    offsets = latest_offsets(batches, aborted, p.map_from, p.map_upto)
    txns = _Txns(aborted)
    kept: list[LogBatch] = []
    consulted = False
    for b in batches:
        if b.last_offset >= p.clean_upto:
            kept.append(b)
            continue
        if b.kind == DATA:
            discard = txns.data(b)
            records = () if discard else tuple((o, k) for o, k in b.records if offsets.get(k, -1) <= o)
        else:
            can_discard = txns.control(b)
            consulted = consulted or (can_discard and bool(b.records))
            discard = can_discard and 0 <= b.delete_horizon <= p.now
            records = () if discard else b.records
            if can_discard and not discard and b.delete_horizon < 0:
                b = b._replace(delete_horizon=p.now + p.delete_retention_ms)
        last = producers.get(b.producer_id) if b.producer_id >= 0 else None
        retain_empty = last is not None and (
            b.last_offset == last.last_data_offset if last.last_data_offset >= 0
            else b.kind != DATA and b.epoch == last.epoch)
        if records or retain_empty:
            kept.append(b._replace(records=records))
    index = tuple(a for a in aborted if a.last_offset >= p.clean_upto) + tuple(txns.index)
    return Cleaned(tuple(kept), tuple(sorted(index, key=lambda a: a.last_offset)), consulted)
