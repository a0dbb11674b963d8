"""The transactional producer's own calls, as a TransactionManagerTest makes them:
``transactionManager.<call>(...)`` (initializeTransactions, beginTransaction, beginCommit, beginAbort,
sendOffsetsToTransaction, maybeAddPartition, isSendToPartitionAllowed, transitionToAbortableError,
transitionToFatalError, handleFailedBatch, setPoisonStateOnInvalidTransition, isPartitionAdded, ...),
``sender.sendAddPartitionsToTxn()`` (the AddPartitionsToTxn request sent and left in flight),
``sender.runOnce()`` (for the transaction: undrained batches aborted, the next request chosen) and the
accumulator's ``accumulator.append(tp)`` / ``accumulator.drain()``. The client's state lives in
``World.client`` as for the other client steps (``steps_client``), with the partitions on their way
into the transaction."""

from __future__ import annotations

import re
from typing import Any

from ..api import client as api
from ..api.protocol import client_tv2
from ..errors import RETRIABLE, Errors
from . import steps_api_versions
from .values import NotExpressible, error_code, integer
from .world import World

Observed = dict[str, Any]

#: exceptions a test hands to transitionTo*Error / handleFailedBatch that maybeTransitionToErrorState
#: makes fatal (the others are abortable for a transactional producer)
_FATAL_EXCEPTIONS = frozenset({"ClusterAuthorizationException", "TransactionalIdAuthorizationException",
                               "ProducerFencedException", "UnsupportedVersionException"})


def client_of(w: World) -> api.TxnClient:
    c = w.client
    transactional = bool(c.get("transactional", False))
    state = str(c.get("state", "IN_TRANSACTION" if transactional else "READY")).split(",")[0].strip()
    states = api.client_states(w.protocol.client_transitions)
    if state not in states:
        raise NotExpressible(f"producer state {state!r}: not one of {', '.join(states)}")
    last = c.get("last_error") or ""
    if state in ("ABORTABLE_ERROR", "FATAL_ERROR") and not last:
        last = "KafkaException"
    return api.TxnClient(state, str(last), transactional, integer(c.get("producer_id", 0), "producer_id") >= 0,
                         frozenset(c.get("_new", ())), frozenset(c.get("_pending", ())),
                         frozenset(c.get("_added", ())), bool(c.get("_background", False)), bool(c.get("_started", False)),
                         c.get("_pending_call"), w.protocol.client_retry_safe_calls,
                         frozenset(c.get("_pending_offsets", ())), bool(c.get("_add_partitions_queued", False)))


def store(w: World, c: api.TxnClient) -> None:
    w.client.update({"state": c.state, "last_error": c.last_error or None, "_new": c.new, "_pending": c.pending,
                     "_added": c.added, "_background": c.background, "_started": c.started,
                     "_pending_call": c.pending_call, "_pending_offsets": c.pending_offsets,
                     "_add_partitions_queued": c.add_partitions_queued})
    if c.pending_call is not None and w.client.get("_serial") == w.client.get("_result_serial"):
        w.client["_result"] = c.pending_call


def call_completed(w: World, error: str = "") -> None:
    """The coordinator answered the request of the kept initTransactions / commitTransaction /
    abortTransaction call (``error``: the exception the result failed with). Unless the vector has shown the
    call's ``result.await(...)`` timing out, the application is taken to be waiting in that await (as
    KafkaProducer's calls do), so the result is acked as it completes; after a timed-out await only a later
    ``result.await()`` acks it."""
    p = w.client.get("_pending_call")
    if isinstance(p, api.PendingCall) and not p.completed:
        store(w, api.complete_call(client_of(w), acked=not w.client.get("_timed_out"), error=error))


def fail_queued_offsets(w: World, error: str) -> None:
    """``maybeTerminateRequestWithError``: in an error state the Sender's next loop dequeues the AddOffsetsToTxn or
    TxnOffsetCommit of sendOffsetsToTransaction and fails its result with the last error, unsent (the pending
    offsets stay recorded)."""
    if w.client.get("_offsets_result") == "pending":
        w.client["_offsets_result"] = "failed"
        w.client["_offsets_error"] = error or "KafkaException"


