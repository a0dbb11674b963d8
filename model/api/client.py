"""The producer client, one function per response or call: sequence arithmetic, a produce batch
drained, acknowledged or refused, the TxnOffsetCommit answer, the InitProducerId answer."""

from __future__ import annotations

from eoscheck.checker.ops import CONCRETE

from ..errors import NO_PRODUCER_ID
from ..group.offset_fetch import ConsumerFetchReaction, consumer_offset_fetch_reaction
from ..partition.sequence import increment_sequence as _increment
from ..producer.batch_split import remove_in_flight_batch, split_and_reenqueue, splits
from ..producer.feature_versions import (
    ApiVersionsCache,
    FeatureCheck,
    FeatureRead,
    can_bump_epoch,
    coordinator_supports_epoch_bump,
    maybe_update_tv2_enabled,
    need_to_trigger_epoch_bump_from_client,
)
from ..producer.feature_versions import remove as remove_api_versions
from ..producer.feature_versions import update as update_api_versions
from ..producer.idempotent_epoch import bump_idempotent_epoch as _bump_pair
from ..producer.late_failure import LateFailure, handle_late_failed_batch
from ..producer.late_success import handle_late_completed_batch
from ..producer.partition_sequences import (
    FATAL_PRODUCE_ERRORS,
    ErrorReaction,
    InFlightBatch,
    PartitionEntry,
    acknowledge,
    assign,
    bump_idempotent_epoch,
    expire_batch,
    failed_batch_error,
    mark_sequence_unresolved,
    mark_unresolved_after,
    maybe_resolve_sequences,
    maybe_update_producer_id_and_epoch,
    on_produce_error,
    restart_sequences,
)
from ..producer.retry_backoff import DEFAULT_RETRY_BACKOFF_MS, retry_backoff_ms, send_delay_ms
from ..producer.sender_close import (
    CloseState,
    close_after_loops,
    close_transaction_manager,
    next_close_action,
    producer_id_fetch_on_close,
)
from ..producer.sender_close import abort_failure as close_abort_failure
from ..producer.txn_calls import STATES as CLIENT_STATES
from ..producer.txn_calls import CallResult as TxnCallResult
from ..producer.txn_calls import NextRequest as TxnNextRequest
from ..producer.txn_calls import (
    PendingCall,
    TxnClient,
    await_result,
    begin_abort,
    begin_commit,
    begin_transaction,
    complete_call,
    handle_authorization_error,
    has_partitions_to_add,
    init_producer_id_answered,
    initialize_transactions,
    is_partition_added,
    is_partition_pending_add,
    is_send_to_partition_allowed,
    may_drain,
    maybe_add_partition,
    next_request_to_end,
    partitions_added,
    partitions_not_added,
    prepare_transaction,
    retry_add_partitions,
    send_add_partitions,
    send_offsets_to_transaction,
    undrained_batch_error,
)
from ..producer.txn_calls import has_error as txn_has_error
from ..producer.txn_calls import states as client_states
from ..producer.txn_calls import to_abortable_error as txn_to_abortable_error
from ..producer.txn_calls import to_fatal_error as txn_to_fatal_error
from ..producer.txn_client import on_init_response
from ..producer.txn_offset_commit_version import build as build_txn_offset_commit
from ..producer.txn_offsets_client import (
    OffsetCommitReaction,
    OffsetsAnswer,
    on_txn_offset_commit_answer,
    on_txn_offset_commit_error,
)
from ..producer.txn_responses import APIS as TXN_RESPONSE_APIS
from ..producer.txn_responses import (
    AddPartitionsAnswer,
    TxnResponseReaction,
    on_add_partitions_errors,
    on_disconnect,
    on_txn_response,
    topic_of,
)
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
    "CLIENT_STATES",
    "DEFAULT_RETRY_BACKOFF_MS",
    "FATAL_PRODUCE_ERRORS",
    "TXN_RESPONSE_APIS",
    "AddPartitionsAnswer",
    "ApiVersionsCache",
    "CloseState",
    "ConsumerFetchReaction",
    "ErrorReaction",
    "FeatureCheck",
    "FeatureRead",
    "InFlightBatch",
    "LateFailure",
    "OffsetCommitReaction",
    "OffsetsAnswer",
    "PartitionEntry",
    "PendingCall",
    "TxnCallResult",
    "TxnClient",
    "TxnNextRequest",
    "TxnResponseReaction",
    "acknowledge",
    "assign",
    "await_result",
    "begin_abort",
    "begin_commit",
    "begin_transaction",
    "build_txn_offset_commit",
    "bump_idempotent_epoch",
    "can_bump_epoch",
    "client_states",
    "close_abort_failure",
    "close_after_loops",
    "close_transaction_manager",
    "complete_call",
    "consumer_offset_fetch_reaction",
    "coordinator_supports_epoch_bump",
    "expire_batch",
    "failed_batch_error",
    "handle_authorization_error",
    "handle_late_completed_batch",
    "handle_late_failed_batch",
    "has_ongoing_transaction",
    "has_partitions_to_add",
    "increment_sequence",
    "init_producer_id_answered",
    "initialize_transactions",
    "is_partition_added",
    "is_partition_pending_add",
    "is_send_to_partition_allowed",
    "mark_sequence_unresolved",
    "mark_unresolved_after",
    "may_drain",
    "maybe_add_partition",
    "maybe_resolve_sequences",
    "maybe_update_producer_id_and_epoch",
    "maybe_update_tv2_enabled",
    "need_to_trigger_epoch_bump_from_client",
    "next_close_action",
    "next_idempotent_pair",
    "next_request_to_end",
    "on_add_partitions_errors",
    "on_disconnect",
    "on_init_response",
    "on_produce_error",
    "on_txn_offset_commit_answer",
    "on_txn_offset_commit_error",
    "on_txn_response",
    "partitions_added",
    "partitions_not_added",
    "prepare_transaction",
    "producer_id_fetch_on_close",
    "remove_api_versions",
    "remove_in_flight_batch",
    "restart_sequences",
    "retry_add_partitions",
    "retry_backoff_ms",
    "send_add_partitions",
    "send_delay_ms",
    "send_offsets_to_transaction",
    "split_and_reenqueue",
    "splits",
    "topic_of",
    "txn_has_error",
    "txn_to_abortable_error",
    "txn_to_fatal_error",
    "undrained_batch_error",
    "update_api_versions",
]
