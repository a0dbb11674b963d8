"""The transactional producer's reaction to an answer from the transaction coordinator
(``TransactionManager``'s ``InitProducerIdHandler``, ``AddPartitionsToTxnHandler``,
``AddOffsetsToTxnHandler``, ``EndTxnHandler`` and ``FindCoordinatorHandler.handleResponse``, 2.7+
with KIP-588 and KIP-890's TRANSACTION_ABORTABLE).

What every handler shares: NONE completes the request; NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE
look the coordinator up again and resend; any other retriable error resends; INVALID_PRODUCER_EPOCH
and PRODUCER_FENCED are a fatal ``ProducerFencedException`` (an old coordinator still answers
INVALID_PRODUCER_EPOCH for a fence); TRANSACTION_ABORTABLE is abortable. Where they differ:

* INVALID_TXN_STATE is fatal with its own exception (AddPartitionsToTxn, AddOffsetsToTxn, EndTxn);
* UNKNOWN_PRODUCER_ID and INVALID_PRODUCER_ID_MAPPING are ``abortableErrorIfPossible``: abortable
  with an epoch bump after the abort when the coordinator can bump (InitProducerId v3+), otherwise
  fatal (AddPartitionsToTxn, AddOffsetsToTxn, EndTxn);
* an error nobody expected is fatal (a ``KafkaException``), except in AddPartitionsToTxn, which
  collects it as a partition error and makes the transaction abortable.

An unsupported version is fatal for every handler, before any of them reads the answer: the
network client reports the version mismatch (``TxnRequestHandler.onComplete``: ``versionMismatch``,
1.0 to trunk), which the model writes as the answer UNSUPPORTED_VERSION.

Authorization errors (2.5.0 to 4.2.0-rc1 alike, but for InitProducerId): TRANSACTIONAL_ID_AUTHORIZATION_FAILED is
a fatal ``TransactionalIdAuthorizationException`` for FindCoordinator, AddPartitionsToTxn, AddOffsetsToTxn and EndTxn;
GROUP_AUTHORIZATION_FAILED an abortable ``GroupAuthorizationException`` for FindCoordinator (the group coordinator's
lookup) and AddOffsetsToTxn; TOPIC_AUTHORIZATION_FAILED, in AddPartitionsToTxn, an abortable
``TopicAuthorizationException`` naming the refused topics (``on_add_partitions_errors``). InitProducerId's
TRANSACTIONAL_ID_AUTHORIZATION_FAILED and CLUSTER_AUTHORIZATION_FAILED were fatal (2.5.0-3.5.x) and are abortable
from KAFKA-13668 (ea81e99e598, first tag 3.6.0; ``auth_init_abortable``), after which the Sender resets the
producer to UNINITIALIZED (``txn_calls.handle_authorization_error``) so that initTransactions can be retried.
No machine answers an authorization error.
"""

from __future__ import annotations

from typing import NamedTuple

from ..errors import RETRIABLE, Errors

DONE, RETRY, LOOKUP_RETRY, ABORTABLE, FATAL = "done", "retry", "lookup-retry", "abortable", "fatal"

#: the requests whose answers this module reads
APIS = ("InitProducerId", "AddPartitionsToTxn", "AddOffsetsToTxn", "EndTxn", "FindCoordinator")


class TxnResponseReaction(NamedTuple):
    action: str  # DONE / RETRY / LOOKUP_RETRY / ABORTABLE / FATAL
    #: the exception the request's result and lastError carry ('' when none)
    exception: str
    #: epochBumpRequired is set: after the abort, InitProducerId bumps the epoch
    bump_epoch: bool = False


_EXCEPTION = {
    Errors.INVALID_TXN_STATE: "InvalidTxnStateException",
    Errors.UNKNOWN_PRODUCER_ID: "UnknownProducerIdException",
    Errors.INVALID_PRODUCER_ID_MAPPING: "InvalidPidMappingException",
    Errors.TRANSACTION_ABORTABLE: "TransactionAbortableException",
    Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED: "TransactionalIdAuthorizationException",
    Errors.CLUSTER_AUTHORIZATION_FAILED: "ClusterAuthorizationException",
    Errors.GROUP_AUTHORIZATION_FAILED: "GroupAuthorizationException",
    Errors.TOPIC_AUTHORIZATION_FAILED: "TopicAuthorizationException",
}