def _view(w: World, c: api.TxnClient, tp: str) -> Observed:
    out: Observed = {"client_state": c.state, "has_error": api.txn_has_error(c),
                     "has_fatal_error": c.state == "FATAL_ERROR", "has_abortable_error": c.state == "ABORTABLE_ERROR",
                     "has_ongoing_transaction": api.has_ongoing_transaction(c.state), "is_transactional": c.transactional,
                     "has_producer_id": c.has_producer_id, "last_error": c.last_error or None,
                     "is_completing": c.state in ("COMMITTING_TRANSACTION", "ABORTING_TRANSACTION"),
                     "has_pending_offset_commits": bool(c.pending_offsets),
                     # a transactional request the Sender sent (nextRequest) whose answer has not been read yet
                     "has_in_flight_request": bool(w.client.get("_txn_in_flight")),
                     # RecordAccumulator.hasUndrained / hasIncomplete: appended and not drained; or drained and unanswered
                     # (an idempotent producer's batch re-enqueued for a retry is undrained too: steps_client)
                     "has_undrained": bool(w.client.get("_appended")) or bool(w.client.get("_retry_queue")),
                     "has_incomplete": bool(w.client.get("_appended")) or bool(w.client.get("_inflight"))
                     or bool(_produce_batches(w))}
    if w.client.get("_offsets_result"):
        out["offsets_result_completed"] = w.client["_offsets_result"] != "pending"
        out["offsets_result_successful"] = w.client["_offsets_result"] == "done"
        out["offsets_result_error"] = w.client.get("_offsets_error") if w.client["_offsets_result"] == "failed" else None
    if w.client.get("_partitions_unknown"):
        # an AddPartitionsToTxn answer other than NONE: which partitions it left pending is not tracked
        return out
    out["has_inflight_batches"] = tp in w.client.get("_inflight", [])
    out.update({"has_partitions_to_add": api.has_partitions_to_add(c),
                "partition_added": api.is_partition_added(c, tp), "partition_pending_add": api.is_partition_pending_add(c, tp),
                "allowed": api.is_send_to_partition_allowed(c, tp)})
    return out


#: TransactionManager's questions about its state, answered by the step's view
_QUERIES = frozenset({"hasPartitionsToAdd", "hasProducerId", "isTransactional", "hasError", "hasFatalError",
                      "hasAbortableError", "hasOngoingTransaction", "isCompleting", "hasPendingOffsetCommits",
                      "hasInFlightRequest"})
_CALL = re.compile(r"^\s*(transactionManager|sender|accumulator|result|client)\.(\w+)\(\s*(.*?)\s*\)\s*;?\s*$")
_PARTITION = re.compile(r"tp\d+|[a-z][\w.]*-\d+")


def _retriable_or_invalid_txn(exception: str) -> bool:
    """The exception class is a RetriableException (the one of an error code in ``RETRIABLE``: TimeoutException is
    REQUEST_TIMED_OUT's) or InvalidTxnStateException (KAFKA-19176's condition in maybeTransitionToErrorState)."""
    if exception in ("TimeoutException", "InvalidTxnStateException"):
        return True
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", exception.removesuffix("Exception")).upper()
    return snake in Errors.__members__ and Errors[snake] in RETRIABLE


def _tv2(w: World) -> bool:
    """The vector's client runs transaction version 2 (``World``'s loader refuses it where the profile's client
    has none)."""
    return bool(w.client.get("transaction_v2")) and client_tv2(w.protocol)


