"""The transactional producer's own calls: ``TransactionManager``'s state machine (which transitions
are valid, per version), what a call throws in an error state, a partition's way into the transaction
(``maybeAddPartition``, the AddPartitionsToTxn request and its successful answer) and whether the
accumulator may drain a batch for a partition (``isSendToPartitionAllowed``).

Read at apache/kafka 1eb7644 (TransactionManager.java) and at the release tags named below. No machine
reads this module: the composed machine's producers take only valid steps; the conformance interface
(``model/api/client.py``) does, for Kafka's TransactionManagerTest.

KAFKA-13412 (df2236d73bc on trunk, first tag 3.2.0; cde0046d15a on the 3.1 branch, first tag 3.1.1; 3.0.2 and
3.1.0 without it) made a timed-out ``initTransactions`` / ``commitTransaction`` / ``abortTransaction`` safe to
retry: the call's result is kept with its target state (``pendingTransition``) until the application has
awaited it, a retry of the same call gets it back, and every other call throws IllegalStateException
meanwhile. The same change made an invalid transition and ``sendOffsetsToTransaction`` outside a
transaction throw IllegalStateException (KafkaException before) and replaced ``failIfNotReadyForSend``
(which wrapped any error, a fencing one too, in a KafkaException) by ``maybeAddPartition``'s
``maybeFailWithError``. ``TxnClient.kafka_13412`` says which code a call runs.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from ..since import Since

UNINITIALIZED = "UNINITIALIZED"
INITIALIZING = "INITIALIZING"
READY = "READY"
IN_TRANSACTION = "IN_TRANSACTION"
#: KIP-939's state for a transaction prepared for a two-phase commit (4.1.0 on): only commit or abort leave it
PREPARED = "PREPARED_TRANSACTION"
COMMITTING = "COMMITTING_TRANSACTION"
ABORTING = "ABORTING_TRANSACTION"
ABORTABLE_ERROR = "ABORTABLE_ERROR"
FATAL_ERROR = "FATAL_ERROR"
#: ``TransactionManager.State`` before 4.1.0
STATES = (UNINITIALIZED, INITIALIZING, READY, IN_TRANSACTION, COMMITTING, ABORTING, ABORTABLE_ERROR, FATAL_ERROR)
#: ``TransactionManager.State`` from 4.1.0 (KIP-939: PREPARED_TRANSACTION after IN_TRANSACTION)
STATES_KIP_939 = (UNINITIALIZED, INITIALIZING, READY, IN_TRANSACTION, PREPARED, COMMITTING, ABORTING,
                  ABORTABLE_ERROR, FATAL_ERROR)

ILLEGAL_STATE = "IllegalStateException"
KAFKA_EXCEPTION = "KafkaException"

#: a version of ``State.isTransitionValid``'s table, named for its first release line
ClientTransitions = Literal["2.0", "2.5", "3.6", "4.0", "4.1"]


#: each version of the table: its first release and the evidence (``Protocol.client_transitions``; the profiles'
#: ``SWITCH_HISTORY`` entry is made from this)
TABLE_SINCE: dict[ClientTransitions, Since] = {
    "2.0": Since((2, 0, 0), "2.0.0 .. 2.4.1: no UNINITIALIZED case (the switch's default lets any state reach "
                 "it)"),
    "2.5": Since((2, 5, 0), "KIP-360 (2.5.0): UNINITIALIZED from READY for the idempotent producer's reset, "
                 "INITIALIZING also from ABORTING_TRANSACTION for the epoch bump"),
    "3.6": Since((3, 6, 0), "KAFKA-13668 (ea81e99e598, first tag 3.6.0; 3.5.2 without): UNINITIALIZED also from "
                 "ABORTABLE_ERROR, ABORTABLE_ERROR also from INITIALIZING; the same table at 3.9.1 (l.207-230)"),
    "4.0": Since((4, 0, 0), "KAFKA-18227 (9f511c6304, PR 18176, first tag 4.0.0; 3.9.1 and the 2024-10 "
                 "snapshot 1eb7644 without): INITIALIZING also from COMMITTING_TRANSACTION, the epoch bump a "
                 "commit queues when the client first sees transaction.version 2 "
                 "(beginCompletingTransaction: maybeUpdateTransactionV2Enabled(false), then "
                 "initializeTransactions(producerIdAndEpoch), 4.0.0 l.354-362); 4.0.0 and 4.0.1 l.213-214, 4.1.0 l.167-168, "
                 "4.2.0-rc1 l.166-167"),
    "4.1": Since((4, 1, 0), "KIP-939, KAFKA-19082 [3/4] (7f02c263a6, PR 19539, first tag 4.1.0; 4.0.1 "
                 "without): PREPARED_TRANSACTION from IN_TRANSACTION (prepareTransaction) or INITIALIZING, "
                 "COMMITTING_TRANSACTION and ABORTING_TRANSACTION also from it; 4.1.0 and 4.1.1 l.173-178, "
                 "4.2.0-rc1 l.172-177, the same at the mirror's main"),
}

#: ``State.isTransitionValid``: target -> the states it may be entered from (FATAL_ERROR from any), per
#: version of the table (``TABLE_SINCE``)
_ANY = frozenset(STATES)
_ANY_KIP_939 = frozenset(STATES_KIP_939)
_TABLE_3_6: dict[str, frozenset[str]] = {
    UNINITIALIZED: frozenset({READY, ABORTABLE_ERROR}), INITIALIZING: frozenset({UNINITIALIZED, ABORTING}),
    READY: frozenset({INITIALIZING, COMMITTING, ABORTING}), IN_TRANSACTION: frozenset({READY}),
    COMMITTING: frozenset({IN_TRANSACTION}), ABORTING: frozenset({IN_TRANSACTION, ABORTABLE_ERROR}),
    ABORTABLE_ERROR: frozenset({IN_TRANSACTION, COMMITTING, ABORTABLE_ERROR, INITIALIZING}), FATAL_ERROR: _ANY}
_TABLE_4_0 = {**_TABLE_3_6, INITIALIZING: frozenset({UNINITIALIZED, COMMITTING, ABORTING})}
TRANSITIONS: dict[ClientTransitions, dict[str, frozenset[str]]] = {
    "2.0": {UNINITIALIZED: _ANY, INITIALIZING: frozenset({UNINITIALIZED}),
            READY: frozenset({INITIALIZING, COMMITTING, ABORTING}), IN_TRANSACTION: frozenset({READY}),
            COMMITTING: frozenset({IN_TRANSACTION}), ABORTING: frozenset({IN_TRANSACTION, ABORTABLE_ERROR}),
            ABORTABLE_ERROR: frozenset({IN_TRANSACTION, COMMITTING, ABORTABLE_ERROR}), FATAL_ERROR: _ANY},
    "2.5": {UNINITIALIZED: frozenset({READY}), INITIALIZING: frozenset({UNINITIALIZED, ABORTING}),
            READY: frozenset({INITIALIZING, COMMITTING, ABORTING}), IN_TRANSACTION: frozenset({READY}),
            COMMITTING: frozenset({IN_TRANSACTION}), ABORTING: frozenset({IN_TRANSACTION, ABORTABLE_ERROR}),
            ABORTABLE_ERROR: frozenset({IN_TRANSACTION, COMMITTING, ABORTABLE_ERROR}), FATAL_ERROR: _ANY},
    "3.6": _TABLE_3_6,
    "4.0": _TABLE_4_0,
    "4.1": {**_TABLE_4_0, PREPARED: frozenset({IN_TRANSACTION, INITIALIZING}),
            COMMITTING: frozenset({IN_TRANSACTION, PREPARED}),
            ABORTING: frozenset({IN_TRANSACTION, PREPARED, ABORTABLE_ERROR}), FATAL_ERROR: _ANY_KIP_939},
}


def states(table: ClientTransitions) -> tuple[str, ...]:
    """``TransactionManager.State``'s values in the versions with ``table``."""
    return STATES_KIP_939 if PREPARED in TRANSITIONS[table] else STATES


