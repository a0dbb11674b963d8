"""Steps on the producer client: sequence arithmetic, batches drained and answered (one clause or
several joined by ';' in the vectors' free text), the transactional abort and a new
transaction, sendOffsetsToTransaction's TxnOffsetCommit answer."""

from __future__ import annotations

import re
from typing import Any

from ..api import client as api
from ..api.protocol import client_tv2
from ..errors import RETRIABLE, Errors
from . import steps_no_idempotence
from .steps_txn_calls import answered, call_completed
from .values import NotExpressible, error_code, integer
from .world import World

Observed = dict[str, Any]
FREE_TEXT = "a free-text description of the client's action; the step's other fields check it"


def _tp(w: World, default: str = "tp0") -> str:
    return w.client.get("_tp", default)


def _entry(w: World, tp: str) -> api.PartitionEntry:
    if tp not in w.client_partitions:
        w.client_partitions[tp] = api.PartitionEntry(integer(w.client.get("producer_id", 0), "producer_id"),
                                                     integer(w.client.get("epoch", 0), "epoch"))
    return w.client_partitions[tp]


def _transactional(w: World) -> bool:
    return bool(w.client.get("transactional", False))


def _state(w: World) -> str:
    st = str(w.client.get("state", "IN_TRANSACTION" if _transactional(w) else "READY"))
    return st.split(",")[0].strip()


def _view(w: World, tp: str) -> Observed:
    e = _entry(w, tp)
    out: Observed = {"next_sequence": e.next_sequence,
                     "last_acked_sequence": None if e.last_acked_sequence < 0 else e.last_acked_sequence,
                     "last_acked_offset": None if e.last_acked_offset < 0 else e.last_acked_offset,
                     "producer_epoch": integer(w.client.get("epoch", 0), "epoch"),
                     "producer_id": integer(w.client.get("producer_id", 0), "producer_id"),
                     "client_state": _state(w),
                     "has_ongoing_transaction": api.has_ongoing_transaction(_state(w)),
                     "first_in_flight_sequence": e.in_flight[0].base_sequence if e.in_flight else None,
                     "unresolved": e.unresolved >= 0,
                     # TransactionManager.hasInflightBatches(tp)
                     "has_inflight_batches": bool(e.in_flight),
                     # producerIdAndEpoch(tp): a partition keeps the pair of its batches until none is in flight
                     "partition_producer_id": e.producer_id, "partition_epoch": e.epoch,
                     "stale_producer_id_and_epoch": (e.producer_id, e.epoch) != _pair(w),
                     "__why__": {"action": FREE_TEXT}}
    for name, entry in w.client_partitions.items():
        out[f"next_sequence_{name}"] = entry.next_sequence
    return out


def increment_sequence(w: World, inp: dict[str, Any]) -> Observed:
    m = re.match(r"\s*incrementSequenceNumber\(\s*(\w+)\s*,\s*(\d+)\s*\)", str(inp.get("call", "")))
    if not m:
        raise NotExpressible(f"call not understood: {inp.get('call')!r}")
    tp = m.group(1)
    e = _entry(w, tp)
    w.client_partitions[tp] = e._replace(next_sequence=api.increment_sequence(e.next_sequence, int(m.group(2)),
                                                                               w.protocol))
    return {"next_sequence": w.client_partitions[tp].next_sequence}


def _pair(w: World) -> tuple[int, int]:
    return integer(w.client.get("producer_id", 0), "producer_id"), integer(w.client.get("epoch", 0), "epoch")


def _send(w: World, tp: str, name: str, count: int) -> None:
    # the drain first brings a partition left on an older pair to the producer's (from 0)
    entry = api.maybe_update_producer_id_and_epoch(_entry(w, tp), *_pair(w), w.protocol.max_seq)
    e, _ = api.assign(entry, name, count, w.protocol.max_seq)
    w.client_partitions[tp] = e
    w.client.setdefault("_batches", {})[name] = tp
    w.client["_tp"] = tp


def _count(text: str) -> int:
    m = re.search(r"(\d+)\s*records?", text)
    if m:
        return int(m.group(1))
    r = re.search(r"seq\s*(\d+)\s*\.\.\s*(\d+)", text)
    return int(r.group(2)) - int(r.group(1)) + 1 if r else 1


