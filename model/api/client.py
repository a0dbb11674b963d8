"""The producer client, one function per response or call: sequence arithmetic, a produce batch
drained, acknowledged or refused, the TxnOffsetCommit answer, the InitProducerId answer."""

from __future__ import annotations

from eoscheck.checker.ops import CONCRETE

from ..group.offset_fetch import ConsumerFetchReaction, consumer_offset_fetch_reaction
from ..partition.sequence import increment_sequence as _increment
from ..producer.partition_sequences import (
    ErrorReaction,
    PartitionEntry,
    acknowledge,
    assign,
    bump_idempotent_epoch,
    on_produce_error,
    restart_sequences,
)
from ..producer.txn_client import on_init_response
from ..producer.txn_offsets_client import (
    OffsetCommitReaction,
    on_txn_offset_commit_error,
)
from .protocol import Protocol


def increment_sequence(seq: int, inc: int, protocol: Protocol) -> int:
    """``DefaultRecordBatch.incrementSequence`` (``TxnPartitionEntry.incrementSequence``)."""
    return int(_increment(CONCRETE, max_seq=protocol.max_seq, seq=seq, inc=inc))


__all__ = [
    "ConsumerFetchReaction",
    "ErrorReaction",
    "OffsetCommitReaction",
    "PartitionEntry",
    "acknowledge",
    "assign",
    "bump_idempotent_epoch",
    "consumer_offset_fetch_reaction",
    "increment_sequence",
    "on_init_response",
    "on_produce_error",
    "on_txn_offset_commit_error",
    "restart_sequences",
]