def call(w: World, inp: dict[str, Any]) -> Observed:
    text = str(inp.get("call") or inp.get("event") or "")
    m = _CALL.match(text)
    if not m:
        raise NotExpressible(f"call not understood: {text!r}")
    owner, name, arg = m.groups()
    c = client_of(w)
    table = w.protocol.client_transitions
    tp = arg if _PARTITION.fullmatch(arg) else str(w.client.get("_tp", "tp0"))
    exception = ""
    extra: Observed = {}
    if owner == "transactionManager" and name in _CALLS:
        r = _CALLS[name](c, table)
        if not r.exception and not r.reused and name in ("beginCommit", "beginAbort"):
            # beginCompletingTransaction queues the EndTxn (an epoch bump queues InitProducerId too)
            w.client["_end_txn_queued"] = not w.client.get("_epoch_bump_required", False)
            if w.protocol.client_feature_check == "4.0":
                # the EndTxn is built at the transaction version the client had, then the features are read again
                # (4.0.0 on: an upgrade to TV2 queues an epoch bump after the EndTxn)
                w.client["_end_txn_tv2"] = bool(w.client.get("transaction_v2"))
                steps_api_versions.maybe_update(w, False)
        if not r.exception and name == "beginTransaction" and w.protocol.client_feature_check == "2024-10":
            # the 2024-10 snapshot reads the features when a transaction begins
            steps_api_versions.maybe_update(w, False)
        if not r.exception and name == "sendOffsetsToTransaction":
            # the offsets' partitions (``{tp1: 1}``): committed by the TxnOffsetCommit AddOffsetsToTxn leads to
            w.client["_offsets"] = frozenset(_PARTITION.findall(arg.split(",")[0] if "{" not in arg else
                                                                arg[arg.index("{"):arg.index("}") + 1]))
            w.client["_offsets_result"] = "pending"
            if _tv2(w):
                # KAFKA-14563 (4.0.0): no AddOffsetsToTxn, the TxnOffsetCommit is enqueued with the offsets pending
                c = r.client._replace(pending_offsets=w.client["_offsets"], started=True)
                r = r._replace(client=c)
        if not r.exception and not r.reused and name in _KEPT:
            # a new result: the test's ``result`` variable is the first one a vector gets
            w.client["_timed_out"] = False
            w.client["_serial"] = int(w.client.get("_serial", 0)) + 1
            w.client.setdefault("_result_serial", w.client["_serial"])
        c, exception = r.client, r.exception
        extra = {"same_result": r.reused} if name in _KEPT and not r.exception else {}
    elif owner == "result" and name == "isCompleted":
        held = w.client.get("_result")
        if not isinstance(held, api.PendingCall):
            raise NotExpressible("result.isCompleted with no initTransactions / commitTransaction / abortTransaction result")
        extra = _result_view(held)
    elif owner == "result" and name == "await":
        # the test's TransactionalRequestResult of the last initTransactions / commit / abort call
        # the test's result (its first kept call), which a newer call may have replaced as the kept one
        held = w.client.get("_result")
        if not isinstance(held, api.PendingCall):
            raise NotExpressible("result.await with no initTransactions / commitTransaction / abortTransaction result")
        r = api.await_result(c._replace(pending_call=held))
        exception = r.exception
        held = r.client.pending_call
        w.client["_result"] = held
        if w.client.get("_serial") == w.client.get("_result_serial"):
            c = c._replace(pending_call=held)
        if exception:
            w.client["_timed_out"] = True
        extra = _result_view(held)
    elif owner == "transactionManager" and name == "maybeAddPartition":
        r = api.maybe_add_partition(c, tp)
        c, exception = r.client, r.exception
        if not exception and c.transactional and _tv2(w):
            # KAFKA-14563 (4.0.0): the TV2 client puts the partition in the transaction at once (the leader adds it)
            c = c._replace(new=c.new - {tp}, added=c.added | {tp}, started=True)
        w.client["_tp"] = tp
    elif owner == "transactionManager" and name in ("isSendToPartitionAllowed", "isPartitionAdded",
                                                    "isPartitionPendingAdd", "transactionContainsPartition",
                                                    "hasInflightBatches"):
        w.client["_tp"] = tp
    elif owner == "transactionManager" and name in _QUERIES:
        pass  # a question about the state the view answers
    elif owner == "transactionManager" and name in steps_api_versions.CALLS:
        extra = steps_api_versions.call(w, name, arg, inp)
    elif owner == "transactionManager" and name in ("transitionToAbortableError", "transitionToFatalError",
                                                    "handleFailedBatch", "maybeTransitionToErrorState"):
        error = (re.findall(r"(\w+(?:Exception|Error))", arg) or ["KafkaException"])[0]
        direct = name == "maybeTransitionToErrorState"
        if direct and error == "InvalidPidMappingException":
            raise NotExpressible("maybeTransitionToErrorState(InvalidPidMappingException): fatal from 4.0.0 on, "
                                 "not read by version here")
        if name == "transitionToFatalError" or (name in ("handleFailedBatch", "maybeTransitionToErrorState")
                                                and error in _FATAL_EXCEPTIONS):
            r = api.txn_to_fatal_error(c, table, error)
        elif name in ("handleFailedBatch", "maybeTransitionToErrorState") and not c.transactional:
            raise NotExpressible(f"{name} of an idempotent producer: use the client's handleFailedBatch(rN, ...)")
        elif direct:
            # KafkaProducer.doSend's ApiException (InvalidTopicException, RecordTooLargeException, the metadata
            # wait's TimeoutException) reaches maybeTransitionToErrorState; from KAFKA-19176 (4.1.0) a retriable one
            # or InvalidTxnStateException is kept as a TransactionAbortableException around it
            wrap = w.protocol.eos.client_batch_error_wrapped_abortable and _retriable_or_invalid_txn(error)
            r = api.txn_to_abortable_error(c, table, "TransactionAbortableException" if wrap else error)
        else:
            # maybeTransitionToErrorState / the test's own transitionToAbortableError
            r = api.txn_to_abortable_error(c, table, error)
        c, exception = r.client, r.exception
    elif owner == "sender" and name == "sendTxnOffsetCommit":
        c, extra = _send_txn_offset_commit(w, c, inp)
    elif owner == "transactionManager" and name == "setPoisonStateOnInvalidTransition":
        c = c._replace(background=arg.strip() == "true")
    elif owner == "sender" and name == "sendAddPartitionsToTxn":
        if not c.new:
            raise NotExpressible("sendAddPartitionsToTxn with no partition waiting to be added")
        c = api.send_add_partitions(c)
        # the request's new handler, sent the first time: the producer's retry.backoff.ms (``retry_backoff``)
        backoff = integer(w.client.get("retry_backoff_ms", api.DEFAULT_RETRY_BACKOFF_MS), "retry_backoff_ms")
        extra = {"retry_backoff_ms": api.retry_backoff_ms("AddPartitionsToTxn", 0, partitions_in_transaction=bool(c.added),
                                                          retry_backoff=backoff),
                 "next_send_delay_ms": api.send_delay_ms(is_retry=False, handler_backoff=backoff)}
    elif owner == "transactionManager" and name == "nextRequest":
        c, extra = _next_request(w, c, arg.strip() == "true")
    elif owner == "sender" and name == "runOnce":
        # Sender.runOnce for the transaction: an abort (or an abortable error) aborts the batches never
        # drained, then the next transactional request is chosen with the batches still incomplete
        if any(e.in_flight for e in w.client_partitions.values()):
            raise NotExpressible("sender.runOnce with produce batches in flight: use the client's runOnce()")
        reset = api.handle_authorization_error(c, table) if w.protocol.client_auth_init_abortable else None
        if reset is not None and not reset.exception:
            # shouldHandleAuthorizationError (KAFKA-13668): queued requests and every incomplete batch fail with the
            # exception, the producer is UNINITIALIZED, and this loop sends nothing
            failed = sorted(set(w.client.get("_appended", [])) | set(w.client.get("_inflight", [])))
            w.client["_appended"], w.client["_inflight"] = [], []
            fail_queued_offsets(w, c.last_error)
            w.client["_end_txn_queued"] = False
            extra = {"aborted_batches": failed, "aborted_batches_error": c.last_error if failed else None}
            c = reset.client
            store(w, c)
            out = _view(w, c, tp)
            out.update(extra)
            out["exception"], out["throws"] = None, False
            return out
        if api.txn_has_error(c):
            fail_queued_offsets(w, c.last_error)
        appended = list(w.client.get("_appended", []))
        # a batch drained and not yet answered is incomplete too (RecordAccumulator.hasIncomplete)
        incomplete = bool(appended) or bool(w.client.get("_inflight"))
        aborted: list[str] = []
        if c.state in ("ABORTING_TRANSACTION", "ABORTABLE_ERROR"):
            aborted, appended = sorted(set(appended)), []
            w.client["_appended"] = []
        extra = {"aborted_batches": aborted}
        if aborted:
            extra["aborted_batches_error"] = api.undrained_batch_error(c, w.protocol.client_abort_exception)
            incomplete = bool(w.client.get("_inflight"))
        in_flight = bool(w.client.get("_txn_in_flight"))
        if w.client.get("_end_txn_queued"):
            c, more = _next_request(w, c, incomplete)
            extra.update(more)
        elif c.new and not in_flight and not api.txn_has_error(c):
            # nextRequest enqueues an AddPartitionsToTxn for the partitions not yet sent, with no EndTxn queued too
            c = api.send_add_partitions(c)
            w.client["_txn_in_flight"] = "AddPartitionsToTxn"
            extra["next_request"] = "AddPartitionsToTxn"
        # maybeSendAndPollTransactionalRequest returns true (runOnce returns before sendProducerData) while a
        # transactional request is in flight or when one was sent in this loop, and so does a fatal error (read at
        # 2.0.0 and 4.1.0)
        extra["sends_producer_data"] = not in_flight and not extra.get("next_request") and c.state != "FATAL_ERROR"
    elif owner == "sender" and name in ("initiateClose", "forceClose"):
        # running = false (and forceClose = true): the main loop ends; the test's own runOnce calls still work
        w.client["_closing"] = True
        if name == "forceClose":
            w.client["_forced"] = True
    elif owner == "sender" and name == "run":
        if not w.client.get("_closing"):
            raise NotExpressible("sender.run() before initiateClose / forceClose: its main loop runs until a close")
        c, extra = _shutdown(w, c, inp)
    elif owner == "accumulator" and name in ("hasUndrained", "hasIncomplete"):
        pass  # answered by the view
    elif owner == "accumulator" and name == "append":
        appended = list(w.client.get("_appended", []))
        appended.append(tp)
        w.client["_appended"] = appended
        w.client["_tp"] = tp
    elif owner == "client" and name == "respondToProduce":
        # the produce request's answer for the oldest batch of the partition in flight: NONE completes it; a
        # retriable error puts it back in the accumulator with its sequence (incomplete, but no longer undrained:
        # abortUndrainedBatches keeps a batch that has a sequence), to be drained again
        inflight = list(w.client.get("_inflight", []))
        tp = (_PARTITION.findall(arg) or [tp])[0]
        if tp not in inflight:
            raise NotExpressible(f"respondToProduce({arg}) with no batch of {tp} in flight (accumulator.drain)")
        answer = re.search(r"\b([A-Z][A-Z_]+)\b", arg)
        code = error_code(answer.group(1)) if answer else 0
        if code != 0 and code not in RETRIABLE:
            raise NotExpressible(f"respondToProduce({arg}): only NONE or a retriable answer is read on this path")
        if code == 0:
            inflight.remove(tp)
            w.client["_inflight"] = inflight
    elif owner == "accumulator" and name == "drain":
        if any(e.in_flight or e.unresolved >= 0 for e in w.client_partitions.values()):
            raise NotExpressible("drain with batches in flight: the harness reads only the transaction's checks")
        appended = list(w.client.get("_appended", []))
        drained = sorted({p for p in appended if api.may_drain(c, p)})
        w.client["_appended"] = [p for p in appended if p not in drained]
        # sent in a produce request: in flight until its answer (client.respondToProduce)
        w.client["_inflight"] = list(w.client.get("_inflight", [])) + [p for p in appended if p in drained]
        extra = {"drained": drained, "has_undrained": bool(w.client["_appended"])}
    else:
        raise NotExpressible(f"call not understood: {text!r}")
    store(w, c)
    out = _view(w, c, tp)
    # what the manager holds of its brokers' ApiVersions (isTransactionV2Enabled, the client-side epoch bump)
    out.update({k: v for k, v in steps_api_versions.view(w).items() if k not in out})
    out.update(extra)
    out["exception"] = exception or None
    out["throws"] = bool(exception)
    return out


