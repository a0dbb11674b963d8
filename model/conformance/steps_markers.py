"""Steps on the transaction coordinator's marker sender: a WriteTxnMarkers answer or disconnect reaching
``TransactionMarkerRequestCompletionHandler`` for one marker entry (one transactional id), and what the coordinator
then does (``model.api.coordinator.handle_marker_response`` / ``handle_marker_disconnect``).

Input: ``transactional_id``; ``coordinator_epoch``, the entry's coordinator epoch (``TxnMarkerEntry.coordinatorEpoch``)
compared with the one the world's cache holds (``initial_state.coordinator.coordinator_epoch``; unset: the entry's);
an answer's ``partition`` and ``error`` (``completion_append_result``: the CompleteCommit/CompleteAbort append's), or
``errors_by_producer_id`` (the response's map: producer id -> {partition: error}) with the entry's ``producer_id``
(unset: the metadata's); a disconnect's ``partitions``, the entry's."""

from __future__ import annotations

from typing import Any

from ..api import coordinator as api
from ..coordinator.txn_log import NO_METADATA
from ..transactions.codes import TxnState
from .values import NotExpressible, error_code, integer
from .world import DEFAULT_TID, World

Observed = dict[str, Any]



def _tid(inp: dict[str, Any]) -> str:
    return str(inp.get("transactional_id", DEFAULT_TID) or DEFAULT_TID)


def _entry_epoch(inp: dict[str, Any]) -> int | None:
    return integer(inp["coordinator_epoch"], "coordinator_epoch") if "coordinator_epoch" in inp else None


def _thrown(w: World, tid: str) -> Observed:
    """onComplete threw IllegalStateException: for the entry nothing was re-enqueued, removed or completed, and the
    metadata is as it was (the one partition's answer is read before anything changes)."""
    meta = w.txns.get(tid, NO_METADATA)
    return {"error": "EXCEPTION", "exception": "IllegalStateException", "retry": False, "abandon": False,
            "abandoned": False, "completed": False, "requeued_partitions": [],
            "partitions_remaining": sorted(w.partitions.name(p) for p in meta.partitions), "state_after": w.meta_view(meta)}


def _answer(w: World, tid: str, inp: dict[str, Any]) -> tuple[int, int | None]:
    """The partition and its error code (None: the response has no error map for the entry's producer id)."""
    if "errors_by_producer_id" not in inp:
        return w.partitions.id(str(inp.get("partition", ""))), error_code(str(inp.get("error", "NONE")))
    by_pid = inp["errors_by_producer_id"]
    if not isinstance(by_pid, dict):
        raise NotExpressible(f"errors_by_producer_id {by_pid!r}: give producer id -> {{partition: error}}")
    pid = integer(inp.get("producer_id", w.txns.get(tid, NO_METADATA).producer_id), "producer_id")
    errors = by_pid.get(str(pid))
    if errors is None:
        return -1, None
    if not isinstance(errors, dict) or len(errors) != 1:
        raise NotExpressible(f"errors_by_producer_id[{pid}] {errors!r}: the step answers one partition")
    ((part, err),) = errors.items()
    return w.partitions.id(str(part)), error_code(str(err))


def marker_response(w: World, inp: dict[str, Any]) -> Observed:
    """A partition's WriteTxnMarkers answer reaching the coordinator."""
    tid = _tid(inp)
    part, err = _answer(w, tid, inp)
    completion = error_code(str(inp.get("completion_append_result", "NONE")))
    try:
        ans, st = api.handle_marker_response(w.coordinator(tid), part, err, w.protocol, completion_error=completion,
                                             marker_coordinator_epoch=_entry_epoch(inp),
                                             coordinator_epoch=w.coordinator_epoch)
    except ValueError:
        return _thrown(w, tid)
    before = w.txns.get(tid, NO_METADATA)
    w.set_coordinator(tid, st)
    waiting = not st.metadata.partitions and st.metadata.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT)
    return {"exception": None, "retry": ans.retry, "abandon": ans.abandon, "abandoned": ans.abandon,
            "completed": ans.completed,
            "completion_append_retried": waiting and api.completion_outcome(completion) == api.COMPLETION_RETRY,
            "action": "retry" if ans.retry else "abandon" if ans.abandon else "done",
            "requeued_partitions": [w.partitions.name(part)] if ans.retry else [],
            "partitions_remaining": sorted(w.partitions.name(p) for p in st.metadata.partitions),
            "state_after": w.meta_view(st.metadata),
            "txn_log_append": w.meta_view(st.metadata) if ans.completed and st.metadata != before else None}


def marker_disconnect(w: World, inp: dict[str, Any]) -> Observed:
    """The broker a WriteTxnMarkers request went to disconnected before answering."""
    tid = _tid(inp)
    parts = inp.get("partitions")
    if not isinstance(parts, list) or not parts:
        raise NotExpressible(f"partitions {parts!r}: give the marker entry's partitions")
    try:
        ans = api.handle_marker_disconnect(w.coordinator(tid), marker_coordinator_epoch=_entry_epoch(inp),
                                           coordinator_epoch=w.coordinator_epoch)
    except ValueError:
        return _thrown(w, tid)
    meta = w.txns.get(tid, NO_METADATA)
    return {"exception": None, "retry": ans.retry, "abandon": ans.abandon, "abandoned": ans.abandon,
            "completed": False, "action": "retry" if ans.retry else "abandon",
            "requeued_partitions": sorted(str(p) for p in parts) if ans.retry else [],
            "partitions_remaining": sorted(w.partitions.name(p) for p in meta.partitions),
            "state_after": w.meta_view(meta)}