def _respond(w: World, tp: str, name: str | None, error: int, base_offset: int, lso: int,
             retries_left: bool = True, inp: dict[str, Any] | None = None) -> Observed:
    # a disconnect is NETWORK_EXCEPTION (Sender.handleProduceResponse's wasDisconnected): a RetriableException that
    # canRetry retries; out of retries failBatch fails the batch with its NetworkException
    e = _entry(w, tp)
    if name is not None and name in w.client.get("_untracked", ()):
        # a retry of a batch a late failure took out of inflightBatchesBySequence (before KAFKA-13794):
        # insertInSequenceOrder finds it untracked and throws
        if error not in RETRIABLE:
            raise NotExpressible(f"an answer {Errors(error).name} to a batch no longer tracked as in flight")
        return {"exception": "IllegalStateException", "can_retry": True}
    if name is not None and name in w.client.get("_batches", {}) and not any(b.name == name for b in e.in_flight):
        return _late_answer(w, tp, name, error, retries_left, base_offset)
    if not e.in_flight:
        raise NotExpressible("a produce response with no batch in flight")
    batch = next((b for b in e.in_flight if b.name == name), e.in_flight[0])
    # its sequences as answered (an epoch bump may have rewritten them since the send)
    w.client.setdefault("_last_seq", {})[batch.name] = api.increment_sequence(batch.base_sequence, batch.records - 1,
                                                                              w.protocol)
    out: Observed = {}
    _requeue(w, batch.name, False)
    if api.splits(error, batch.records):
        return _split(w, tp, batch, inp)
    if error == Errors.NONE:
        w.client_partitions[tp] = api.acknowledge(e, batch.name, base_offset, w.protocol.max_seq)
        out["record_offset"] = base_offset + batch.records - 1
        out["can_retry"] = False
        return out
    # out of retries: Sender.failBatch(batch, response, attempts < retries), so no sequence adjustment
    r = api.on_produce_error(e, batch.name, error, lso, transactional=_transactional(w), max_seq=w.protocol.max_seq,
                             producer_fatal=_state(w) == "FATAL_ERROR", can_retry=retries_left,
                             adjust_sequences=retries_left, pid_mapping_fatal=w.protocol.eos.client_produce_pid_mapping_fatal)
    _react(w, tp, r, error)
    _requeue(w, batch.name, r.retry)
    if r.completed:
        out["record_offset"] = -1
    if not r.retry:
        # Sender.failBatch's exception for the batch (its own for the authorization errors)
        out["batch_error"] = api.failed_batch_error(error, transactional=False, wrap_in_abortable=False)
        if _transactional(w):
            # handleFailedBatch's maybeTransitionToErrorState: what the batch's error left as the manager's lastError
            out["last_error"] = w.client.get("last_error")
    out["can_retry"] = r.retry
    loop = _sender_loop(w)
    # the loop's InitProducerId while the Sender closes, and the batches a fatal error aborts (maybeAbortBatches)
    out.update({k: loop[k] for k in ("init_producer_id_sent", "returns", "aborted_batches", "aborted_batches_error")
                if k in loop})
    return out


def _split(w: World, tp: str, batch: api.InFlightBatch, inp: dict[str, Any] | None) -> Observed:
    """MESSAGE_TOO_LARGE on a batch of several records: ``splitAndReenqueue`` (``model/producer/batch_split.py``). The
    new batches are named by the step ('split into r2, r3' in its text, or ``split_into``), of one record each unless
    ``split_records`` gives their sizes (Kafka splits by batch.size, which the model does not keep)."""
    text = str((inp or {}).get("event", ""))
    m = re.search(r"split\s+into\s+((?:r\d+[\s,]*)+)", text)
    names = re.findall(r"r\d+", m.group(1)) if m else [str(x) for x in (inp or {}).get("split_into", ()) or ()]
    sizes = [integer(x, "split_records") for x in (inp or {}).get("split_records", ()) or ()] or [1] * len(names)
    if not names or len(sizes) != len(names) or sum(sizes) != batch.records:
        raise NotExpressible(f"a split of {batch.records} records needs its batches named ('split into r2, r3', "
                             "split_into) and, unless of one record each, their sizes (split_records)")
    w.client_partitions[tp] = api.split_and_reenqueue(_entry(w, tp), batch.name, sizes, names, w.protocol.max_seq)
    for part in names:
        w.client.setdefault("_batches", {})[part] = tp
        # reenqueueSplitBatch: back in the accumulator, undrained until sent
        _requeue(w, part, True)
    # the big batch's futures complete only through the split batches: none is done, nothing is retried
    w.client.setdefault("_split", set()).add(batch.name)
    return {"split_batches": names, "record_offset": None, "can_retry": False}


def _late_answer(w: World, tp: str, name: str, error: int, retries_left: bool, base_offset: int) -> Observed:
    """An answer to a batch already completed (expired, or split). A success (NONE, or a DUPLICATE_SEQUENCE_NUMBER
    completeBatch takes as one) runs ``handleCompletedBatch`` in every version (``model/producer/late_success.py``).
    A failure: from KAFKA-14884 (ea0bb001262, 3.6.0) ``Sender.failBatch`` calls ``handleFailedBatch`` only when
    ``completeExceptionally`` completes the batch, so the answer is ignored; before, ``handleFailedBatch`` ran for it.
    The idempotent producer: ``removeInFlightBatch`` (by base sequence before KAFKA-13794), then its epoch bump for a
    failure with retries left (not for a batch of an older epoch before KAFKA-12152, 2.8.0). The transactional
    producer: ``model/producer/late_failure.py``."""
    late = w.client.get("_expired", {}).get(name)
    if late is not None and error in (Errors.NONE, Errors.DUPLICATE_SEQUENCE_NUMBER):
        return _late_success(w, tp, late, base_offset)
    if error in (Errors.NONE, Errors.DUPLICATE_SEQUENCE_NUMBER) or "kafka-14884" not in w.protocol.lacks or late is None:
        # a split batch's answer completes nothing: its futures are the split batches'
        return _ignored(w)
    if error in (Errors.UNKNOWN_PRODUCER_ID, *api.FATAL_PRODUCE_ERRORS):
        raise NotExpressible(f"a late {Errors(error).name} for an expired batch before KAFKA-14884 (3.6.0) runs "
                             "handleFailedBatch's error transition and sequence reset, which the harness does not take")
    if _transactional(w):
        return _late_transactional(w, tp, late, error, retries_left)
    before = _entry(w, tp)
    after = api.remove_in_flight_batch(before, late, by_identity="kafka-13794" not in w.protocol.lacks)
    w.client_partitions[tp] = after
    _untrack(w, before, after)
    stale = (late.producer_id, late.epoch) != _pair(w)
    if retries_left and not (stale and "kafka-12152" in w.protocol.lacks):
        w.client.setdefault("_rewrite", set()).add(tp)
    return {"ignored": False}