def transition_valid(source: str, target: str, table: ClientTransitions) -> bool:
    return source in TRANSITIONS[table][target]


class TxnClient(NamedTuple):
    """What the calls read of a ``TransactionManager``."""

    state: str
    #: the class of ``lastError`` ('' when there is none)
    last_error: str = ""
    transactional: bool = True
    has_producer_id: bool = True
    #: newPartitionsInTransaction (added by maybeAddPartition, not yet sent)
    new: frozenset[str] = frozenset()
    #: pendingPartitionsInTransaction (in an AddPartitionsToTxn request in flight)
    pending: frozenset[str] = frozenset()
    #: partitionsInTransaction (the coordinator has added them)
    added: frozenset[str] = frozenset()
    #: setPoisonStateOnInvalidTransition(true): the call runs on the Sender's thread (KAFKA-14831, 3.6.0+)
    background: bool = False
    #: transactionStarted: a partition or the offsets were added (the coordinator has a transaction to end)
    started: bool = False
    #: the last initTransactions / commitTransaction / abortTransaction result kept for a retry (None: none)
    pending_call: PendingCall | None = None
    #: the client has KAFKA-13412 (3.1.1 / 3.2.0 on): ``pendingTransition`` and IllegalStateException for an
    #: invalid call; False: 2.3.0-3.1.0's ``pendingResult`` (KAFKA-7763, 201da054272) and KafkaException
    kafka_13412: bool = True
    #: pendingTxnOffsetCommits: partitions whose offsets AddOffsetsToTxn let through and TxnOffsetCommit has
    #: not yet committed (``hasPendingOffsetCommits``; ``txn_offsets_client.on_txn_offset_commit_answer``)
    pending_offsets: frozenset[str] = frozenset()
    #: an AddPartitionsToTxn answered with a retriable error waits in the queue to be sent again
    add_partitions_queued: bool = False


