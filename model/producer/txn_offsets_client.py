"""The transactional producer's reaction to a TxnOffsetCommit answer
(``TransactionManager.TxnOffsetCommitHandler``): which errors retry, which make the transaction
abortable (the application must abort), which are fatal for the producer."""

from __future__ import annotations

from typing import NamedTuple

from ..errors import RETRIABLE, Errors

RETRY, ABORTABLE, FATAL, DONE = "retry", "abortable", "fatal", "done"


class OffsetCommitReaction(NamedTuple):
    action: str  # DONE / RETRY / ABORTABLE / FATAL
    #: the exception the application sees (sendOffsetsToTransaction's result), '' if none
    exception: str


_ABORTABLE = {
    Errors.FENCED_INSTANCE_ID: "FencedInstanceIdException",
    Errors.TRANSACTION_ABORTABLE: "TransactionAbortableException",
    Errors.UNKNOWN_MEMBER_ID: "CommitFailedException",
    Errors.ILLEGAL_GENERATION: "CommitFailedException",
}
_FATAL = {
    Errors.INVALID_PRODUCER_EPOCH: "ProducerFencedException",
    Errors.PRODUCER_FENCED: "ProducerFencedException",
    # the broker's error itself, not the generic KafkaException of an unexpected answer
    Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT: "UnsupportedForMessageFormatException",
}


def on_txn_offset_commit_error(error: int) -> OffsetCommitReaction:
    if error == Errors.NONE:
        return OffsetCommitReaction(DONE, "")
    if error in RETRIABLE:
        return OffsetCommitReaction(RETRY, "")
    if error in _ABORTABLE:
        return OffsetCommitReaction(ABORTABLE, _ABORTABLE[Errors(error)])
    if error in _FATAL:
        return OffsetCommitReaction(FATAL, _FATAL[Errors(error)])
    return OffsetCommitReaction(FATAL, "KafkaException")
