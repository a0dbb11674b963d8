"""The producer client's answer to MESSAGE_TOO_LARGE for a batch of several records (``Sender.completeBatch``'s
split, ``RecordAccumulator.splitAndReenqueue``, ``ProducerBatch.split``), and which in-flight batch a late failure
takes out of ``TxnPartitionEntry.inflightBatchesBySequence``.

A split keeps exactly-once: the new batches take the big batch's producer id, epoch and sequences in order
(``ProducerBatch.split`` then ``setProducerState`` per new batch: KAFKA-5494, 5d2422258cb, first tag 1.0.0; the
transactional flag kept, KAFKA-5340, e4a6b50deca, 1.0.0), so the partition's next sequence does not move and a
retry of a split batch is not a new append. They are tracked as in flight in sequence order
(``addInFlightBatch`` / ``insertInSequenceOrder``) and count no attempt ("We do not decrement the retry attempts").
The big batch leaves the Sender's in-flight list too (``maybeRemoveAndDeallocateBatch``, KAFKA-8325, e4215c17846,
first tag 2.4.0), so its delivery timeout later expires nothing; 2.0 .. 2.3 expired it again (the KIP-360 client
of the conformance interface is 2.5+, so no profile reads the older path). Read at 2.5.0, 3.7.0 and 4.1.0.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import Errors
from .partition_sequences import InFlightBatch, PartitionEntry, _inc


def splits(error: int, records: int) -> bool:
    """``completeBatch``: MESSAGE_TOO_LARGE on a batch of more than one record (not done; magic v2, which every
    version the model covers writes) is split and sent again instead of failed."""
    return error == Errors.MESSAGE_TOO_LARGE and records > 1


def split_and_reenqueue(entry: PartitionEntry, name: str, sizes: Sequence[int], names: Sequence[str],
                        max_seq: int) -> PartitionEntry:
    """The in-flight batch ``name`` replaced by batches of ``sizes`` records (named ``names``), in its place:
    sequences from its base sequence under its own producer id and epoch; the next sequence is unchanged."""
    big = next(b for b in entry.in_flight if b.name == name)
    if sum(sizes) != big.records or len(sizes) != len(names) or min(sizes, default=0) < 1:
        raise ValueError(f"a split of {big.records} records into {list(sizes)}")
    seq, parts = big.base_sequence, []
    for part, count in zip(names, sizes, strict=True):
        parts.append(InFlightBatch(part, seq, count, big.producer_id, big.epoch, big.sequence_reset))
        seq = _inc(seq, count, max_seq)
    at = entry.in_flight.index(big)
    return entry._replace(in_flight=entry.in_flight[:at] + tuple(parts) + entry.in_flight[at + 1:])


def remove_in_flight_batch(entry: PartitionEntry, batch: InFlightBatch, *, by_identity: bool) -> PartitionEntry:
    """``TransactionManager.removeInFlightBatch`` of a batch the Sender fails (a late failure of one already
    expired included). ``inflightBatchesBySequence`` is a TreeSet: from KAFKA-13794 (f0a2b62b0e7, first tags 3.0.2,
    3.1.1 and 3.2.0) its comparator tells two batches of one base sequence apart, so only the batch itself goes;
    before, it compared base sequences only, and the removal took whichever in-flight batch had that sequence (a
    batch of a newer epoch that restarted at it: the batch is no longer tracked and its retry throws)."""
    if by_identity:
        kept = tuple(b for b in entry.in_flight if b.name != batch.name)
    else:
        kept = tuple(b for b in entry.in_flight if b.base_sequence != batch.base_sequence)
    return entry._replace(in_flight=kept)
