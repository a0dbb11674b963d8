"""The leader's producer state table (``ProducerStateManager``): lookup, update after an append,
truncation when the log start offset moves (before KAFKA-7190), and expiry by
``producer.id.expiration.ms`` (KIP-854; ``transactional.id.expiration.ms`` before 3.4)."""

from __future__ import annotations

from ..state import CachedBatch, ProducerStateEntry

Producers = tuple[ProducerStateEntry, ...]


def find_entry(producers: Producers, producer_id: int) -> ProducerStateEntry | None:
    for entry in producers:
        if entry.producer_id == producer_id:
            return entry
    return None


def put_entry(producers: Producers, entry: ProducerStateEntry) -> Producers:
    """Insert or replace ``entry`` keeping the table sorted by producer id (one canonical form)."""
    others = [e for e in producers if e.producer_id != entry.producer_id]
    others.append(entry)
    others.sort()
    return tuple(others)


def find_duplicate_batch(entry: ProducerStateEntry | None, epoch: int, seq: int,
                         last_seq: int | None = None) -> CachedBatch | None:
    """``ProducerStateEntry.findDuplicateBatch``: same epoch and a cached batch with the same
    sequence range ``seq .. last_seq`` (default: one record, ``seq``)."""
    if entry is None or entry.epoch != epoch:
        return None
    last = seq if last_seq is None else last_seq
    for batch in entry.batches:
        if batch.seq == last and first_sequence(batch) == seq:
            return batch
    return None


def first_sequence(batch: CachedBatch) -> int:
    """``BatchMetadata.firstSeq``: the last sequence minus the record count - 1, wrapping below 0
    past Integer.MAX_VALUE as ``DefaultRecordBatch.decrementSequence`` does."""
    first = batch.seq - batch.delta
    return first + 2**31 if first < 0 else first


def empty_entry(producer_id: int) -> ProducerStateEntry:
    """``ProducerStateEntry.empty``: epoch -1, coordinator epoch -1, no batches, no open transaction."""
    return ProducerStateEntry(producer_id, -1, (), 0, -1, -1)


def maybe_update_epoch(entry: ProducerStateEntry, epoch: int) -> ProducerStateEntry:
    """``maybeUpdateProducerEpoch``: another epoch clears the batch cache and becomes the stored one."""
    return entry if entry.epoch == epoch else entry._replace(epoch=epoch, batches=())


def add_batch(entry: ProducerStateEntry | None, producer_id: int, epoch: int, seq: int, offset: int,
              timestamp: int, cache_size: int) -> ProducerStateEntry:
    """``ProducerStateEntry.addBatch``: a new epoch clears the cache; keep the last ``cache_size``
    batches (``NUM_BATCHES_TO_RETAIN`` = 5); lastTimestamp := the batch's CreateTime. The coordinator
    epoch and the open transaction are kept."""
    entry = maybe_update_epoch(entry if entry is not None else empty_entry(producer_id), epoch)
    batches = (entry.batches + (CachedBatch(seq, offset),))[-cache_size:]
    return entry._replace(batches=batches, last_timestamp=timestamp)


def begin_transaction(entry: ProducerStateEntry, first_offset: int) -> ProducerStateEntry:
    """``appendDataBatch`` for a transactional batch: the first one opens the producer's transaction on
    the partition (``currentTxnFirstOffset``); later ones leave it."""
    if entry.current_txn_first_offset >= 0:
        return entry
    return entry._replace(current_txn_first_offset=first_offset)


def end_transaction(entry: ProducerStateEntry, epoch: int, coordinator_epoch: int,
                    timestamp: int) -> ProducerStateEntry:
    """``ProducerStateEntry.update`` for a written COMMIT/ABORT marker: the marker's epoch (another one
    clears the cache) and coordinator epoch are stored, the open transaction is closed."""
    return maybe_update_epoch(entry, epoch)._replace(coordinator_epoch=coordinator_epoch,
                                                     current_txn_first_offset=-1, last_timestamp=timestamp)


def truncate_head(producers: Producers, log_start_offset: int) -> Producers:
    """``ProducerStateManager.truncateHead`` / ``isProducerRetained`` (1.0-2.3; before KAFKA-7190):
    evict every producer whose last batch lies below the log start offset (a marker-only entry has
    no data offset and goes too). A retained producer keeps its whole batch cache: Kafka's
    ``removeBatchesOlderThan`` called ``dropWhile`` on a mutable queue and discarded the result,
    so the cache was never trimmed (fidelity audit A1)."""
    return tuple(e for e in producers if e.batches and e.batches[-1].offset >= log_start_offset)


def is_producer_expired(entry: ProducerStateEntry, now: int, expiration: int) -> bool:
    """``isProducerExpired``: no open transaction on the partition and now - lastTimestamp >= expiration."""
    return entry.current_txn_first_offset < 0 and now - entry.last_timestamp >= expiration


def remove_expired_producers(producers: Producers, now: int, expiration: int) -> Producers:
    return tuple(e for e in producers if not is_producer_expired(e, now, expiration))