def _late_success(w: World, tp: str, late: api.InFlightBatch, base_offset: int) -> Observed:
    """``handleCompletedBatch`` for a batch the Sender expired: the last acknowledged sequence and offset move, the
    expiry's error, epoch bump and unresolved sequence stay, the batch's future keeps its TimeoutException."""
    before = _entry(w, tp)
    if _transactional(w) and not before.in_flight and before.next_sequence == 0 \
            and (before.producer_id, before.epoch) != (late.producer_id, late.epoch):
        # InitProducerId's resetSequenceNumbers dropped the partition's entry (maybeUpdateLastAckedSequence's getPartition
        # would throw IllegalStateException); whether a drain made it again is not kept
        raise NotExpressible("a late success of an older epoch's batch on a partition not drained since the epoch bump")
    after = api.handle_late_completed_batch(
        before, late, base_offset, max_seq=w.protocol.max_seq, producer=_pair(w),
        by_identity="kafka-13794" not in w.protocol.lacks, reset_drained_stale="kafka-12152" in w.protocol.lacks)
    w.client_partitions[tp] = after
    _untrack(w, before, after)
    # the future keeps the expiry's exception (Sender.failBatch's TimeoutException, wrapped as the expiry wrapped it)
    expiry = api.failed_batch_error(int(Errors.REQUEST_TIMED_OUT), transactional=_transactional(w),
                                    wrap_in_abortable=_transactional(w) and w.protocol.eos.client_batch_error_wrapped_abortable)
    out: Observed = {"ignored": False, "record_offset": None, "batch_error": expiry, "can_retry": False}
    if _transactional(w):
        out.update(_txn_status(w, None))
    return out


def _untrack(w: World, before: api.PartitionEntry, after: api.PartitionEntry) -> None:
    """The batches a late answer took out of the partition's in-flight set: their retries are no longer tracked."""
    kept = {b.name for b in after.in_flight}
    w.client.setdefault("_untracked", set()).update(b.name for b in before.in_flight if b.name not in kept)


def _txn_status(w: World, exception: str | None) -> Observed:
    """What a late answer leaves of the transactional producer's error state."""
    return {"exception": exception, "last_error": w.client.get("last_error"),
            "epoch_bump_required": bool(w.client.get("_epoch_bump_required", False))}


def _requeue(w: World, name: str, retry: bool) -> None:
    """A batch answered with an error it retries goes back into the accumulator (``reenqueue``) with its sequence:
    undrained until it is resent; any other answer takes it out."""
    queue = set(w.client.get("_retry_queue", ()))
    if retry:
        queue.add(name)
    else:
        queue.discard(name)
    w.client["_retry_queue"] = queue


def _closing_idempotent(w: World) -> bool:
    return bool(w.client.get("_closing")) and not _transactional(w)


def _producer_id_fetch(w: World) -> str:
    """The closing Sender and the producer id the idempotent producer lost (``sender_close``, KAFKA-8061). The
    profiles lacking KAFKA-8061 (2.0.0, and 2.0.1-2.3's versions before 2.2.0) are read as their first version, which
    also lacks KAFKA-5503 (2.1.1); no vector reaches them (the harness's idempotent client is KIP-360's)."""
    lacks = w.protocol.lacks
    return api.producer_id_fetch_on_close(forced=bool(w.client.get("_forced")), kafka_5503=False,
                                          kafka_8061="kafka-8061" not in lacks, kip_360="kip-360" not in lacks)


def _ignored(w: World) -> Observed:
    out: Observed = {"ignored": True}
    if _transactional(w):
        out.update(_txn_status(w, None))
    return out


def _late_transactional(w: World, tp: str, late: api.InFlightBatch, error: int, retries_left: bool) -> Observed:
    """Before KAFKA-14884: the transactional producer's ``handleFailedBatch`` for a batch it failed already."""
    before = _entry(w, tp)
    stale = (late.producer_id, late.epoch) != _pair(w)
    if stale and retries_left and "kafka-12152" not in w.protocol.lacks and not before.in_flight \
            and before.next_sequence == 0 and (before.producer_id, before.epoch) != (late.producer_id, late.epoch):
        # InitProducerId's resetSequenceNumbers dropped the partition's entry; whether a drain made it again
        # (adjustSequencesDueToFailedBatch's txnPartitionMap.contains) is not kept
        raise NotExpressible("a late failure of an older epoch's batch on a partition not drained since the epoch bump")
    exception = api.failed_batch_error(error, transactional=True,
                                       wrap_in_abortable=w.protocol.eos.client_batch_error_wrapped_abortable)
    r = api.handle_late_failed_batch(
        _state(w), before, late, exception, producer=_pair(w), can_bump_epoch=_can_bump(w), adjust=retries_left,
        by_identity="kafka-13794" not in w.protocol.lacks, stale_ignored="kafka-12152" in w.protocol.lacks,
        invalid_transition="IllegalStateException" if w.protocol.client_retry_safe_calls else "KafkaException")
    w.client["state"] = r.state
    if r.bump_required:
        w.client["_epoch_bump_required"] = True
    if r.last_error is not None:
        w.client["last_error"] = r.last_error
    w.client_partitions[tp] = r.entry
    _untrack(w, before, r.entry)
    return {"ignored": False, **_txn_status(w, r.exception)}


def _can_bump(w: World) -> bool:
    return not _transactional(w) or bool(w.client.get("coordinator_supports_epoch_bump", True))


def _abortable(w: World) -> None:
    """``maybeTransitionToErrorState`` for a transactional producer: no epoch bump is asked for while
    completing (isCompleting), and transitionToAbortableError leaves an abort in progress alone."""
    state = _state(w)
    if state not in ("COMMITTING_TRANSACTION", "ABORTING_TRANSACTION") and _can_bump(w):
        w.client["_epoch_bump_required"] = True
    if state != "ABORTING_TRANSACTION":
        w.client["state"] = "ABORTABLE_ERROR"


