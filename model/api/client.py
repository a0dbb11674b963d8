"""The producer client, one function per response or call: sequence arithmetic, a produce batch
drained, acknowledged or refused, the TxnOffsetCommit answer, the InitProducerId answer."""

from __future__ import annotations

from eoscheck.checker.ops import CONCRETE

from ..errors import NO_PRODUCER_ID
from ..group.offset_fetch import ConsumerFetchReaction, consumer_offset_fetch_reaction
from ..partition.sequence import increment_sequence as _increment
from ..producer.idempotent_epoch import bump_idempotent_epoch as _bump_pair
from ..producer.partition_sequences import (
    ErrorReaction,
    PartitionEntry,
    acknowledge,
    assign,
    bump_idempotent_epoch,
    expire_batch,
    mark_sequence_unresolved,
    mark_unresolved_after,
    maybe_resolve_sequences,
    maybe_update_producer_id_and_epoch,
    on_produce_error,
    restart_sequences,
)
from ..producer.txn_client import on_init_response
from ..producer.txn_offsets_client import (
    OffsetCommitReaction,
    on_txn_offset_commit_error,
)
from ..producer.txn_responses import APIS as TXN_RESPONSE_APIS
from ..producer.txn_responses import TxnResponseReaction, on_txn_response
from .protocol import Protocol

#: the client states in which ``TransactionManager.hasOngoingTransaction`` holds (IN_TRANSACTION,
#: completing, or an abortable error: "started until completion or a fatal error", 2.5 to trunk)
ONGOING_STATES = frozenset({"IN_TRANSACTION", "COMMITTING_TRANSACTION", "ABORTING_TRANSACTION", "ABORTABLE_ERROR"})


def has_ongoing_transaction(client_state: str) -> bool:
    return client_state in ONGOING_STATES


def next_idempotent_pair(producer_id: int, epoch: int, max_epoch: int) -> tuple[int, int]:
    """``bumpIdempotentProducerEpoch``: (producer id, epoch + 1), or at ``max_epoch`` no producer id
    and no epoch (``resetIdempotentProducerId``: InitProducerId follows)."""
    reset, new_epoch = _bump_pair(CONCRETE, max_epoch=max_epoch, producer_id=producer_id, epoch=epoch)
    return (NO_PRODUCER_ID, int(new_epoch)) if reset else (producer_id, int(new_epoch))


def increment_sequence(seq: int, inc: int, protocol: Protocol) -> int:
    """``DefaultRecordBatch.incrementSequence`` (``TxnPartitionEntry.incrementSequence``)."""
    return int(_increment(CONCRETE, max_seq=protocol.max_seq, seq=seq, inc=inc))


__all__ = [
    "TXN_RESPONSE_APIS",
    "ConsumerFetchReaction",
    "ErrorReaction",
    "OffsetCommitReaction",
    "PartitionEntry",
    "TxnResponseReaction",
    "acknowledge",
    "assign",
    "bump_idempotent_epoch",
    "consumer_offset_fetch_reaction",
    "expire_batch",
    "has_ongoing_transaction",
    "increment_sequence",
    "mark_sequence_unresolved",
    "mark_unresolved_after",
    "maybe_resolve_sequences",
    "maybe_update_producer_id_and_epoch",
    "next_idempotent_pair",
    "on_init_response",
    "on_produce_error",
    "on_txn_offset_commit_error",
    "on_txn_response",
    "restart_sequences",
]
