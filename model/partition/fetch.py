"""A read_committed consumer's fetch from a partition leader (``Log.read`` with
``FetchIsolation.TXN_COMMITTED`` and the consumer's ``Fetcher`` / ``CompletedFetch``).

The leader returns the records from the fetch offset (at least the log start offset) up to the last
stable offset, with the aborted transactions that overlap that range: the aborted transaction index
keeps, per ABORT marker, the transaction's first and last offset, and a fetch of [start, upper) gets
every one with ``lastOffset >= start`` and ``firstOffset < upper`` (``TransactionIndex.
collectAbortedTxns``), so an ABORT marker *above* the LSO still hides data below it. The consumer
skips control records and the data of those aborted transactions and delivers the rest: data below
the LSO whose outcome it cannot see is delivered, which is what a correct LSO never allows (every
transaction below it is decided).
"""

from __future__ import annotations

from ..state import TxnPartitionState
from ..transactions.log import EntryKind
from .txn_produce import producer_state_lso


def read_committed_fetch(partition: TxnPartitionState, position: int) -> tuple[int, tuple[int, ...]]:
    """(the consumer's next position, the log offsets of the data records it delivers)."""
    log = partition.log
    start = max(position, partition.log_start_offset)
    end = producer_state_lso(partition)
    delivered = []
    for off in range(start, end):
        e = log[off]
        if e.kind != EntryKind.TXN_DATA:
            continue
        # the first marker of this producer after the record closes its transaction; an ABORT above the
        # LSO counts (the index entry overlaps the fetch range), which reading only up to ``end`` missed
        closing = next((later for later in log[off + 1:] if later.producer_id == e.producer_id
                        and later.kind in (EntryKind.COMMIT, EntryKind.ABORT)), None)
        if closing is not None and closing.kind == EntryKind.ABORT:
            continue
        delivered.append(off)
    return max(end, position), tuple(delivered)