def on_disconnect(api: str) -> TxnResponseReaction:
    """The request's connection was lost, after the send (``TxnRequestHandler.onComplete``: wasDisconnected) or
    before it (``Sender.maybeSendAndPollTransactionalRequest``: the node not ready, or an IOException on send,
    then ``maybeFindCoordinatorAndRetry``): a request to a coordinator looks it up again, and the request is
    retried either way (1eb7644; the result stays incomplete)."""
    if api not in APIS:
        raise ValueError(f"not a transaction coordinator request: {api!r}")
    return TxnResponseReaction(RETRY if api == "FindCoordinator" else LOOKUP_RETRY, "")


def on_txn_response(api: str, error: int, *, can_bump_epoch: bool, pid_mapping_fatal: bool = False,
                    aborting: bool = False, abort_abortable_fatal: bool = False,
                    auth_init_abortable: bool = True) -> TxnResponseReaction:
    """The handler's reaction to ``error`` answering ``api`` (one of ``APIS``); ``can_bump_epoch``:
    ``TransactionManager.canBumpEpoch`` (the coordinator supports InitProducerId v3).
    ``pid_mapping_fatal``: the 4.0+ client, where INVALID_PRODUCER_ID_MAPPING is fatal (KAFKA-18019,
    PR 17822: recovering from it could let a fenced instance process again after the id expired).
    ``aborting``: the EndTxn answered is an abort's; ``abort_abortable_fatal``: the 4.1+ client, where
    TRANSACTION_ABORTABLE answering an abort is a fatal KafkaException (KAFKA-19250, PR 19656: retrying the
    abort would loop). ``auth_init_abortable``: InitProducerId's authorization errors are abortable (KAFKA-13668,
    3.6.0+); before, fatal."""
    if api not in APIS:
        raise ValueError(f"not a transaction coordinator request: {api!r}")
    if error == Errors.NONE:
        return TxnResponseReaction(DONE, "")
    if error == Errors.UNSUPPORTED_VERSION:
        # the client's version mismatch, before the handler (TxnRequestHandler.onComplete: fatalError)
        return TxnResponseReaction(FATAL, "UnsupportedVersionException")
    if api != "FindCoordinator" and error in (Errors.NOT_COORDINATOR, Errors.COORDINATOR_NOT_AVAILABLE):
        return TxnResponseReaction(LOOKUP_RETRY, "")
    if error in RETRIABLE:
        return TxnResponseReaction(RETRY, "")
    if api != "FindCoordinator" and error in (Errors.INVALID_PRODUCER_EPOCH, Errors.PRODUCER_FENCED):
        return TxnResponseReaction(FATAL, "ProducerFencedException")
    if api == "InitProducerId" and error in (Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                                             Errors.CLUSTER_AUTHORIZATION_FAILED):
        # "Abortable authorization error" (KAFKA-13668): the Sender's next loop resets the producer
        return TxnResponseReaction(ABORTABLE if auth_init_abortable else FATAL, _EXCEPTION[Errors(error)])
    if error == Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
        return TxnResponseReaction(FATAL, _EXCEPTION[Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED])
    if error == Errors.GROUP_AUTHORIZATION_FAILED and api in ("FindCoordinator", "AddOffsetsToTxn"):
        return TxnResponseReaction(ABORTABLE, _EXCEPTION[Errors.GROUP_AUTHORIZATION_FAILED])
    if error == Errors.TOPIC_AUTHORIZATION_FAILED and api == "AddPartitionsToTxn":
        return TxnResponseReaction(ABORTABLE, _EXCEPTION[Errors.TOPIC_AUTHORIZATION_FAILED])
    if error == Errors.TRANSACTION_ABORTABLE and api == "EndTxn" and aborting and abort_abortable_fatal:
        return TxnResponseReaction(FATAL, "KafkaException")
    if error == Errors.TRANSACTION_ABORTABLE:
        return TxnResponseReaction(ABORTABLE, _EXCEPTION[Errors.TRANSACTION_ABORTABLE])
    if api in ("AddPartitionsToTxn", "AddOffsetsToTxn", "EndTxn"):
        if error == Errors.INVALID_TXN_STATE:
            return TxnResponseReaction(FATAL, _EXCEPTION[Errors.INVALID_TXN_STATE])
        if error == Errors.INVALID_PRODUCER_ID_MAPPING and pid_mapping_fatal:
            return TxnResponseReaction(FATAL, _EXCEPTION[Errors.INVALID_PRODUCER_ID_MAPPING])
        if error in (Errors.UNKNOWN_PRODUCER_ID, Errors.INVALID_PRODUCER_ID_MAPPING):
            # abortableErrorIfPossible
            exc = _EXCEPTION[Errors(error)]
            return TxnResponseReaction(ABORTABLE, exc, True) if can_bump_epoch else TxnResponseReaction(FATAL, exc)
    if api == "AddPartitionsToTxn":
        # an unexpected partition error: "Could not add partitions to transaction due to errors"
        return TxnResponseReaction(ABORTABLE, "KafkaException")
    return TxnResponseReaction(FATAL, "KafkaException")