def _react(w: World, tp: str, r: api.ErrorReaction, error: int | None = None) -> None:
    """The reaction's effects; ``error``: the batch's error, whose exception becomes the transactional producer's
    lastError (``transitionToFatalError`` always; ``transitionToAbortableError`` not during an abort; nothing
    when the producer was already in a fatal error: ``handleFailedBatch`` returns early)."""
    # transitionToFatalError for any producer (maybeTransitionToErrorState's fatal exceptions), the abortable
    # error for a transactional one only
    if error is not None and _state(w) != "FATAL_ERROR" and (
            r.fatal or (_transactional(w) and r.abortable and _state(w) != "ABORTING_TRANSACTION")):
        w.client["last_error"] = api.failed_batch_error(error, transactional=True,
                                                        wrap_in_abortable=w.protocol.eos.client_batch_error_wrapped_abortable)
    w.client_partitions[tp] = r.entry
    if r.bump_epoch:
        w.client.setdefault("_rewrite", set()).add(tp)
    if r.fatal:
        w.client["state"] = "FATAL_ERROR"
    elif r.abortable:
        _abortable(w)


def _resolve(w: World, tp: str) -> str:
    """``maybeResolveSequences`` for one partition: the entry is stored, a partition whose sequences
    an idempotent bump rewrites is marked; the action is returned for the caller to react to."""
    entry, action = api.maybe_resolve_sequences(w.client_partitions[tp], transactional=_transactional(w),
                                                can_bump_epoch=_can_bump(w), max_seq=w.protocol.max_seq)
    w.client_partitions[tp] = entry
    if action == "bump":
        w.client.setdefault("_rewrite", set()).add(tp)
    return action


def _resolved_reaction(w: World, action: str) -> None:
    """A transactional producer's unresolved sequence that did not resolve: an abortable error with an epoch
    bump where the client may bump, else a fatal error (``maybeResolveSequences``)."""
    if action == "abortable-bump":
        w.client["_epoch_bump_required"] = True
        if _state(w) != "ABORTING_TRANSACTION":
            w.client["state"] = "ABORTABLE_ERROR"
    elif action == "fatal":
        w.client["state"] = "FATAL_ERROR"


def _sender_loop(w: World) -> Observed:
    """What the Sender's next loop does before draining: ``maybeResolveSequences``; in a fatal error it aborts the
    batches not yet sent with the last error and stops (``maybeAbortBatches``); an InitProducerId authorization
    error (abortable from KAFKA-13668, 3.6.0) resets the producer to UNINITIALIZED after aborting them with it
    (``shouldHandleAuthorizationError``) and stops; then the idempotent producer's
    ``bumpIdempotentEpochAndResetIdIfNeeded``. Returns the batches aborted and their error."""
    for tp in list(w.client_partitions):
        _resolved_reaction(w, _resolve(w, tp))
    last = w.client.get("last_error")
    if _state(w) == "FATAL_ERROR" or (w.protocol.client_auth_init_abortable and _state(w) == "ABORTABLE_ERROR"
                                      and last in ("TransactionalIdAuthorizationException",
                                                   "ClusterAuthorizationException")):
        # maybeAbortBatches: RecordAccumulator.abortBatches fails every incomplete batch, the ones in flight too (their
        # late answers are ignored, KAFKA-5957, 1.0.0); read at 2.0.0 and 4.1.0
        gone = w.client.setdefault("_aborted_in_flight", set())
        in_flight = {b.name for e in w.client_partitions.values() for b in e.in_flight} - gone
        gone |= in_flight
        queued = sorted(set(w.client.get("_queued", {})) | in_flight)
        w.client["_queued"] = {}
        if _state(w) == "ABORTABLE_ERROR":
            w.client["state"], w.client["last_error"] = "UNINITIALIZED", None
            w.client.pop("_rewrite", None)
        return {"aborted_batches": queued, "aborted_batches_error": (last or "KafkaException") if queued else None}
    rewrite = w.client.pop("_rewrite", set())
    if rewrite and not _transactional(w) and _state(w) != "FATAL_ERROR":
        _bump(w, rewrite)
    if _closing_idempotent(w) and _pair(w)[0] < 0:
        fetch = _producer_id_fetch(w)
        return {"init_producer_id_sent": fetch == "send", "returns": fetch != "block"}
    return {}


_ERROR_WORDS = {e.name for e in Errors}

#: exceptions a test hands to handleFailedBatch -> the error whose exception it is
_EXCEPTION_ERRORS = {"TimeoutException": Errors.REQUEST_TIMED_OUT,
                     "OutOfOrderSequenceException": Errors.OUT_OF_ORDER_SEQUENCE_NUMBER}


def _error_in(text: str, inp: dict[str, Any]) -> int:
    named = [w for w in re.findall(r"[A-Z][A-Z_]+", text) if w in _ERROR_WORDS]
    return error_code(named[0] if named else str(inp.get("error", "NONE")))


def _number(text: str, word: str, default: int) -> int:
    m = re.search(word + r"\s*[=:]?\s*(-?\d+)", text)
    return int(m.group(1)) if m else default