#: turns of the closing Sender's loops the harness runs before it takes the loop for one that does not end (each turn
#: either sends the queued EndTxn or begins an abort; a vector needs at most three)
_CLOSE_TURNS = 8


def _answers(inp: dict[str, Any]) -> list[str]:
    """The EndTxn answers the test prepared before ``sender.run()`` (``EndTxnResponse``: one error or a list), each
    checked to be an error the model knows."""
    raw = inp.get("EndTxnResponse")
    if raw is None:
        return []
    answers = [str(e) for e in (raw if isinstance(raw, list) else [raw])]
    for e in answers:
        error_code(e)
    return answers


def _send_txn_offset_commit(w: World, c: api.TxnClient, inp: dict[str, Any]) -> tuple[api.TxnClient, Observed]:
    """The Sender building the queued TxnOffsetCommit (sendOffsetsToTransaction's, after AddOffsetsToTxn and the group
    coordinator's lookup) at the group coordinator's highest version ``txn_offset_commit_max_version``, with the
    consumer's ``group_metadata`` ({member_id, generation_id, group_instance_id}, or none) and, for 2.6 .. 2.8, the
    producer's ``auto_downgrade_txn_commit`` (``txn_offset_commit_version``)."""
    if not c.pending_offsets:
        raise NotExpressible("sendTxnOffsetCommit with no offsets pending (sendOffsetsToTransaction, then "
                             "AddOffsetsToTxnResponse NONE)")
    version = integer(inp.get("txn_offset_commit_max_version"), "txn_offset_commit_max_version")
    metadata = inp.get("group_metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise NotExpressible("group_metadata: give {member_id, generation_id, group_instance_id} or leave it out")
    meta = metadata or {}
    # ConsumerGroupMetadata's defaults are JoinGroupRequest.UNKNOWN_MEMBER_ID / UNKNOWN_GENERATION_ID / no instance
    is_set = (meta.get("member_id") not in (None, "") or integer(meta.get("generation_id", -1), "generation_id") != -1
              or meta.get("group_instance_id") is not None)
    outcome = api.build_txn_offset_commit(version, group_metadata_set=is_set,
                                          check=w.protocol.txn_offset_commit_group_metadata,
                                          auto_downgrade=bool(inp.get("auto_downgrade_txn_commit", False)))
    if outcome == "unchecked":
        raise NotExpressible(f"TxnOffsetCommit v{version} with group metadata under {w.protocol.name}: 2.5.x's builder "
                             "has no check (the fields are v3+ and not ignorable), its outcome is not read")
    if outcome == "refuse":
        # the version mismatch: TxnRequestHandler.onComplete's fatalError fails the result with it
        error = "UnsupportedVersionException"
        c = api.txn_to_fatal_error(c, w.protocol.client_transitions, error).client
        w.client["_offsets_result"], w.client["_offsets_error"] = "failed", error
        return c, {"txn_offset_commit_sent": False, "exception_in_result": error}
    w.client["_txn_in_flight"] = "TxnOffsetCommit"
    return c, {"txn_offset_commit_sent": True, "group_metadata_sent": is_set and outcome == "send"}


def _produce_batches(w: World) -> list[str]:
    """The produce batches of the client's own steps (``steps_client``: sent, in flight or re-enqueued for a retry,
    and appended with no sequence yet): incomplete until answered."""
    sent = [b.name for e in w.client_partitions.values() for b in e.in_flight]
    return sorted(set(sent) | set(w.client.get("_queued", {})))


def _abort_produce_batches(w: World) -> list[str]:
    """``accumulator.abortIncompleteBatches()`` on the client's own produce batches: each completes (aborted)."""
    aborted = _produce_batches(w)
    for tp, e in list(w.client_partitions.items()):
        w.client_partitions[tp] = e._replace(in_flight=())
    w.client["_queued"], w.client["_retry_queue"] = {}, set()
    return aborted


def _shutdown(w: World, c: api.TxnClient, inp: dict[str, Any]) -> tuple[api.TxnClient, Observed]:
    """``Sender.run`` after the close: the loops of ``sender_close`` turn by turn, each EndTxn sent read with the next
    prepared answer (``steps_client.txn_response``), then the forced close's ``TransactionManager.close()``."""
    from .steps_client import txn_response  # steps_client imports this module

    lacks = w.protocol.lacks
    kafka_6635 = "kafka-6635" not in lacks
    failure = api.close_abort_failure(kafka_14831="kafka-14831" not in lacks, kafka_16217="kafka-16217" not in lacks)
    answers = _answers(inp)
    # the test's mocked beginAbort throwing (a TransactionManager from which no abort is possible)
    abort_throws = str(inp.get("begin_abort_throws") or "")
    table = w.protocol.client_transitions
    forced, escaped, sent = bool(w.client.get("_forced")), False, []
    if _produce_batches(w) and not forced:
        # run()'s first loop would go on calling runOnce until they drain: a vector follows that with its own steps
        raise NotExpressible("sender.run() after a graceful close with produce batches pending: write the loop's "
                             "runOnce steps (runOnce(), the answers, resend)")
    for _ in range(_CLOSE_TURNS):
        if w.client.get("_appended") or w.client.get("_inflight"):
            raise NotExpressible("sender.run() with produce batches pending: the harness's close reads the transaction's "
                                 "requests only")
        # hasPendingRequests: a queued EndTxn or a re-enqueued AddPartitionsToTxn (partitions not yet sent are enqueued
        # only by nextRequest, so they are not pending requests)
        queued = bool(w.client.get("_end_txn_queued")) or c.add_partitions_queued
        action = api.next_close_action(api.CloseState(forced, False, queued, api.has_ongoing_transaction(c.state),
                                                      c.state in ("COMMITTING_TRANSACTION", "ABORTING_TRANSACTION")),
                                       kafka_6635=kafka_6635)
        if action == "closed":
            break
        if action == "begin-abort":
            r = api.begin_abort(c, table)
            exception = abort_throws or r.exception
            if not exception:
                c = r.client
                w.client["_end_txn_queued"] = not w.client.get("_epoch_bump_required", False)
            elif failure == "force-close":
                forced = True
            elif failure == "escape":
                escaped = True
                break
            # "retry": logged, and the loop goes round again
            continue
        if not w.client.get("_end_txn_queued"):
            raise NotExpressible("the closing Sender waits for a transactional request the harness does not follow")
        store(w, c)
        c, more = _next_request(w, c, False)
        if more.get("end_txn_skipped"):
            continue
        if more.get("next_request") != "EndTxn":
            raise NotExpressible(f"the closing Sender sends {more.get('next_request')}: only EndTxn is followed here")
        if not answers:
            raise NotExpressible("the closing Sender sends EndTxn with no answer prepared (input EndTxnResponse)")
        sent.append("COMMIT" if c.state == "COMMITTING_TRANSACTION" else "ABORT")
        store(w, c)
        txn_response(w, {"event": "EndTxnResponse", "error": answers.pop(0)})
        c = client_of(w)
    else:
        # a loop that does not end (3.6.0 .. 3.7.0 retrying a failing abort): run() never returns
        return c, {"returns": False, "end_txn_sent": sent, "transaction_manager_closed": False}
    closed = api.close_after_loops(forced=forced, kafka_6635=kafka_6635, escaped=escaped)
    if closed.manager_closed:
        c = api.close_transaction_manager(c, table, requests_queued=bool(w.client.get("_end_txn_queued")))
        w.client["_end_txn_queued"] = False
    aborted: list[str] = []
    if closed.batches_aborted:
        w.client["_appended"], w.client["_inflight"] = [], []
        aborted = _abort_produce_batches(w)
    # each produce batch of the vector: its future done (answered, failed or aborted) or not
    incomplete = set(_produce_batches(w))
    done = {name: name not in incomplete for name in sorted(w.client.get("_batches", {}))}
    return c, {"returns": not escaped, "aborted_produce_batches": aborted, "batches_done": done, "thread_died": escaped, "end_txn_sent": sent,
               "end_txn_result": sent[-1] if sent else None,
               "transaction_manager_closed": closed.manager_closed, "batches_aborted": closed.batches_aborted,
               "network_client_closed": closed.client_closed}


def _next_request(w: World, c: api.TxnClient, has_incomplete_batches: bool) -> tuple[api.TxnClient, Observed]:
    if not w.client.get("_end_txn_queued"):
        raise NotExpressible("nextRequest with no EndTxn queued by this vector's beginCommit / beginAbort")
    r = api.next_request_to_end(c, w.protocol.client_transitions, has_incomplete_batches)
    if r.request:
        w.client["_txn_in_flight"] = r.request
    if r.request == "EndTxn" or r.end_txn_skipped or r.end_txn_failed:
        w.client["_end_txn_queued"] = False
    if r.end_txn_skipped and r.client.pending_call is not None:
        # completeTransaction completes the call's result without a request
        return api.complete_call(r.client, acked=not w.client.get("_timed_out")), {
            "next_request": None, "end_txn_sent": False, "end_txn_skipped": True}
    return r.client, {"next_request": r.request or None, "end_txn_sent": r.request == "EndTxn",
                      "end_txn_skipped": r.end_txn_skipped}


def _result_view(held: api.PendingCall | None) -> Observed:
    """The test's TransactionalRequestResult: isCompleted, isAcked, isSuccessful and error()."""
    done = held is not None and held.completed
    return {"result_completed": done, "result_acked": held is not None and held.acked,
            "result_successful": done and held is not None and not held.error,
            "result_error": (held.error or None) if held is not None and done else None}


def _send_offsets(c: api.TxnClient, table: str) -> api.TxnCallResult:
    return api.send_offsets_to_transaction(c)


#: the calls whose result TransactionManager keeps for a retry (handleCachedTransactionRequestResult)
_KEPT = frozenset({"initializeTransactions", "beginCommit", "beginAbort"})

_CALLS = {"initializeTransactions": api.initialize_transactions, "beginTransaction": api.begin_transaction,
          "beginCommit": api.begin_commit, "beginAbort": api.begin_abort, "sendOffsetsToTransaction": _send_offsets}


def answered(w: World, api_name: str, done: bool, retry: bool = False) -> None:
    """The transaction's partitions after a coordinator's answer (``steps_client.txn_response``):
    AddPartitionsToTxn answered NONE puts the sent partitions in the transaction; EndTxn answered NONE
    completes it (``completeTransaction`` clears every partition set); another answer to
    AddPartitionsToTxn leaves sets this harness does not track."""
    keys = ("_new", "_pending", "_added")
    if w.client.get("_txn_in_flight") == api_name:
        w.client.pop("_txn_in_flight")
    if api_name == "AddPartitionsToTxn" and done:
        # only the partition sets are read here (the state may be one a vector of the other steps names freely)
        c = api.partitions_added(api.TxnClient("IN_TRANSACTION", new=frozenset(w.client.get("_new", ())),
                                               pending=frozenset(w.client.get("_pending", ())),
                                               added=frozenset(w.client.get("_added", ()))))
        w.client.update({"_new": c.new, "_pending": c.pending, "_added": c.added, "_started": c.started,
                         "_add_partitions_queued": False})
    elif api_name == "AddOffsetsToTxn" and done:
        # the TxnOffsetCommit is enqueued with the offsets pending; the result waits for it
        w.client["_started"] = True
        w.client["_pending_offsets"] = frozenset(w.client.get("_offsets", ()))
    elif api_name == "AddPartitionsToTxn" and retry and w.client.get("_new") and not w.client.get("_partitions_unknown"):
        # re-enqueued: the partitions stay pending and the request goes ahead of an EndTxn
        c = api.retry_add_partitions(api.TxnClient("IN_TRANSACTION", new=frozenset(w.client.get("_new", ())),
                                                   pending=frozenset(w.client.get("_pending", ()))))
        w.client.update({"_new": c.new, "_pending": c.pending, "_add_partitions_queued": True})
    elif api_name == "AddPartitionsToTxn" and any(w.client.get(k) for k in keys):
        w.client["_partitions_unknown"] = True
    if api_name == "EndTxn" and done:
        w.client.update({k: frozenset() for k in keys})
        w.client.update({"_started": False, "_end_txn_queued": False})
        w.client.pop("_partitions_unknown", None)


def txn_offset_commit_response(w: World, inp: dict[str, Any]) -> Observed:
    """``TxnOffsetCommitResponse`` with ``errors`` (partition -> error): the transactional producer's
    TxnOffsetCommitHandler after sendOffsetsToTransaction and a successful AddOffsetsToTxn."""
    errors = inp.get("errors")
    if not isinstance(errors, dict) or not errors:
        raise NotExpressible("TxnOffsetCommitResponse without 'errors' (partition -> error)")
    c = client_of(w)
    if not c.pending_offsets:
        raise NotExpressible("TxnOffsetCommitResponse with no offsets pending (sendOffsetsToTransaction, then "
                             "AddOffsetsToTxnResponse NONE)")
    a = api.on_txn_offset_commit_answer(c.pending_offsets, {str(tp): error_code(str(e)) for tp, e in errors.items()},
                                        any_retriable=w.protocol.txn_offset_commit_any_retriable,
                                        handler=w.protocol.txn_offset_commit_handler)
    table = w.protocol.client_transitions
    if a.action == "abortable":
        c = api.txn_to_abortable_error(c, table, a.exception).client
    elif a.action == "fatal":
        c = api.txn_to_fatal_error(c, table, a.exception).client
    c = c._replace(pending_offsets=a.pending)
    if a.action != "retry":
        w.client["_offsets_result"] = "done" if a.action == "done" else "failed"
        w.client["_offsets_error"] = a.exception or None
    store(w, c)
    out = _view(w, c, str(w.client.get("_tp", "tp0")))
    out.update({"result": {"done": "succeeded", "retry": "pending"}.get(a.action, "failed"), "retry": a.action == "retry",
                "last_error": c.last_error or None})
    return out
