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
    # the client's version mismatch (TxnRequestHandler.onComplete, every version): fatal before the handler
    Errors.UNSUPPORTED_VERSION: "UnsupportedVersionException",
}


#: the errors the 2.5-3.7 handler retries by name: the group coordinator's (after a new lookup), then an
#: unknown partition and a loading coordinator; any other error it does not list is fatal
_RETRIED_BY_NAME = frozenset({Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR, Errors.REQUEST_TIMED_OUT,
                              Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.COORDINATOR_LOAD_IN_PROGRESS})
#: ``error.exception() instanceof RetriableException`` (3.8.0+): ``RETRIABLE`` lacks NETWORK_EXCEPTION, whose
#: NetworkException is retriable too (it is what a disconnected request is answered with)
_RETRIABLE_EXCEPTION = RETRIABLE | {Errors.NETWORK_EXCEPTION}


def on_txn_offset_commit_error(error: int, *, any_retriable: bool = True) -> OffsetCommitReaction:
    """``any_retriable``: every retriable error is retried (PR 15266, 33a4709490f, first tag 3.8.0);
    False: only those the 2.5-3.7 handler names, another one is an unexpected, fatal error."""
    if error == Errors.NONE:
        return OffsetCommitReaction(DONE, "")
    if error in (_RETRIABLE_EXCEPTION if any_retriable else _RETRIED_BY_NAME):
        return OffsetCommitReaction(RETRY, "")
    if error in _ABORTABLE:
        return OffsetCommitReaction(ABORTABLE, _ABORTABLE[Errors(error)])
    if error in _FATAL:
        return OffsetCommitReaction(FATAL, _FATAL[Errors(error)])
    return OffsetCommitReaction(FATAL, "KafkaException")