def _clause(w: World, text: str, inp: dict[str, Any]) -> Observed:
    t = text.strip()
    tp_m = re.search(r"\b(tp\d+)\b", t)
    name_m = re.search(r"\b(r\d+)\b", t)
    if t.startswith("resend"):
        name = name_m.group(1) if name_m else ""
        tp = w.client.get("_batches", {}).get(name, _tp(w))
        b = next((x for x in _entry(w, tp).in_flight if x.name == name), None)
        w.client["_tp"] = tp
        if b is None:
            raise NotExpressible(f"resend of a batch not in flight: {t!r}")
        if _pair(w)[0] < 0 and name in w.client.get("_retry_queue", ()):
            # RecordAccumulator.shouldStopDrainBatchesForPartition: nothing drains while the producer has no id
            return {"drained": False, "has_undrained": True}
        _requeue(w, name, False)
        return {"drained": True, "request": {"base_sequence": b.base_sequence, "producer_epoch": b.epoch, "producer_id": b.producer_id}}
    m = re.match(r"^(tp\d+)\s+produce\s+ok(?:\s+x(\d+))?", t)
    if m:
        tp = m.group(1)
        for _ in range(int(m.group(2) or 1)):
            name = f"b{len(w.client.get('_batches', {}))}"
            _send(w, tp, name, 1)
            off = w.client.setdefault("_offsets", {}).get(tp, 0)
            _respond(w, tp, name, 0, off, -1)
            w.client["_offsets"][tp] = off + 1
        return {}
    m = re.match(r"^(tp\d+)\s+produce\s*->\s*(\w+)", t)
    if m:
        tp = m.group(1)
        name = f"b{len(w.client.get('_batches', {}))}"
        _send(w, tp, name, 1)
        return _respond(w, tp, name, error_code(m.group(2)), 0, _number(t, "log_start_offset", -1))
    if re.match(r"^send\b", t):
        batch = str(inp.get("batch", "")) if t == "send" else t[4:]
        nm = re.search(r"\b(r\d+)\b", batch)
        tp = tp_m.group(1) if tp_m else _tp(w)
        _send(w, tp, nm.group(1) if nm else f"b{len(w.client.get('_batches', {}))}", _count(batch))
        return {}
    if re.match(r"^(produce_)?response\b", t):
        tp = w.client.get("_batches", {}).get(name_m.group(1), _tp(w)) if name_m else (tp_m.group(1) if tp_m else _tp(w))
        w.client["_tp"] = tp
        base = _number(t, "offset", integer(inp.get("base_offset", 0), "base_offset"))
        lso = _number(t, "log_start_offset", integer(inp.get("log_start_offset", -1), "log_start_offset"))
        return _respond(w, tp, name_m.group(1) if name_m else None, _error_in(t, inp), base, lso,
                        retries_left=not re.search(r"retries exhausted", t), inp=inp)
    if re.match(r"^abortTransaction\(\)$", t) or re.match(r"^EndTxn\(ABORT\)\s+ok$", t):
        if t.startswith("EndTxn"):
            _aborted(w)
        else:
            w.client["state"] = "ABORTING_TRANSACTION"  # beginAbort
        return {}
    if re.match(r"^beginCommit\(\)$", t):
        w.client["state"] = "COMMITTING_TRANSACTION"
        return {}
    m = re.match(r"^new transaction, add (tp\d+)$", t)
    if m:
        w.client["state"] = "IN_TRANSACTION"
        _entry(w, m.group(1))
        return {}
    m = re.match(r"^append\s+(tp\d+)\s+(r\d+)$", t)
    if m:
        # RecordAccumulator.append: the batch waits to be drained; it has no sequence yet
        _entry(w, m.group(1))
        w.client.setdefault("_queued", {})[m.group(2)] = m.group(1)
        w.client["_tp"] = m.group(1)
        return {}
    m = re.match(r"^expire\s+(r\d+)\b", t)
    if m and m.group(1) in w.client.get("_queued", {}):
        # Sender.failBatch of a batch never drained (TimeoutException, no sequence adjustment):
        # handleFailedBatch's maybeTransitionToErrorState only; no sequence was given, none is unresolved
        w.client["_tp"] = w.client["_queued"].pop(m.group(1))
        if _transactional(w):
            _abortable(w)
            # Sender.failBatch's TimeoutException (a TransactionAbortableException around it from KAFKA-19176)
            w.client["last_error"] = api.failed_batch_error(int(Errors.REQUEST_TIMED_OUT), transactional=True,
                                                            wrap_in_abortable=w.protocol.eos.client_batch_error_wrapped_abortable)
        return {"last_error": w.client.get("last_error")}
    if m and m.group(1) in w.client.get("_split", ()):
        # the split batch left the Sender's in-flight list (KAFKA-8325, 2.4.0): its delivery timeout expires nothing
        w.client["_tp"] = w.client.get("_batches", {}).get(m.group(1), _tp(w))
        return {"expired": False}
    if m:
        name = m.group(1)
        tp = w.client.get("_batches", {}).get(name, _tp(w))
        if not any(b.name == name for b in _entry(w, tp).in_flight):
            raise NotExpressible(f"expiry of a batch not in flight: {t!r}")
        w.client["_tp"] = tp
        w.client.setdefault("_expired", {})[name] = next(b for b in _entry(w, tp).in_flight if b.name == name)
        # Sender.sendProducerData expires it (failBatch's TimeoutException, the transactional producer's lastError);
        # the next loop resolves the sequence ('runOnce()')
        _react(w, tp, api.expire_batch(_entry(w, tp), name, transactional=_transactional(w),
                                       max_seq=w.protocol.max_seq), int(Errors.REQUEST_TIMED_OUT))
        return {}
    if re.match(r"^runOnce\(\)$", t):
        return _sender_loop(w)
    raise NotExpressible(f"free-text client event not understood: {t!r}")


def _bump(w: World, partitions: set[str]) -> None:
    """``bumpIdempotentProducerEpoch``: epoch + 1 (at the largest epoch the producer id is dropped and
    InitProducerId is sent: INITIALIZING), and the partitions that asked are re-sequenced from 0."""
    pid, epoch = _pair(w)
    new_pid, new_epoch = api.next_idempotent_pair(pid, epoch, w.protocol.max_epoch)
    w.client["producer_id"], w.client["epoch"] = new_pid, new_epoch
    if new_pid < 0:
        w.client["state"] = "INITIALIZING"
    for tp in partitions:
        w.client_partitions[tp] = api.restart_sequences(_entry(w, tp), w.protocol.max_seq, new_pid, new_epoch)


