"""The transactional producer's close: what ``Sender.run`` does with the transaction after ``initiateClose`` (a
graceful close) or ``forceClose``, read at apache/kafka 1eb7644 and at 2.3.0, 3.6.0, 3.7.0, 3.7.1, 3.9.1, 4.0.0, 4.1.0 and
4.2.0-rc1.

KAFKA-6635 (7bd81628d9f, first tag 2.3.0) made the close wait for the transaction: after the main loop ends, the
Sender keeps running while batches are undrained or in flight *or* a transactional request is queued for an ongoing
transaction (``hasPendingTransactionalRequests``: a queued EndTxn of a commit or abort is sent and answered); then, as
long as a transaction is ongoing, it begins an abort of one that is not completing and runs again; a forced close
skips both loops and calls ``TransactionManager.close()``, which fails every queued request and the kept result of
initTransactions / commitTransaction / abortTransaction with ``KafkaException("The producer closed forcefully")``, and
aborts the incomplete batches. Before it (2.2.x and older) only batches were awaited and nothing failed the result.

An exception from ``beginAbort`` in that loop (the transaction manager in a state from which no abort is possible):
2.3.0 .. 3.5.x let it escape ``run()``, so the I/O thread ended without closing the transaction manager or the
network client; KAFKA-14831 (a81f35c1c8f, first tag 3.6.0) caught and logged it, and the loop tried again forever
(3.6.0 .. 3.7.0); KAFKA-16217 (6e4a098055d, first tag 3.8.0; fc5a1307d40 on the 3.7 branch, first tag 3.7.1) sets
``forceClose`` instead, so the loop ends and the forced close's ``TransactionManager.close()`` runs. The rule is
unchanged at 3.9.1, 4.0.0, 4.1.0 and 4.2.0-rc1 (4.2.0-rc1 Sender.java l.241-304).

No machine reads this module (kafka.eos's producers never close); the conformance interface does, for SenderTest.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from .txn_calls import ClientTransitions, TxnClient, to_fatal_error

#: what TransactionManager.close() fails the kept result and the queued requests with
CLOSED_FORCEFULLY = "KafkaException"

#: ``Sender.run`` reacting to an exception of ``beginAbort`` while it closes: "escape" (2.3.0 .. 3.5.x: the exception
#: leaves run(), nothing else runs), "retry" (KAFKA-14831, 3.6.0 .. 3.7.0: logged, the loop tries again), "force-close"
#: (KAFKA-16217, 3.7.1 and 3.8.0 on)
AbortFailure = Literal["escape", "retry", "force-close"]

#: the next thing the closing Sender does
CloseAction = Literal["run-once", "begin-abort", "closed"]


def abort_failure(*, kafka_14831: bool, kafka_16217: bool) -> AbortFailure:
    if kafka_16217:
        return "force-close"
    return "retry" if kafka_14831 else "escape"


class CloseState(NamedTuple):
    """What ``Sender.run``'s loop conditions read, after the main loop stopped."""

    forced: bool
    #: accumulator.hasUndrained() or a request in flight
    batches_pending: bool
    #: TransactionManager.hasPendingRequests(): a queued EndTxn, AddPartitionsToTxn, ...
    txn_requests_pending: bool
    #: TransactionManager.hasOngoingTransaction()
    ongoing: bool
    #: TransactionManager.isCompleting(): a commit or an abort has begun
    completing: bool


def next_close_action(s: CloseState, *, kafka_6635: bool) -> CloseAction:
    """One turn of ``Sender.run`` after ``running`` became false: the first loop (batches, and from KAFKA-6635 the
    queued transactional requests of an ongoing transaction), then KAFKA-6635's abort loop."""
    if s.forced:
        return "closed"
    if s.batches_pending or (kafka_6635 and s.txn_requests_pending and s.ongoing):
        return "run-once"
    if kafka_6635 and s.ongoing:
        return "run-once" if s.completing else "begin-abort"
    return "closed"


class ClosedResult(NamedTuple):
    #: TransactionManager.close() ran: the kept result and the queued requests failed with ``CLOSED_FORCEFULLY``
    manager_closed: bool
    #: accumulator.abortIncompleteBatches() ran
    batches_aborted: bool
    #: the network client was closed (run() reached its end)
    client_closed: bool


def close_after_loops(*, forced: bool, kafka_6635: bool, escaped: bool = False) -> ClosedResult:
    """The end of ``Sender.run``: a forced close fails the transactional requests (from KAFKA-6635) and the incomplete
    batches; an exception that escaped run() (2.3.0 .. 3.5.x, ``abort_failure`` "escape") skips all of it."""
    if escaped:
        return ClosedResult(False, False, False)
    return ClosedResult(forced and kafka_6635, forced, True)


def close_transaction_manager(c: TxnClient, table: ClientTransitions, *, requests_queued: bool) -> TxnClient:
    """``TransactionManager.close()`` (KAFKA-6635): each queued request's handler fails (``fatalError``: its result
    fails and the producer enters FATAL_ERROR), and the kept result fails with the same KafkaException."""
    if requests_queued:
        c = to_fatal_error(c, table, CLOSED_FORCEFULLY).client
    if c.pending_call is not None:
        c = c._replace(pending_call=c.pending_call._replace(completed=True, error=CLOSED_FORCEFULLY))
    return c


#: what ``Sender.runOnce`` does for an idempotent producer that has no producer id (an epoch bump at Short.MaxValue
#: dropped it) once the close has begun: "send" InitProducerId (the batches can drain again), "skip" it (they cannot: a
#: graceful close's loop then never ends), or "block" in the wait for one (the forced close cannot end the loop)
ProducerIdFetch = Literal["send", "skip", "block"]


def producer_id_fetch_on_close(*, forced: bool, kafka_5503: bool, kafka_8061: bool, kip_360: bool) -> ProducerIdFetch:
    """The closing Sender and a lost producer id (SenderTest testCloseWithProducerIdReset and
    testForceCloseWithProducerIdReset, KAFKA-8061).

    2.0.0 .. 2.1.0: ``maybeWaitForProducerId`` loops while the producer has no id and no error, whatever the close, so a
    forced close blocks in it. KAFKA-5503 (4b9a3ba59b6 on the 2.1 branch, first tag 2.1.1; d086e83fecb, 2.2.0) made it
    stop once ``running`` is false: a graceful close then never fetched a new id, and its loop ("while hasUndrained or in
    flight") never ended. KAFKA-8061 (dfc59fa0cbb on the 2.2 branch, first tag 2.2.0; 1f525cd2c90 on trunk, 2.3.0; no
    2.1.x tag has it) stops it on ``forceClose`` only. KIP-360's client (2.5.0 .. 4.2.0-rc1) queues InitProducerId
    (``bumpIdempotentEpochAndResetIdIfNeeded``) and sends it in ``runOnce`` with no check of the close: a graceful close
    keeps calling runOnce until the batches drain, and a forced one stops calling it (``run()``'s loops test
    ``forceClose``), so a runOnce the test still makes sends without blocking."""
    if kip_360:
        return "send"
    if kafka_8061:
        return "skip" if forced else "send"
    if kafka_5503:
        return "skip"
    return "block" if forced else "send"