class PendingCall(NamedTuple):
    """The result a retry of a transactional call may get back: ``pendingTransition`` (KAFKA-13412: the
    call's target state and name, kept until the result is acked, i.e. ``await`` returned) or, before it,
    ``pendingResult`` (returned only while the manager is in the retried call's target state, dropped once
    returned completed). 2.0.0-2.2.x kept no result at all (KAFKA-7763, first tag 2.3.0): a call repeated
    in its own target state was an invalid transition there; that falls inside the kafka-2.0.1-2.3 profile
    and is not modelled."""

    target: str
    operation: str
    #: the coordinator answered (the result is done or failed)
    completed: bool = False
    #: TransactionalRequestResult.isAcked: an ``await`` returned after completion (KAFKA-13412)
    acked: bool = False
    #: the exception the result failed with, which ``await`` throws ('' when it succeeded or is not completed;
    #: a failed response's error, or the forced close's KafkaException: ``TransactionManager.close``, ``sender_close``)
    error: str = ""


class CallResult(NamedTuple):
    client: TxnClient
    #: the exception the call throws ('' when it returns)
    exception: str = ""
    #: the call returned the kept result of an earlier call (a retry after a timeout)
    reused: bool = False


def _invalid(c: TxnClient) -> str:
    """What an invalid call throws: IllegalStateException from KAFKA-13412, KafkaException before
    (``transitionTo`` at 2.0.0, 2.5.0 and 3.1.0; ``sendOffsetsToTransaction`` outside a transaction)."""
    return ILLEGAL_STATE if c.kafka_13412 else KAFKA_EXCEPTION


def has_error(c: TxnClient) -> bool:
    return c.state in (ABORTABLE_ERROR, FATAL_ERROR)