def tm_call(w: World, inp: dict[str, Any]) -> Observed:
    """``TransactionManager`` calls a test makes directly: ``requestEpochBumpForPartition(tp)``,
    ``bumpIdempotentEpochAndResetIdIfNeeded()``, ``maybeUpdateProducerIdAndEpoch(tp)``."""
    text = str(inp.get("call", ""))
    m = re.match(r"^\s*(requestEpochBumpForPartition|maybeUpdateProducerIdAndEpoch)\(\s*(tp\d+)\s*\)\s*$", text)
    if m and m.group(1) == "requestEpochBumpForPartition":
        w.client.setdefault("_rewrite", set()).add(m.group(2))
        tp = m.group(2)
    elif m:
        tp = m.group(2)
        w.client_partitions[tp] = api.maybe_update_producer_id_and_epoch(_entry(w, tp), *_pair(w), w.protocol.max_seq)
    elif (f := re.match(r"^\s*(markSequenceUnresolved|handleFailedBatch)\(\s*(r\d+)\s*(?:,\s*(\w+)\s*)?"
                        r"(?:,\s*(?:true|false)\s*)?\)\s*$", text)):
        name = f.group(2)
        tp = w.client.get("_batches", {}).get(name, _tp(w))
        done = w.client.get("_last_seq", {}).get(name)
        if f.group(1) == "markSequenceUnresolved" and done is not None and \
                not any(b.name == name for b in _entry(w, tp).in_flight):
            # an acknowledged batch: only its last sequence is read
            w.client_partitions[tp] = api.mark_unresolved_after(_entry(w, tp), done, w.protocol.max_seq)
        elif not any(b.name == name for b in _entry(w, tp).in_flight):
            raise NotExpressible(f"{text!r}: the batch is not in flight")
        elif f.group(1) == "markSequenceUnresolved":
            w.client_partitions[tp] = api.mark_sequence_unresolved(_entry(w, tp), name, w.protocol.max_seq)
        else:
            # the error code whose exception the test passes
            code = _EXCEPTION_ERRORS.get(str(f.group(3)))
            if code is None:
                raise NotExpressible(f"{text!r}: exception not one of {', '.join(_EXCEPTION_ERRORS)}")
            adjust = bool(re.search(r",\s*true\s*\)\s*$", text))
            _react(w, tp, api.on_produce_error(_entry(w, tp), name, int(code), -1, transactional=_transactional(w),
                                               max_seq=w.protocol.max_seq, can_retry=False, adjust_sequences=adjust,
                                               producer_fatal=_state(w) == "FATAL_ERROR",
                                               pid_mapping_fatal=w.protocol.eos.client_produce_pid_mapping_fatal), int(code))
    elif re.match(r"^\s*transitionToFatalError\(\s*(?:new\s+)?\w*(?:\(\))?\s*\)\s*$", text):
        w.client["state"] = "FATAL_ERROR"
        tp = _tp(w)
    elif (a := re.match(r"^\s*transitionToAbortableError\(\s*(?:new\s+)?(\w*)(?:\(\))?\s*\)\s*$", text)):
        # the test's direct call: no epoch bump is asked for (that is maybeTransitionToErrorState's);
        # an abort in progress is left alone
        if _state(w) != "ABORTING_TRANSACTION":
            w.client["state"] = "ABORTABLE_ERROR"
            w.client["last_error"] = a.group(1) or "KafkaException"
        tp = _tp(w)
    elif re.match(r"^\s*maybeResolveSequences\(\s*\)\s*$", text):
        for name in list(w.client_partitions):
            _resolved_reaction(w, _resolve(w, name))
        tp = _tp(w)
    elif re.match(r"^\s*bumpIdempotentEpochAndResetIdIfNeeded\(\s*\)\s*$", text):
        if _transactional(w):
            raise NotExpressible("bumpIdempotentEpochAndResetIdIfNeeded on a transactional producer does nothing")
        rewrite = w.client.pop("_rewrite", set())
        if rewrite:
            _bump(w, rewrite)
        tp = _tp(w)
    else:
        raise NotExpressible(f"call not understood: {text!r}")
    w.client["_tp"] = tp
    out = _view(w, tp)
    out["producer_id"] = _pair(w)[0]
    return out


def _aborted(w: World) -> None:
    """EndTxn(ABORT) answered NONE: READY; with an epoch bump pending (a coordinator that supports
    it) InitProducerId bumps the epoch and every partition restarts at 0; otherwise only the
    partitions whose batch failed with UNKNOWN_PRODUCER_ID restart at 0."""
    resets: set[str] = set()
    if w.client.pop("_epoch_bump_required", False):
        w.client["epoch"] = integer(w.client.get("epoch", 0), "epoch") + 1
        resets = set(w.client_partitions)
    for tp in resets:
        e = w.client_partitions[tp]
        w.client_partitions[tp] = e._replace(epoch=w.client["epoch"], next_sequence=0, last_acked_sequence=-1,
                                             in_flight=())
    w.client["state"] = "READY"


def event(w: World, inp: dict[str, Any]) -> Observed:
    if steps_no_idempotence.applies(w):
        return steps_no_idempotence.event(w, inp)
    text = str(inp.get("event", ""))
    out: Observed = {}
    for clause in [c for c in re.split(r";\s*", text) if c.strip()]:
        out.update(_clause(w, clause, inp))
    view = _view(w, _tp(w))
    view.update(out)
    return view


