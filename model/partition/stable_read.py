"""A read_committed fetch from a leader whose followers set its high watermark (``UnifiedLog.lastStableOffset``,
``LocalLog.read`` with ``FetchIsolation.TXN_COMMITTED``): the same rule at 2.0.0 (``Replica.lastStableOffset``,
``TransactionIndex.collectAbortedTxns``), 1eb7644 and 4.2.0-rc1 (``UnifiedLog.lastStableOffset``).

kafka.eos's partitions have no followers (``partition.fetch`` reads up to the producer state's LSO); these rules
add the high watermark, which a completed transaction's marker must pass before the transaction is stable
(``ProducerStateManager.unreplicatedTxns``): the conformance interface reads them (``api.leader.read_committed``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple


class AbortedTxn(NamedTuple):
    """An entry of the aborted transaction index, written when an ABORT marker completes a transaction."""

    producer_id: int
    first_offset: int
    last_offset: int


def last_stable_offset(first_unstable: int | None, high_watermark: int) -> int:
    """``lastStableOffset``: the first unstable offset (an open transaction's first offset, or a completed one's whose
    marker is not yet below the high watermark) when it is below the high watermark, else the high watermark."""
    if first_unstable is not None and first_unstable < high_watermark:
        return first_unstable
    return high_watermark


def aborted_in_range(index: Iterable[AbortedTxn], start: int, upper: int) -> tuple[AbortedTxn, ...]:
    """``TransactionIndex.collectAbortedTxns(start, upper)``: every aborted transaction that ends at or after the fetch
    offset and starts before the upper bound, in index order. The upper bound is the offset index's first entry past
    the fetched bytes, else the next segment's base offset, else the log end offset (``LocalLog.
    addAbortedTransactions``), so an ABORT marker above the last stable offset still hides data below it."""
    return tuple(t for t in index if t.last_offset >= start and t.first_offset < upper)