def fail_with_error(c: TxnClient) -> str:
    """``maybeFailWithError``: what a call made in an error state throws ('' when not in one). The
    fencing errors are rethrown as themselves, the poisoned state's IllegalStateException as one
    (3.6.0+), any other error wrapped in a KafkaException."""
    if not has_error(c):
        return ""
    if c.last_error in ("ProducerFencedException", "InvalidProducerEpochException", ILLEGAL_STATE):
        return c.last_error
    return KAFKA_EXCEPTION


def transition(c: TxnClient, target: str, table: ClientTransitions, error: str = "") -> CallResult:
    """``transitionTo(target, error)``: an invalid transition throws IllegalStateException; made on the
    Sender's thread (``background``) it also poisons the manager: FATAL_ERROR with that exception as
    the last error (KAFKA-14831, a81f35c1c8f, 3.6.0; before, the state was left as it was)."""
    if not transition_valid(c.state, target, table):
        if c.background:
            return CallResult(c._replace(state=FATAL_ERROR, last_error=ILLEGAL_STATE), ILLEGAL_STATE)
        return CallResult(c, _invalid(c))
    last = (error or KAFKA_EXCEPTION) if target in (FATAL_ERROR, ABORTABLE_ERROR) else ""
    return CallResult(c._replace(state=target, last_error=last))


def to_abortable_error(c: TxnClient, table: ClientTransitions, error: str = KAFKA_EXCEPTION) -> CallResult:
    """``transitionToAbortableError``: an abort in progress stays one."""
    if c.state == ABORTING:
        return CallResult(c)
    return transition(c, ABORTABLE_ERROR, table, error)


def to_fatal_error(c: TxnClient, table: ClientTransitions, error: str = KAFKA_EXCEPTION) -> CallResult:
    """``transitionToFatalError``: the kept result fails with the error too (``pendingTransition.result.fail``;
    ``pendingResult.fail`` before KAFKA-13412)."""
    r = transition(c, FATAL_ERROR, table, error)
    if r.exception or c.pending_call is None:
        return r
    failed = c.pending_call if c.pending_call.completed else c.pending_call._replace(completed=True,
                                                                                     error=error or KAFKA_EXCEPTION)
    return CallResult(r.client._replace(pending_call=failed))


def throw_if_pending(c: TxnClient) -> CallResult:
    """``throwIfPendingState`` (KAFKA-13412): a result not yet acked blocks every other call (the
    result's exception); an acked one is dropped. Without an exception the call goes on with the
    result's client."""
    p = c.pending_call
    if not c.kafka_13412 or p is None:
        return CallResult(c)
    if p.acked:
        return CallResult(c._replace(pending_call=None))
    return CallResult(c, ILLEGAL_STATE)


def _cached_call(c: TxnClient, target: str, operation: str, table: ClientTransitions, fail_first: bool = True) -> CallResult:
    """``handleCachedTransactionRequestResult`` around the call's own checks (``_checked``)."""
    if not c.transactional:
        # ensureTransactional
        return CallResult(c, ILLEGAL_STATE)
    p = c.pending_call
    if c.kafka_13412 and p is not None:
        if p.acked:
            c = c._replace(pending_call=None)
        elif p.target != target:
            return CallResult(c, ILLEGAL_STATE)
        else:
            return CallResult(c, reused=True)
    elif p is not None and c.state == target:
        # pendingResult: handed back while the manager is in this call's target state, dropped once complete
        return CallResult(c._replace(pending_call=None if p.completed else p), reused=True)
    r = _checked(c, target, table, fail_first)
    if r.exception:
        return r
    return CallResult(r.client._replace(pending_call=PendingCall(target, operation)))


def complete_call(c: TxnClient, acked: bool, error: str = "") -> TxnClient:
    """The coordinator answered the kept call's request (done, or failed with ``error``); ``acked``: the application
    was waiting in ``await`` for it, so the result is acked as it completes. A result completes once."""
    if c.pending_call is None or c.pending_call.completed:
        return c
    return c._replace(pending_call=c.pending_call._replace(completed=True, acked=acked, error=error))