def txn_response(w: World, inp: dict[str, Any]) -> Observed:
    """The transactional producer reading a coordinator's answer (``<Api>Response`` with ``error``;
    InitProducerId's also ``producer_id`` / ``producer_epoch``; AddPartitionsToTxn's also ``errors``, partition ->
    error; FindCoordinator's ``coordinator_type``, TRANSACTION or GROUP): ``TransactionManager``'s handler."""
    kind = str(inp.get("event", ""))
    m = re.match(r"^(\w+?)Response\b", kind)
    if not m or m.group(1) not in api.TXN_RESPONSE_APIS:
        raise NotExpressible(f"{kind!r}: not an answer of the transaction coordinator")
    name = m.group(1)
    state = _state(w)
    if name == "FindCoordinator":
        # the handler reads the error alike for both lookups (the group's is sendOffsetsToTransaction's)
        ctype = str(inp.get("coordinator_type", "TRANSACTION")).upper()
        if ctype not in ("TRANSACTION", "GROUP"):
            raise NotExpressible(f"FindCoordinator for a {ctype!r} coordinator: the producer looks up TRANSACTION or GROUP")
    if name == "InitProducerId" and state == "FATAL_ERROR" and not inp.get("disconnected"):
        # Sender.runOnce sends nothing in a fatal error (it returns before bumpIdempotentEpochAndResetIdIfNeeded), so
        # the answer a test prepares is never read
        for key in ("error", "producer_id", "producer_epoch"):
            inp.get(key)
        out = _view(w, _tp(w))
        out.update({"ignored": True, "result": "pending", "last_error": w.client.get("last_error"),
                    "producer_id": integer(w.client.get("producer_id", 0), "producer_id")})
        return out
    if name == "InitProducerId" and _closing_idempotent(w) and _pair(w)[0] < 0 and _producer_id_fetch(w) != "send":
        # the closing Sender never sent it (KAFKA-8061's bug, or a forced close's wait): the answer is not read
        for key in ("error", "producer_id", "producer_epoch"):
            inp.get(key)
        out = _view(w, _tp(w))
        out.update({"ignored": True, "result": "pending", "producer_id": _pair(w)[0]})
        return out
    unauthorized: tuple[str, ...] = ()
    dropped: frozenset[str] | None = None
    if inp.get("disconnected"):
        # no answer: the connection was lost (before the send too, with before_send: the same lookup and retry)
        inp.get("before_send")
        r = api.on_disconnect(name)
    else:
        can_bump = bool(w.client.get("coordinator_supports_epoch_bump", True))
        errors = inp.get("errors") if name == "AddPartitionsToTxn" else None
        if isinstance(errors, dict) and errors:
            a = api.on_add_partitions_errors({str(tp): error_code(str(e)) for tp, e in errors.items()},
                                             can_bump_epoch=can_bump,
                                             pid_mapping_fatal=w.protocol.eos.client_pid_mapping_fatal)
            r, unauthorized = a.reaction, a.unauthorized_topics
            dropped = frozenset(str(tp) for tp in errors) if a.dropped else None
        else:
            err = error_code(str(inp.get("error", "NONE")))
            # KAFKA-18019 (4.0.0): kafka.eos's client_pid_mapping_fatal, of the 4.0+ profile only
            r = api.on_txn_response(name, err, can_bump_epoch=can_bump,
                                    pid_mapping_fatal=w.protocol.eos.client_pid_mapping_fatal,
                                    aborting=state == "ABORTING_TRANSACTION",
                                    abort_abortable_fatal=w.protocol.eos.client_abort_abortable_fatal,
                                    auth_init_abortable=w.protocol.client_auth_init_abortable)
            if name == "AddPartitionsToTxn" and err == Errors.TOPIC_AUTHORIZATION_FAILED:
                # every partition of the request refused: the new ones were sent with the pending ones
                sent = frozenset(w.client.get("_new", ())) | frozenset(w.client.get("_pending", ()))
                dropped = sent
                unauthorized = tuple(sorted({api.topic_of(tp) for tp in sent}))
    result = "pending"
    if r.action == "done":
        result = "succeeded"
        if name == "InitProducerId":
            w.client["producer_id"] = integer(inp.get("producer_id", w.client.get("producer_id", 0)), "producer_id")
            w.client["epoch"] = integer(inp.get("producer_epoch", w.client.get("epoch", 0)), "producer_epoch")
            # a transactional producer's InitProducerId with a producer id is an epoch bump: resetSequenceNumbers;
            # an idempotent producer's new id leaves each partition to maybeUpdateProducerIdAndEpoch at its drain
            if _transactional(w):
                for tp in w.client_partitions:
                    w.client_partitions[tp] = api.PartitionEntry(w.client["producer_id"], w.client["epoch"])
            w.client["state"] = "READY"
            # InitProducerIdHandler leaves epochBumpRequired (2.5.0 .. 4.2.0-rc1: only completeTransaction and the
            # idempotent bump clear it): one a late failure asked for while INITIALIZING (before KAFKA-14884) stays
        elif name == "EndTxn" and w.client.pop("_end_txn_tv2", w.client.get("transaction_v2")) and client_tv2(w.protocol):
            # KAFKA-14562 [2/3] (4.0.0): EndTxn v5+ answers the producer id and epoch the coordinator bumped to; the
            # TV2 client continues with them and its partitions restart at sequence 0 (no InitProducerId)
            pid = integer(inp.get("producer_id", w.client.get("producer_id", 0)), "producer_id")
            epoch = integer(inp.get("producer_epoch", w.client.get("epoch", 0)), "producer_epoch")
            w.client["producer_id"], w.client["epoch"] = pid, epoch
            for tp in w.client_partitions:
                w.client_partitions[tp] = api.PartitionEntry(pid, epoch)
            w.client.pop("_epoch_bump_required", None)
            w.client["state"] = "READY"
        elif name == "EndTxn":
            # completeTransaction: INITIALIZING while an epoch bump is pending, READY otherwise
            w.client["state"] = "INITIALIZING" if w.client.pop("_epoch_bump_required", False) else "READY"
        w.client["last_error"] = None
    elif r.action == "abortable":
        result = "failed"
        if r.bump_epoch:
            w.client["_epoch_bump_required"] = True
        if state != "ABORTING_TRANSACTION":  # transitionToAbortableError skips an abort in progress (and its error)
            w.client["state"] = "ABORTABLE_ERROR"
            w.client["last_error"] = r.exception
    elif r.action == "fatal":
        result = "failed"
        w.client["state"] = "FATAL_ERROR"
        w.client["last_error"] = r.exception
    if name == "AddOffsetsToTxn" and r.action in ("abortable", "fatal") and w.client.get("_offsets_result") == "pending":
        # the handler's result is sendOffsetsToTransaction's
        w.client["_offsets_result"], w.client["_offsets_error"] = "failed", r.exception
    # the transaction's partitions (read by the TransactionManager calls, steps_txn_calls)
    if dropped is not None:
        if w.client.get("_txn_in_flight") == name:
            w.client.pop("_txn_in_flight")
        c = api.partitions_not_added(api.TxnClient("IN_TRANSACTION", new=frozenset(w.client.get("_new", ())),
                                                   pending=frozenset(w.client.get("_pending", ()))), dropped)
        w.client.update({"_new": c.new, "_pending": c.pending, "_add_partitions_queued": False})
    else:
        answered(w, name, r.action == "done", retry=r.action in ("retry", "lookup-retry"))
    if r.action == "fatal" or (name in ("InitProducerId", "EndTxn") and r.action in ("done", "abortable") and not (
            name == "EndTxn" and r.action == "done" and w.client.get("state") == "INITIALIZING")):
        # the handler completes (or fails) the call's result: a retry after a timeout gets it back; a fatal error
        # fails the kept result whatever the request (transitionToFatalError); with an epoch bump queued after the
        # EndTxn, the call's result is the InitProducerId's (beginCompletingTransaction returns
        # initializeTransactions' result, 2.5.0 .. 4.2.0-rc1)
        call_completed(w, "" if r.action == "done" else r.exception)
    out = _view(w, _tp(w))
    out.update({"result": result, "retry": r.action in ("retry", "lookup-retry"),
                "lookup_coordinator": r.action == "lookup-retry", "last_error": w.client.get("last_error"),
                "epoch_bump_required": bool(w.client.get("_epoch_bump_required", False)),
                "producer_id": integer(w.client.get("producer_id", 0), "producer_id")})
    if name == "AddPartitionsToTxn":
        out["unauthorized_topics"] = list(unauthorized)
    if r.action in ("retry", "lookup-retry"):
        # the re-enqueued handler's back-off, which the Sender sleeps before sending it again (``retry_backoff``)
        backoff = api.retry_backoff_ms(name, error_code(str(inp.get("error", "NONE"))) if not inp.get("disconnected") else -1,
                                       partitions_in_transaction=bool(w.client.get("_added")),
                                       retry_backoff=integer(w.client.get("retry_backoff_ms", api.DEFAULT_RETRY_BACKOFF_MS),
                                                             "retry_backoff_ms"))
        out["retry_backoff_ms"] = backoff
        out["next_send_delay_ms"] = api.send_delay_ms(is_retry=True, handler_backoff=backoff)
    return out