class AddPartitionsAnswer(NamedTuple):
    """``AddPartitionsToTxnHandler.handleResponse`` over an answer's partitions."""

    reaction: TxnResponseReaction
    #: the answer's partitions left the pending set without being added (the loop ran to its end with an error:
    #: "Remove the partitions from the pending set regardless of the result"); False after an early return
    dropped: bool
    #: TopicAuthorizationException's unauthorizedTopics (sorted)
    unauthorized_topics: tuple[str, ...] = ()


def topic_of(partition: str) -> str:
    """The topic of a partition written ``topic-N`` (any other name is its own topic)."""
    head, _, tail = partition.rpartition("-")
    return head if head and tail.isdigit() else partition


def on_add_partitions_errors(errors: dict[str, int], *, can_bump_epoch: bool, pid_mapping_fatal: bool = False,
                             ) -> AddPartitionsAnswer:
    """The answer's partitions in order (2.0.0 to 4.2.0-rc1 alike for these errors): NONE goes on; a retriable, fencing,
    fatal or producer-id error reacts at once as ``on_txn_response`` (the loop returns, the partitions stay pending);
    TOPIC_AUTHORIZATION_FAILED collects the partition's topic and OPERATION_NOT_ATTEMPTED (or an unexpected error) marks
    a partition error, and the loop goes on. After it, the partitions leave the pending set; refused topics make the
    transaction abortable with TopicAuthorizationException(topics), else a partition error with a KafkaException, else
    the partitions are added."""
    topics: set[str] = set()
    failed = False
    for tp, error in errors.items():
        if error == Errors.NONE:
            continue
        if error == Errors.TOPIC_AUTHORIZATION_FAILED:
            topics.add(topic_of(tp))
            continue
        if error == Errors.OPERATION_NOT_ATTEMPTED:
            failed = True
            continue
        r = on_txn_response("AddPartitionsToTxn", error, can_bump_epoch=can_bump_epoch,
                            pid_mapping_fatal=pid_mapping_fatal)
        if r.exception == "KafkaException" and r.action == ABORTABLE:
            # an unexpected partition error: collected, the loop goes on
            failed = True
            continue
        return AddPartitionsAnswer(r, False)
    if topics:
        return AddPartitionsAnswer(TxnResponseReaction(ABORTABLE, _EXCEPTION[Errors.TOPIC_AUTHORIZATION_FAILED]), True,
                                   tuple(sorted(topics)))
    if failed:
        return AddPartitionsAnswer(TxnResponseReaction(ABORTABLE, "KafkaException"), True)
    return AddPartitionsAnswer(TxnResponseReaction(DONE, ""), False)