def await_result(c: TxnClient) -> CallResult:
    """``result.await()`` on the kept result: TimeoutException while the coordinator has not answered;
    once it has, the result is acked (KAFKA-13412's ``isAcked``)."""
    p = c.pending_call
    if p is None:
        return CallResult(c)
    if not p.completed:
        return CallResult(c, "TimeoutException")
    # isAcked is set before a failed result throws its error
    return CallResult(c._replace(pending_call=p._replace(acked=True)), p.error)


def _checked(c: TxnClient, target: str, table: ClientTransitions, fail_first: bool = True) -> CallResult:
    if not c.transactional:
        # ensureTransactional
        return CallResult(c, ILLEGAL_STATE)
    failed = fail_with_error(c) if fail_first else ""
    if failed:
        return CallResult(c, failed)
    return transition(c, target, table)


def initialize_transactions(c: TxnClient, table: ClientTransitions) -> CallResult:
    """``initializeTransactions()`` (no epoch bump): INITIALIZING, from UNINITIALIZED only. KAFKA-13412
    checks the error state first; before, only the transition (an error state is an invalid one)."""
    if c.kafka_13412:
        failed = fail_with_error(c)
        if failed:
            return CallResult(c, failed)
    return _cached_call(c, INITIALIZING, "initTransactions", table, fail_first=False)


def _transactional_unblocked(c: TxnClient) -> CallResult:
    """``ensureTransactional`` then ``throwIfPendingState``: an exception, or the client to go on with."""
    if not c.transactional:
        return CallResult(c, ILLEGAL_STATE)
    return throw_if_pending(c)


def begin_transaction(c: TxnClient, table: ClientTransitions) -> CallResult:
    r = _transactional_unblocked(c)
    return r if r.exception else _checked(r.client, IN_TRANSACTION, table)


def prepare_transaction(c: TxnClient, table: ClientTransitions) -> CallResult:
    """``prepareTransaction()`` (KIP-939; 4.1.0 l.344-353, 4.2.0-rc1 l.342-351): the checks of
    ``beginTransaction``, then PREPARED_TRANSACTION, from IN_TRANSACTION only. The manager's method is in
    4.1.0 on, but no released KafkaProducer calls it (KAFKA-19414 removed the public 2PC API before 4.1.0)."""
    if PREPARED not in TRANSITIONS[table]:
        raise ValueError(f"prepareTransaction: KIP-939 (4.1.0), not in the client of table {table}")
    r = _transactional_unblocked(c)
    return r if r.exception else _checked(r.client, PREPARED, table)


def init_producer_id_answered(c: TxnClient, table: ClientTransitions, keep_prepared_txn: bool,
                              ongoing_txn_producer_id: int, kafka_19272: bool) -> CallResult:
    """``InitProducerIdHandler.handleResponse`` answered NONE: READY; with KAFKA-19272 (c7e4ff01cd, first tag
    4.2.0-rc1, l.1501-1513) a KeepPreparedTxn request whose answer names an ongoing transaction (its producer id
    is not -1) enters PREPARED_TRANSACTION instead. 4.1.0 and 4.1.1 enter READY whatever the request (l.1501-1502,
    "TO_DO ... when keepPrepared = true"). No released client sends KeepPreparedTxn (KAFKA-19414)."""
    if kafka_19272 and keep_prepared_txn and ongoing_txn_producer_id != -1:
        return transition(c, PREPARED, table)
    return transition(c, READY, table)


def begin_commit(c: TxnClient, table: ClientTransitions) -> CallResult:
    return _cached_call(c, COMMITTING, "commitTransaction", table)


def begin_abort(c: TxnClient, table: ClientTransitions) -> CallResult:
    """``beginAbort()``: an abortable error is what an abort is for, so only another error fails it;
    partitions not yet sent are dropped."""
    r = _cached_call(c, ABORTING, "abortTransaction", table, fail_first=c.state != ABORTABLE_ERROR)
    if r.exception or r.reused:
        return r
    return CallResult(r.client._replace(new=frozenset()))


