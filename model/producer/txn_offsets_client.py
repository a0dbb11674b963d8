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


#: ``TxnOffsetCommitHandler.handleResponse`` as it changed across releases (read at every tag 2.0.0 .. 3.9.0):
#: "2.0.0" retries the coordinator errors and UNKNOWN_TOPIC_OR_PARTITION; "2.0.1" also COORDINATOR_LOAD_IN_PROGRESS
#: (KAFKA-7296, 4f25f1fb711, first tags 2.0.1 and 2.1.0); "2.5" names the group's fencing (KIP-447: FENCED_INSTANCE_ID,
#: UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION), which before were unexpected, fatal errors (no pre-2.5 broker sends them:
#: 2.4.1 ``doCommitOffsets`` skips the membership checks for a transactional commit); "2.7": INVALID_PRODUCER_EPOCH
#: goes through ``isFatalException`` to ``error.exception()``, which KIP-588 (KAFKA-9911, 2.7.0) made
#: InvalidProducerEpochException (2.0-2.6's Errors map it to ProducerFencedException); "3.6": INVALID_PRODUCER_EPOCH
#: and PRODUCER_FENCED are both fatal ProducerFencedException by name (KAFKA-14278, ff77b3ad041, first tag 3.6.0)
HANDLERS = ("2.0.0", "2.0.1", "2.5", "2.7", "3.6")
_NO_LOAD_RETRY, _NO_GROUP_FENCING, _OLD_ERRORS = frozenset({"2.0.0"}), frozenset({"2.0.0", "2.0.1"}), \
    frozenset({"2.0.0", "2.0.1", "2.5"})

_ABORTABLE = {
    # every version: GroupAuthorizationException (GroupAuthorizationException.forGroupId from 2.4.0)
    Errors.GROUP_AUTHORIZATION_FAILED: "GroupAuthorizationException",
    Errors.FENCED_INSTANCE_ID: "FencedInstanceIdException",
    Errors.TRANSACTION_ABORTABLE: "TransactionAbortableException",
    Errors.UNKNOWN_MEMBER_ID: "CommitFailedException",
    Errors.ILLEGAL_GENERATION: "CommitFailedException",
}
#: what the handler did not name before KIP-447 (2.5.0)
_GROUP_FENCING = frozenset({Errors.FENCED_INSTANCE_ID, Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION})
_FATAL = {
    Errors.INVALID_PRODUCER_EPOCH: "ProducerFencedException",
    Errors.PRODUCER_FENCED: "ProducerFencedException",
    Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED: "TransactionalIdAuthorizationException",
    # the broker's error itself, not the generic KafkaException of an unexpected answer
    Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT: "UnsupportedForMessageFormatException",
    # the client's version mismatch (TxnRequestHandler.onComplete, every version): fatal before the handler
    Errors.UNSUPPORTED_VERSION: "UnsupportedVersionException",
}


#: the errors the 2.0.1-3.7 handler retries by name: the group coordinator's (after a new lookup), then an
#: unknown partition and a loading coordinator; any other error it does not list is fatal
_RETRIED_BY_NAME = frozenset({Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR, Errors.REQUEST_TIMED_OUT,
                              Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.COORDINATOR_LOAD_IN_PROGRESS})


def on_txn_offset_commit_error(error: int, *, any_retriable: bool = True, handler: str = "3.6") -> OffsetCommitReaction:
    """``any_retriable``: every retriable error is retried (PR 15266, 33a4709490f, first tag 3.8.0);
    False: only those the 2.0.1-3.7 handler names, another one is an unexpected, fatal error.
    ``handler``: the release whose named errors apply (``HANDLERS``; the newest, "3.6", by default)."""
    if handler not in HANDLERS:
        raise ValueError(f"unknown TxnOffsetCommit handler {handler!r} (one of {', '.join(HANDLERS)})")
    if error == Errors.NONE:
        return OffsetCommitReaction(DONE, "")
    # ``error.exception() instanceof RetriableException`` (3.8.0+), NETWORK_EXCEPTION's among them
    retried = RETRIABLE if any_retriable else _RETRIED_BY_NAME
    if error in retried and not (error == Errors.COORDINATOR_LOAD_IN_PROGRESS and handler in _NO_LOAD_RETRY):
        return OffsetCommitReaction(RETRY, "")
    if error in _ABORTABLE and not (error in _GROUP_FENCING and handler in _NO_GROUP_FENCING):
        return OffsetCommitReaction(ABORTABLE, _ABORTABLE[Errors(error)])
    if error == Errors.PRODUCER_FENCED and handler in _OLD_ERRORS:
        # no code 90 before 2.7.0: Errors.forCode gives UNKNOWN_SERVER_ERROR, an unexpected error (never sent)
        return OffsetCommitReaction(FATAL, "KafkaException")
    if error == Errors.INVALID_PRODUCER_EPOCH and handler == "2.7":
        return OffsetCommitReaction(FATAL, "InvalidProducerEpochException")
    if error in _FATAL:
        return OffsetCommitReaction(FATAL, _FATAL[Errors(error)])
    return OffsetCommitReaction(FATAL, "KafkaException")


class OffsetsAnswer(NamedTuple):
    """What a TxnOffsetCommit answer leaves of ``pendingTxnOffsetCommits`` and the send-offsets result."""

    #: the partitions whose offsets still wait to be committed
    pending: frozenset[str]
    #: DONE (every partition committed: the result completes), RETRY (the rest is sent again), or the error's
    #: ABORTABLE / FATAL reaction (the result fails and nothing stays pending)
    action: str
    #: the failing reaction's exception ('' if none)
    exception: str = ""


def on_txn_offset_commit_answer(pending: frozenset[str], errors: dict[str, int], *, any_retriable: bool = True,
                                handler: str = "3.6") -> OffsetsAnswer:
    """``TxnOffsetCommitHandler.handleResponse`` over the answer's partitions in order (1eb7644): NONE takes a
    partition off the pending set, a retriable error leaves it for the resend, the first abortable or fatal
    error fails the result (the loop stops) and the pending set is cleared; with none pending the result is
    done, else the request is re-enqueued. The result of sendOffsetsToTransaction completes only here, after
    AddOffsetsToTxn and TxnOffsetCommit both returned."""
    left = set(pending)
    for tp, error in errors.items():
        r = on_txn_offset_commit_error(error, any_retriable=any_retriable, handler=handler)
        if r.action == DONE:
            left.discard(tp)
        elif r.action in (ABORTABLE, FATAL):
            return OffsetsAnswer(frozenset(), r.action, r.exception)
    return OffsetsAnswer(frozenset(left), RETRY if left else DONE)