def send_offsets(w: World, inp: dict[str, Any]) -> Observed:
    add = str(inp.get("AddOffsetsToTxn", "NONE"))
    errors = inp.get("TxnOffsetCommit_response", {}) or {}
    if add != "NONE":
        errors = {"*": add}
    reactions = [api.on_txn_offset_commit_error(error_code(str(e)), any_retriable=w.protocol.txn_offset_commit_any_retriable,
                                                handler=w.protocol.txn_offset_commit_handler)
                 for e in errors.values()]
    worst = next((r for r in reactions if r.action in ("fatal",)), None) or \
        next((r for r in reactions if r.action == "abortable"), None)
    if worst is not None:
        w.client["state"] = "FATAL_ERROR" if worst.action == "fatal" else "ABORTABLE_ERROR"
    out = _view(w, _tp(w))
    out.update({"last_error": worst.exception if worst else None,
                "send_offsets_result": "failed" if worst else ("retry" if any(r.action == "retry" for r in reactions)
                                                               else "succeeded")})
    return out


def consumer_offset_fetch(w: World, inp: dict[str, Any]) -> Observed:
    """The consumer reading an OffsetFetch answer for one partition (``initWithCommittedOffsetsIfNeeded``)."""
    text = " ".join(str(inp.get(k, "")) for k in ("event", "call", "api", "response"))
    err = _error_in(text, inp)
    offset = integer(inp.get("offset", inp.get("committed_offset", _number(text, "offset", -1))), "offset")
    tp = str(inp.get("partition", "tp0"))
    r = api.consumer_offset_fetch_reaction(err, offset)
    positions = w.client.setdefault("_positions", {})
    # no committed offset (-1) sets no position: the partition stays initializing for the reset policy
    if not r.retry and not r.failed and r.position >= 0:
        positions[tp] = r.position
    initializing = tp not in positions
    return {"retry": r.retry, "retriable": r.retry, "is_retriable": r.retry, "failed": r.failed,
            "position": positions.get(tp), "initializing": initializing,
            "initializing_partitions": [tp] if initializing else [], "has_all_fetch_positions": not initializing}