def send_offsets_to_transaction(c: TxnClient) -> CallResult:
    """``sendOffsetsToTransaction``: only inside a transaction (no transition); IllegalStateException
    outside one from KAFKA-13412, KafkaException before."""
    r = _transactional_unblocked(c)
    if r.exception:
        return r
    c = r.client
    failed = fail_with_error(c)
    if failed:
        return CallResult(c, failed)
    return CallResult(c, "" if c.state == IN_TRANSACTION else _invalid(c))


def maybe_add_partition(c: TxnClient, tp: str) -> CallResult:
    """``maybeAddPartition`` (KAFKA-13412: ``maybeFailWithError``, then ``throwIfPendingState("send")``);
    before it (3.1.0 and older), ``failIfNotReadyForSend`` and ``maybeAddPartitionToTransaction`` with the
    same checks, but an error state wrapped, a fencing one too, in a KafkaException: an error state fails
    it; a transactional producer needs a producer id and an open transaction; a partition added or on its
    way is left alone; an idempotent producer adds nothing."""
    failed = fail_with_error(c)
    if failed:
        return CallResult(c, failed if c.kafka_13412 else KAFKA_EXCEPTION)
    blocked = throw_if_pending(c)
    if blocked.exception:
        return blocked
    c = blocked.client
    if not c.transactional:
        return CallResult(c)
    if not c.has_producer_id or c.state != IN_TRANSACTION:
        return CallResult(c, ILLEGAL_STATE)
    if is_partition_added(c, tp) or is_partition_pending_add(c, tp):
        return CallResult(c)
    return CallResult(c._replace(new=c.new | {tp}))


def send_add_partitions(c: TxnClient) -> TxnClient:
    """The Sender sends AddPartitionsToTxn (``addPartitionsToTransactionHandler``): the new partitions
    become pending."""
    return c._replace(new=frozenset(), pending=c.pending | c.new)


def partitions_not_added(c: TxnClient, answered: frozenset[str]) -> TxnClient:
    """AddPartitionsToTxn answered with partition errors the handler collects (TOPIC_AUTHORIZATION_FAILED,
    OPERATION_NOT_ATTEMPTED): the request's partitions (the Sender sent the new ones first) leave the pending set
    without being added, "regardless of the result" (2.0.0 to 4.2.0-rc1), so batches of partitions already added
    may still drain while the transaction is aborted."""
    sent = c.pending | c.new
    return c._replace(new=frozenset(), pending=sent - answered)


def handle_authorization_error(c: TxnClient, table: ClientTransitions) -> CallResult | None:
    """``Sender.shouldHandleAuthorizationError`` at the start of the Sender's loop (KAFKA-13668, 3.6.0+): an abortable
    error whose lastError is a TransactionalIdAuthorizationException or a ClusterAuthorizationException (only an
    InitProducerId answer leaves one abortable) resets the producer (``transitionToUninitialized``: UNINITIALIZED, the
    kept result failed with the exception, no last error) after failing the queued requests and the batches with it;
    the loop then stops. None when the loop goes on."""
    if c.state != ABORTABLE_ERROR or c.last_error not in ("TransactionalIdAuthorizationException",
                                                           "ClusterAuthorizationException"):
        return None
    r = transition(c, UNINITIALIZED, table)
    if r.exception:
        return r
    p = c.pending_call
    if p is not None and not p.completed:
        p = p._replace(completed=True, error=c.last_error)
    return CallResult(r.client._replace(pending_call=p, last_error=""))


def partitions_added(c: TxnClient) -> TxnClient:
    """AddPartitionsToTxn answered NONE for every partition: those in the request are in the
    transaction (the Sender sent the new ones first)."""
    sent = c.pending | c.new
    return c._replace(new=frozenset(), pending=frozenset(), added=c.added | sent, started=True)


def complete_transaction(c: TxnClient, table: ClientTransitions, epoch_bump_required: bool = False) -> CallResult:
    """``completeTransaction``: INITIALIZING when an epoch bump is pending, else READY; the partition
    sets and transactionStarted are cleared."""
    r = transition(c, INITIALIZING if epoch_bump_required else READY, table)
    if r.exception:
        return r
    return CallResult(r.client._replace(new=frozenset(), pending=frozenset(), added=frozenset(), started=False))


class NextRequest(NamedTuple):
    client: TxnClient
    #: the request dequeued for sending ('' none)
    request: str
    #: the EndTxn was completed without being sent (nothing was added to the transaction)
    end_txn_skipped: bool = False
    #: the EndTxn was dequeued and failed with the last error, unsent (``maybeTerminateRequestWithError``)
    end_txn_failed: bool = False


def retry_add_partitions(c: TxnClient) -> TxnClient:
    """A retriable answer to AddPartitionsToTxn (``reenqueue``): the sent partitions stay pending and the
    request waits in the queue, ahead of an EndTxn (its priority is ADD_PARTITIONS_OR_OFFSETS)."""
    return c._replace(new=frozenset(), pending=c.pending | c.new, add_partitions_queued=True)


def next_request_to_end(c: TxnClient, table: ClientTransitions, has_incomplete_batches: bool) -> NextRequest:
    """``nextRequest(hasIncompleteBatches)`` with an EndTxn queued (beginCommit / beginAbort) and no
    epoch bump: an AddPartitionsToTxn goes first (one re-enqueued after a retriable answer, or the
    partitions not yet sent: beginAbort dropped only those); the EndTxn waits while batches are
    incomplete; a transaction to which nothing was added is completed without sending it (1.0 to
    trunk)."""
    if c.add_partitions_queued:
        return NextRequest(c._replace(add_partitions_queued=False), "AddPartitionsToTxn")
    if c.new:
        return NextRequest(send_add_partitions(c), "AddPartitionsToTxn")
    if has_incomplete_batches:
        return NextRequest(c, "")
    if has_error(c):
        # maybeTerminateRequestWithError: the queued EndTxn is dequeued and its result (the kept call's) fails with
        # the last error
        p = c.pending_call
        if p is not None and not p.completed:
            c = c._replace(pending_call=p._replace(completed=True, error=c.last_error or KAFKA_EXCEPTION))
        return NextRequest(c, "", end_txn_failed=True)
    if not c.started:
        if c.state == FATAL_ERROR:
            return NextRequest(c, "", end_txn_skipped=True)
        return NextRequest(complete_transaction(c, table).client, "", end_txn_skipped=True)
    return NextRequest(c, "EndTxn")


def is_partition_added(c: TxnClient, tp: str) -> bool:
    return tp in c.added


def is_partition_pending_add(c: TxnClient, tp: str) -> bool:
    return tp in c.new or tp in c.pending


def has_partitions_to_add(c: TxnClient) -> bool:
    return bool(c.new or c.pending)


def is_send_to_partition_allowed(c: TxnClient, tp: str) -> bool:
    """``isSendToPartitionAllowed`` (2.0 to trunk): never in a fatal error; a transactional producer
    only to a partition the coordinator has added (an abortable error still lets those drain)."""
    if c.state == FATAL_ERROR:
        return False
    return not c.transactional or tp in c.added


def undrained_batch_error(c: TxnClient, aborted: str) -> str:
    """What the Sender fails the batches never drained with while aborting or in an abortable error
    (``abortUndrainedBatches``): the manager's last error, else ``aborted`` (the version's exception for an
    abort without error: ``Protocol.client_abort_exception``)."""
    return c.last_error or aborted


def may_drain(c: TxnClient, tp: str) -> bool:
    """``RecordAccumulator.shouldStopDrainBatchesForPartition``'s first two checks, for a partition with
    no batch in flight: the send must be allowed and the producer id known."""
    return is_send_to_partition_allowed(c, tp) and c.has_producer_id
