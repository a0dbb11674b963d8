"""Steps on the transaction coordinator: InitProducerId, EndTxn, AddPartitionsToTxn, the
TransactionMetadata transitions, the timeout abort, transactional-id expiry, producer-id blocks."""

from __future__ import annotations

import re
from typing import Any

from ..api import coordinator as api
from ..api import kafka_apis
from ..api import txn_partition as tp
from ..coordinator.producer_ids import (
    ProducerIdsExhausted,
    after_failed_block_request,
    block_accepted,
    generate_producer_id,
    grant_block,
)
from ..coordinator.txn_log import NO_METADATA
from ..coordinator.txn_partitions import tombstone_partitions
from ..errors import Errors
from ..transactions.codes import NO_PENDING, TxnResult, TxnState
from ..transactions.markers import complete_if_done
from ..transactions.metadata import to_log_record
from .values import (
    ANSWERED_BEFORE,
    NotExpressible,
    acls_denied,
    error_code,
    error_name,
    integer,
    state_id,
    state_name,
)
from .world import DEFAULT_TID, World

Observed = dict[str, Any]


def _tid(inp: dict[str, Any]) -> str:
    return str(inp.get("transactional_id", DEFAULT_TID) or DEFAULT_TID)


def _append_error(inp: dict[str, Any], key: str = "txn_log_append_result", real_append: bool = False) -> int:
    """The append's answer; through TransactionStateManager (not a mock) the raw error is mapped."""
    raw = error_code(str(inp.get(key, inp.get("append_result", "NONE"))))
    return api.append_error_answer(raw) if real_append else raw


def _response(resp: api.Response) -> Observed:
    return {"error": error_name(resp.error), "error_code": resp.error, "producer_id": resp.producer_id,
            "producer_epoch": resp.epoch}


def _precondition(w: World, tid: str, inp: dict[str, Any]) -> None:
    """A step's setup: ``metadata_epoch`` (a separate test with that epoch) or a free-text
    precondition of the form 'metadata now <State>, epoch N, tv N'."""
    meta = w.txns.get(tid, NO_METADATA)
    if "metadata_epoch" in inp and meta.exists:
        meta = meta._replace(epoch=integer(inp["metadata_epoch"], "metadata_epoch"))
    text = inp.get("precondition")
    if isinstance(text, str):
        m = re.search(r"metadata now (\w+)", text)
        if not m:
            raise NotExpressible(f"free-text precondition not understood: {text!r}")
        target = state_id(m.group(1))
        if meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT) and \
                target in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT):
            # the markers were written: the model's completion of the transaction
            meta, _ = complete_if_done(meta._replace(partitions=()), tv2_last_epoch=w.protocol.tv2_last_epoch)
        meta = meta._replace(state=target)
        ep = re.search(r"epoch (\d+)", text)
        if ep:
            meta = meta._replace(epoch=int(ep.group(1)))
        tv = re.search(r"\btv (\d)", text)
        if tv:
            meta = meta._replace(tv=int(tv.group(1)))
    w.txns[tid] = meta


#: an append answer no rule produces: a request that answers it tried to write a record
_PROBE = int(Errors.CORRUPT_MESSAGE)


def _attempted(call: Any) -> Any:
    """The record a request tries to write to ``__transaction_state`` (None: no write): the rules
    are pure, so the request is run once more with a failing append (did it try?) and once with a
    successful one (what it wrote)."""
    failed = call(_PROBE)
    if failed[0].error != _PROBE:
        return None
    return call(int(Errors.NONE))[1].metadata


def init_producer_id(w: World, inp: dict[str, Any]) -> Observed:
    tid_raw = inp.get("transactional_id", DEFAULT_TID)
    tid = DEFAULT_TID if tid_raw is None else str(tid_raw)
    enable_2pc, keep_prepared_txn = _flag(inp, "enable_2pc"), _flag(inp, "keep_prepared_txn")
    # a test of TransactionCoordinator.handleInitProducerId passes the flags with no request version: they come with v6
    default_version = api.TWO_PC_SINCE if enable_2pc or keep_prepared_txn else 5
    req = api.InitProducerIdRequest(
        None if tid_raw is None else str(tid_raw), integer(inp.get("producer_id", -1), "producer_id"),
        integer(inp.get("producer_epoch", -1), "producer_epoch"),
        integer(inp.get("txn_timeout_ms", 60000), "txn_timeout_ms"),
        integer(inp.get("request_version", default_version), "request_version"), enable_2pc, keep_prepared_txn)
    cs = w.coordinator(tid)
    denied = _denied(inp)
    resp, st = api.handle_init_producer_id(cs, req, w.protocol, append_error=_append_error(inp),
                                           two_phase_commit_enable=w.two_phase_commit_enable, denied=denied)
    record = _attempted(lambda e: api.handle_init_producer_id(cs, req, w.protocol, append_error=e,
                                                              two_phase_commit_enable=w.two_phase_commit_enable,
                                                              denied=denied))
    if "metadata_at_abort" in inp:
        resp, st, record = _abort_sees(w, cs, req, inp["metadata_at_abort"], record)
    w.set_coordinator(tid, st)
    if resp.error == Errors.NONE and tid_raw:
        w.txn_timeout_ms[tid] = api.resolved_txn_timeout(req, w.protocol)
    out = _response(resp)
    if tid_raw is not None:
        out["state_after"] = w.meta_view(st.metadata)
        out["txn_log_append"] = None if record is None else w.meta_view(record)
    return out


def _abort_sees(w: World, cs: api.CoordinatorState, req: api.InitProducerIdRequest, changes: Any,
                record: Any) -> tuple[api.Response, api.CoordinatorState, Any]:
    """InitProducerId fenced an ongoing transaction, and the abort it then sends looks the
    transactional id up again and finds ``changes`` applied to the metadata (a mock answering the
    second lookup with other metadata: another request changed it in between)."""
    if not isinstance(changes, dict):
        raise NotExpressible(f"metadata_at_abort {changes!r}: give the changed metadata fields as an object")
    meta = cs.metadata
    if record is None or not meta.exists or meta.state != TxnState.ONGOING or meta.pending_state != NO_PENDING:
        raise NotExpressible("metadata_at_abort: this InitProducerId does not fence an ongoing transaction")
    fence = api.prepare_fence_producer_epoch(meta, w.protocol)
    seen = cs._replace(metadata=w.meta_from({**w.meta_view(meta), **changes}))
    resp, st = api.abort_after_fence(seen, fence.metadata.epoch, w.protocol)
    err = api.down_convert_fenced(resp.error, "InitProducerId", req.version, w.protocol)
    written = st.metadata if st.metadata != seen.metadata else None
    return (resp if err == resp.error else resp._replace(error=err)), st, written


def end_txn(w: World, inp: dict[str, Any]) -> Observed:
    tid = _tid(inp)
    _precondition(w, tid, inp)
    # the request keeps a null or empty transactional id (INVALID_REQUEST); only the lookup defaults
    tid_raw = inp.get("transactional_id", DEFAULT_TID)
    req = api.EndTxnRequest(None if tid_raw is None else str(tid_raw), integer(inp.get("producer_id", 0), "producer_id"),
                            integer(inp.get("producer_epoch", 0), "producer_epoch"),
                            int(TxnResult[str(inp.get("result", "COMMIT"))]),
                            integer(inp.get("client_transaction_version", 0), "client_transaction_version"),
                            integer(inp.get("request_version", 5), "request_version"))
    cs = w.coordinator(tid)
    resp, st = api.handle_end_txn(cs, req, w.protocol, append_error=_append_error(inp))
    record = _attempted(lambda e: api.handle_end_txn(cs, req, w.protocol, append_error=e))
    w.set_coordinator(tid, st)
    out = _response(resp)
    out["state_after"] = w.meta_view(st.metadata)
    out["txn_log_append"] = None if record is None else w.meta_view(record)
    out["action"] = "append" if record is not None else "no append"
    return out


def _batched_add_partitions(w: World, inp: dict[str, Any]) -> Observed:
    """A broker's AddPartitionsToTxn v4 with several transactions (KIP-890 part 1, KAFKA-14402, 3.6.0;
    KafkaApis.handleAddPartitionsToTxnRequest read at 3.6.0 and 4.1.0): each transaction on its own, a verifyOnly one
    to handleVerifyPartitionsInTransaction and the others to handleAddPartitionsToTransaction, each after its own
    metadata-cache check; the response, sent once every transaction answered, holds each one's result by
    transactional id."""
    txns = inp["transactions"]
    if not isinstance(txns, list) or not all(isinstance(t, dict) and t.get("transactional_id") for t in txns):
        raise NotExpressible("AddPartitionsToTxn.transactions: a list of transactions, each with its transactional_id")
    if len({str(t["transactional_id"]) for t in txns}) != len(txns):
        raise NotExpressible("AddPartitionsToTxn.transactions: a transactional id twice in one request")
    version = inp.get("request_version", 4)
    results = {str(t["transactional_id"]): add_partitions(w, {"request_version": version, **t}) for t in txns}
    return {"errors": {tid: {tp: r["error"] for tp, r in out["per_partition"].items()} for tid, out in results.items()},
            "per_transaction": results}


def add_partitions(w: World, inp: dict[str, Any]) -> Observed:
    denied = acls_denied(inp)
    refused = None if denied is None else _authorization_refusal(w, inp, denied)
    if refused is not None:
        return refused
    if "transactions" in inp:
        return _batched_add_partitions(w, inp)
    tid = _tid(inp)
    if w.metadata_cache is not None:
        # KafkaApis first: a partition its metadata cache does not know stops the request before the coordinator
        refused = kafka_apis.add_partitions_errors([str(p) for p in inp.get("partitions", [])],
                                                   kafka_apis.known_in(w.metadata_cache))
        if refused is not None:
            return {"per_partition": {tp: {"error": error_name(e), "error_code": e} for tp, e in refused.items()},
                    "coordinator_called": False, "txn_log_append": None, ANSWERED_BEFORE: "KafkaApis' metadata check",
                    "state_after": w.meta_view(w.txns.get(tid, NO_METADATA))}
    _precondition(w, tid, inp)
    parts = tuple(sorted(w.partitions.id(p) for p in inp.get("partitions", [])))
    tid_raw = inp.get("transactional_id", DEFAULT_TID)
    pid, epoch = integer(inp.get("producer_id", 0), "producer_id"), integer(inp.get("producer_epoch", 0), "producer_epoch")
    if inp.get("verify_only") or inp.get("verifyOnly"):
        answers = api.verify_partitions(w.coordinator(tid), tid_raw, pid, epoch, parts, w.protocol)
        errs = {w.partitions.name(p): {"error": error_name(e), "error_code": e} for p, e in answers}
        common = {e for _, e in answers}
        out: Observed = {"per_partition": errs, "txn_log_append": None, "state_after": w.meta_view(w.txns.get(tid, NO_METADATA))}
        if len(common) == 1:
            out["error"] = error_name(common.pop())
        return out
    cs = w.coordinator(tid)
    kind = "AddOffsetsToTxn" if str(inp.get("api", "")).startswith("AddOffsetsToTxn") else "AddPartitionsToTxn"
    version = integer(inp.get("request_version", 5 if kind == "AddPartitionsToTxn" else 4), "request_version")
    resp, st, _ = api.handle_add_partitions(cs, pid, epoch, parts, w.protocol, append_error=_append_error(inp),
                                            transactional_id=tid_raw, version=version, api=kind)
    record = _attempted(lambda e: api.handle_add_partitions(cs, pid, epoch, parts, w.protocol, append_error=e,
                                                            transactional_id=tid_raw))
    w.set_coordinator(tid, st)
    out = {"error": error_name(resp.error), "error_code": resp.error, "state_after": w.meta_view(st.metadata),
           "per_partition": {w.partitions.name(p): {"error": error_name(resp.error), "error_code": resp.error}
                             for p in parts}}
    out["txn_log_append"] = None if record is None else w.meta_view(record)
    return out


def _authorization_refusal(w: World, inp: dict[str, Any], denied: frozenset[tuple[str, str, str]]) -> Observed | None:
    """AddPartitionsToTxn behind KafkaApis' authorization (``acls_denied``): a client's v0-3 (WRITE on the
    transactional id, then on each topic) or a broker's verify-only v4+ (CLUSTER_ACTION); a refused request is
    answered without the coordinator (None: it goes on as without an authorizer)."""
    if "transactions" in inp or not str(inp.get("api", "")).startswith("AddPartitionsToTxn"):
        raise NotExpressible("acls_denied on AddOffsetsToTxn or a batch of transactions: the model's KafkaApis "
                             "authorizes one transaction's AddPartitionsToTxn")
    tid = _tid(inp)
    verify_only = bool(inp.get("verify_only") or inp.get("verifyOnly"))
    version = integer(inp.get("request_version", 4 if verify_only else 3), "request_version")
    if version >= 4 and not verify_only:
        raise NotExpressible("a broker's AddPartitionsToTxn v4+ that is not verify-only: the model's coordinator "
                             "adds partitions for a client's request")
    parts = [str(p) for p in inp.get("partitions", [])]
    known = kafka_apis.known_in(w.metadata_cache) if w.metadata_cache is not None else (lambda _tp: True)
    refused = kafka_apis.add_partitions_authorization(version, str(inp.get("transactional_id", DEFAULT_TID)), parts,
                                                      denied, known)
    if refused is None:
        return None
    top, per_partition = refused
    out: Observed = {"per_partition": {tp: {"error": error_name(e), "error_code": e} for tp, e in per_partition.items()},
                     "coordinator_called": False, "txn_log_append": None,
                     ANSWERED_BEFORE: "KafkaApis' authorization",
                     "state_after": w.meta_view(w.txns.get(tid, NO_METADATA))}
    if version >= 4:
        out["error"], out["error_code"] = error_name(top), top
    return out


def _transition_out(w: World, tid: str, res: api.TransitionResult) -> Observed:
    if res.exception:
        return {"error": "EXCEPTION", "exception": res.exception}
    if res.error != Errors.NONE:
        return {"error": error_name(res.error), "error_code": res.error}
    w.txns[tid] = res.metadata
    return {"result": "TRANSITION", "error": "NONE", "error_code": 0, "after_complete": w.meta_view(res.metadata),
            "state_after": w.meta_view(res.metadata)}


def prepare_increment_producer_epoch(w: World, inp: dict[str, Any]) -> Observed:
    tid = _tid(inp)
    exp = inp.get("expected_producer_epoch")
    res = api.prepare_increment_producer_epoch(w.txns.get(tid, NO_METADATA),
                                               None if exp is None else integer(exp, "expected_producer_epoch"),
                                               w.protocol)
    return _transition_out(w, tid, res)


def prepare_abort_or_commit(w: World, inp: dict[str, Any]) -> Observed:
    tid = _tid(inp)
    res = api.prepare_abort_or_commit_checked(w.txns.get(tid, NO_METADATA),
                                              state_id(str(inp.get("new_state", "PrepareCommit"))),
                                              integer(inp.get("client_transaction_version", 0), "tv"),
                                              integer(inp.get("next_producer_id", -1), "next_producer_id"), w.protocol,
                                              no_partition_added=_flag(inp, "no_partition_added"))
    if res.exception:
        return {"error": "EXCEPTION", "exception": res.exception}
    return _transition_out(w, tid, api.TransitionResult(int(Errors.NONE), res.metadata))


def prepare_add_partitions(w: World, inp: dict[str, Any]) -> Observed:
    tid = _tid(inp)
    parts = tuple(sorted(w.partitions.id(str(p)) for p in inp.get("partitions", [])))
    res = api.prepare_add_partitions(w.txns.get(tid, NO_METADATA), parts)
    if res.exception:
        return {"error": "EXCEPTION", "exception": res.exception}
    return _transition_out(w, tid, api.TransitionResult(int(Errors.NONE), res.metadata))


def reset_pending_state(w: World, inp: dict[str, Any]) -> Observed:
    """The unit test clears ``pendingState`` by hand (to let an abort follow a fence)."""
    tid = _tid(inp)
    w.txns[tid] = w.txns.get(tid, NO_METADATA)._replace(pending_state=NO_PENDING)
    return {"state_after": w.meta_view(w.txns[tid])}


def prepare_complete(w: World, inp: dict[str, Any]) -> Observed:
    tid = _tid(inp)
    done, wrote = complete_if_done(w.txns.get(tid, NO_METADATA)._replace(partitions=()),
                                   tv2_last_epoch=w.protocol.tv2_last_epoch)
    if not wrote:
        return {"error": "EXCEPTION", "exception": "IllegalStateException"}
    return _transition_out(w, tid, api.TransitionResult(int(Errors.NONE), done))


def prepare_fence_producer_epoch(w: World, inp: dict[str, Any]) -> Observed:
    tid = _tid(inp)
    meta = w.txns.get(tid, NO_METADATA)
    res = api.prepare_fence_producer_epoch(meta, w.protocol)
    if res.exception:
        return {"error": "EXCEPTION", "exception": res.exception}
    # PrepareEpochFence is never completed: the metadata keeps its epoch, only the pending state is set
    # (endTransaction installs the fenced epoch); the transit is what the test reads
    w.txns[tid] = meta._replace(pending_state=res.metadata.pending_state)
    transit = w.meta_view(res.metadata)
    return {"result": "TRANSITION", "error": "NONE", "transit": transit, "after_complete": transit,
            "state_after": w.meta_view(w.txns[tid]), "producer_epoch": res.metadata.epoch,
            "last_producer_epoch": res.metadata.last_epoch, "pending_state": transit["pending_state"]}


def prepare_producer_id_rotation(w: World, inp: dict[str, Any]) -> Observed:
    tid = _tid(inp)
    res = api.prepare_producer_id_rotation(w.txns.get(tid, NO_METADATA),
                                           integer(inp.get("new_producer_id", w.next_pid), "new_producer_id"),
                                           bool(inp.get("record_last_epoch", False)))
    if res.exception:
        return {"error": "EXCEPTION", "exception": res.exception}
    return _transition_out(w, tid, api.TransitionResult(int(Errors.NONE), res.metadata))


def state_ids(w: World, inp: dict[str, Any]) -> Observed:
    # ``mapping``: TransactionState.fromId; ``states``: TransactionState.AllStates (every state, once)
    return {"mapping": {str(int(s)): state_name(s) for s in TxnState}, "states": sorted(state_name(s) for s in TxnState)}


def timeout_abort(w: World, inp: dict[str, Any]) -> Observed:
    tid = _tid(inp)
    before = w.txns.get(tid, NO_METADATA)
    listed = inp.get("timed_out")
    if isinstance(listed, dict) and "producer_id" in listed and \
            integer(listed["producer_id"], "timed_out.producer_id") != before.producer_id:
        # Kafka skips a listed transaction whose producer id changed since the listing
        raise NotExpressible("timed_out: a listed transaction of another producer id (the model's timeout abort "
                             "reads the current metadata)")
    cs = w.coordinator(tid)
    if not api.may_time_out(w.txn_timeout_ms.get(tid, 0), w.protocol):
        # a 2PC transaction (timeout Int.MaxValue) is never listed by timedOutTransactions (KIP-939, 4.1.0+)
        return {"action": "skipped (no append)", "txn_log_append": None, "state_after": w.meta_view(before),
                "aborted": False}
    wrote, st = api.abort_timed_out(cs, w.protocol, append_error=_append_error(inp))
    # the record the abort tried to write, whether or not the append succeeded
    record = api.abort_timed_out(cs, w.protocol)[1].metadata if wrote else None
    w.set_coordinator(tid, st)
    return {"action": "aborted (PrepareAbort appended)" if wrote else "skipped (no append)",
            "txn_log_append": None if record is None else w.meta_view(record), "state_after": w.meta_view(st.metadata),
            "aborted": wrote and st.metadata != before}


def expire_transactional_ids(w: World, inp: dict[str, Any]) -> Observed:
    """``removeExpiredTransactionalIds``: the state rule is the model's (``api.may_expire``); the
    time condition (lastUpdate <= now - transactional.id.expiration.ms) is data the model abstracts. Over
    several __transaction_state partitions (KAFKA-13099, ``coordinator.txn_partitions``): a partition without a log config is
    skipped, so its ids stay; the others' tombstones are all appended, in as many batches as their bytes take."""
    append_error = _append_error(inp, "tombstone_append_result", real_append=True)
    written, removed = False, {}
    expirable_at: dict[str, int] = {}
    for i, tid in enumerate(list(w.txns)):
        meta = w.txns[tid]
        old_enough = w.last_update.get(tid, w.now) <= w.now - w.tid_expiration_ms
        part = w.txn_log_partition(tid)
        if not old_enough or part in w.txn_log_offline:
            removed[i] = False
            continue
        if api.may_expire(meta):
            expirable_at[tid] = -1 if part is None else part
        wrote, st = api.expire_transactional_id(w.coordinator(tid), append_error=append_error)
        written = written or wrote
        removed[i] = not st.metadata.exists and meta.exists
        w.txns[tid] = st.metadata._replace(pending_state=NO_PENDING) if st.metadata.exists else st.metadata
    first = w.txns.get(next(iter(w.txns))) if w.txns else None
    out: Observed = {"tombstone_written": written, "transactional_id_removed": removed.get(0, False),
                     "pending_state_after": None if first is None or not first.exists
                     or first.pending_state == NO_PENDING else state_name(first.pending_state)}
    out.update({f"txn{i + 1}_removed": r for i, r in removed.items() if i >= 1})
    out["txn2_removed"] = removed.get(1, False)
    tids = list(w.txns)
    out["expired_transactional_ids"] = sorted(tids[i] for i, r in removed.items() if r)
    # listExpirableTransactionalIds after the task: in the cache, old enough, a state that may expire, no pending state
    out["expirable_transactional_ids"] = sorted(
        t for t, m in w.txns.items()
        if m.exists and api.may_expire(m) and w.last_update.get(t, w.now) <= w.now - w.tid_expiration_ms)
    if w.txn_log_partition_count is not None or w.txn_log_partition_of:
        out["tombstone_partitions"] = list(tombstone_partitions(expirable_at, w.txn_log_offline))
    return out


def generate_pid(w: World, inp: dict[str, Any]) -> Observed:
    text = str(inp.get("call", ""))
    m = re.search(r"x\s*(\d+)", text)
    times = int(m.group(1)) if m else 1
    if w.blocks is None:
        raise NotExpressible("producer-id blocks: the vector gives no block state (block_size / zk_block)")
    broker = integer(inp.get("broker", 0), "broker")
    ids: list[int] = []
    for _ in range(times):
        kraft = bool(inp.get("kraft", False)) or bool(re.search(r"RPC|KRaft|Kraft", w.component))
        try:
            gen, w.blocks = generate_producer_id(w.blocks, broker, synchronous=not kraft)
        except ProducerIdsExhausted:
            return {"error": "EXCEPTION", "exception": "KafkaException", "producer_ids": _range(ids)}
        if gen.error != Errors.NONE:
            return {"error": error_name(gen.error), "error_code": gen.error, "producer_ids": _range(ids)}
        ids.append(gen.producer_id)
    out: Observed = {"producer_ids": _range(ids), "error": "NONE"}
    if len(ids) == 1:
        out["producer_id"] = ids[0]
    return out


#: a failed AllocateProducerIds answer without a response body (``ClientResponse.authenticationException``,
#: ``versionMismatch``, ``!hasResponse``: KAFKA-19990's three cases)
_BODYLESS = re.compile(r"(?i)AuthenticationException|UnsupportedVersionException|version mismatch|no response")


def block_event(w: World, inp: dict[str, Any]) -> Observed:
    """The KRaft broker's asynchronous block fetch: 'controller grants ProducerIdsBlock(...)' delivers
    the next block (the model's blocks are granted in request order, so the text's start is checked,
    not used); 'block request fails ...' delivers nothing, and an answer without a body leaves the broker stuck
    before KAFKA-19990 (``after_failed_block_request``), so no grant reaches it ('requested': false); 'retry backoff
    elapses' changes nothing the model keeps (the next ``generateProducerId`` asks again)."""
    if w.blocks is None:
        raise NotExpressible("producer-id blocks: the vector gives no block state (block_size / zk_block)")
    text = str(inp.get("event", ""))
    broker = integer(inp.get("broker", 0), "broker")
    if re.search(r"(?i)block request fails", text):
        w.blocks = after_failed_block_request(w.blocks, broker, bodyless=bool(_BODYLESS.search(text)),
                                              retries_bodyless=w.protocol.pid_block_retry_bodyless)
    if not re.search(r"\bgrants?\b", text):
        return {}
    if broker in w.blocks.stuck:
        # no request is out for the controller to answer: the block never reaches the broker
        return {"block_accepted": False, "requested": False}
    start = re.search(r"start\s*=?\s*(-?\d+)", text)
    length = re.search(r"length\s*=?\s*(-?\d+)", text)
    if start and length and not block_accepted(w.blocks, broker, int(start.group(1)), int(length.group(1))):
        return {"block_accepted": False}
    if start and int(start.group(1)) != w.blocks.next_block_start:
        raise NotExpressible(f"{text!r}: the model grants blocks in request order, the next starts at "
                             f"{w.blocks.next_block_start}")
    try:
        w.blocks = grant_block(w.blocks, broker)
    except ProducerIdsExhausted as exc:
        # the model's controller has no such block to grant (its grant_block refuses one past the
        # largest id); what the broker does with the controller's error is not modelled
        raise NotExpressible(f"{text!r}: {exc}") from None
    return {"block_accepted": True}


def _range(ids: list[int]) -> str:
    if not ids:
        return ""
    if ids == list(range(ids[0], ids[0] + len(ids))):
        return f"{ids[0]}..{ids[-1]}" if len(ids) > 1 else str(ids[0])
    return ",".join(map(str, ids))


def retry_completion(w: World, inp: dict[str, Any]) -> Observed:
    """The retried CompleteCommit/CompleteAbort append (``txnLogAppendRetryQueue``, drained by
    ``generateRequests``) and its answer."""
    tid = _tid(inp)
    before = w.coordinator(tid)
    try:
        outcome = api.completion_outcome(error_code(str(inp.get("completion_append_result", "NONE"))))
    except ValueError:
        return {"error": "EXCEPTION", "exception": "IllegalStateException"}
    wrote, st = api.complete_transaction(before, w.protocol)
    if outcome == api.COMPLETION_DONE:
        w.set_coordinator(tid, st)
    return {"completed": wrote and outcome == api.COMPLETION_DONE, "state_after": w.meta_view(w.txns.get(tid, NO_METADATA))}


def append_transaction_to_log(w: World, inp: dict[str, Any]) -> Observed:
    """``TransactionStateManager.appendTransactionToLog``'s answer to its callback. Without
    ``new_metadata`` only the append error's mapping; with it, the transition (``{"transition":
    "prepareAddPartitions", "partitions": [...]}``) prepared on the cached metadata, appended at
    ``coordinator_epoch`` with ``retry_on_error``, and ``during_append``: what changes in the cache
    before the callback (``removeTransactionsForTxnTopicPartition``, ``addLoadingPartition: {coordinator_epoch}``,
    ``coordinator_epoch``, and metadata fields such as ``producer_epoch`` or ``pending_state``)."""
    raw = error_code(str(inp.get("append_error", inp.get("append_result", inp.get("error", "NONE")))))
    if "new_metadata" not in inp:
        return {"error": error_name(api.append_error_answer(raw)), "error_code": api.append_error_answer(raw),
                "callback_error": error_name(api.append_error_answer(raw))}
    tid = _tid(inp)
    epoch = integer(inp.get("coordinator_epoch", 0), "coordinator_epoch")
    spec = inp["new_metadata"]
    if not isinstance(spec, dict) or spec.get("transition") != "prepareAddPartitions":
        raise NotExpressible(f"appendTransactionToLog new_metadata {spec!r}: only a prepareAddPartitions transition")
    meta = w.txns.get(tid, NO_METADATA)
    res = api.prepare_add_partitions(meta, tuple(sorted(w.partitions.id(str(p)) for p in spec.get("partitions", []))))
    if res.exception:
        return {"error": "EXCEPTION", "exception": res.exception}
    # prepareTransitionTo: the cached metadata keeps its fields and holds the pending state
    cached = meta._replace(pending_state=res.metadata.state)
    cache = api.CacheAtAppend(cached, epoch if w.coordinator_epoch is None else w.coordinator_epoch,
                              w.loading, w.lookup_error)
    cache = _during_append(w, cache, inp.get("during_append") or {})
    out = api.append_transaction_to_log(cache, epoch, res.metadata, raw, retry_on_error=bool(inp.get("retry_on_error")))
    w.txns[tid] = out.metadata
    w.loading, w.lookup_error, w.coordinator_epoch = cache.loading, cache.lookup_error, cache.coordinator_epoch
    if out.exception:
        return {"error": "EXCEPTION", "exception": out.exception, "state_after": w.meta_view(out.metadata)}
    return {"error": error_name(out.error), "error_code": out.error, "callback_error": error_name(out.error),
            "state_after": w.meta_view(out.metadata)}


def _during_append(w: World, cache: api.CacheAtAppend, changes: Any) -> api.CacheAtAppend:
    if not isinstance(changes, dict):
        raise NotExpressible(f"during_append {changes!r}: give the cache changes as an object")
    fields = {}
    for key, x in changes.items():
        if key == "removeTransactionsForTxnTopicPartition" and x:
            cache = cache._replace(metadata=NO_METADATA)
        elif key == "addLoadingPartition":
            at = x.get("coordinator_epoch", cache.coordinator_epoch) if isinstance(x, dict) else cache.coordinator_epoch
            cache = cache._replace(loading=True, coordinator_epoch=integer(at, "coordinator_epoch"))
        elif key == "coordinator_epoch":
            cache = cache._replace(coordinator_epoch=integer(x, "coordinator_epoch"))
        else:
            fields[key] = x
    if fields:
        if not cache.metadata.exists:
            raise NotExpressible(f"during_append {fields!r}: no cached metadata to change")
        cache = cache._replace(metadata=w.meta_from({**w.meta_view(cache.metadata), **fields}))
    return cache


def validate_txn_timeout(w: World, inp: dict[str, Any]) -> Observed:
    """``TransactionStateManager.validateTransactionTimeoutMs`` (with KIP-939's ``enable_2pc``, 4.1.0+)."""
    return {"valid": api.valid_txn_timeout(integer(inp.get("txn_timeout_ms"), "txn_timeout_ms"), w.protocol,
                                           _flag(inp, "enable_2pc"))}


def _flag(inp: dict[str, Any], key: str) -> bool:
    value = inp.get(key, False)
    if not isinstance(value, bool):
        raise NotExpressible(f"{key} {value!r}: give true or false")
    return value


#: the authorizer's answers a step can give for the request's transactional id
_ACL_OPERATIONS = ("WRITE", "TWO_PHASE_COMMIT")


def _denied(inp: dict[str, Any]) -> frozenset[str]:
    """``authorizer``: {operation on the transactional id: ALLOWED | DENIED}; without it every operation is allowed
    (a KafkaApis without an authorizer)."""
    given = inp.get("authorizer")
    if given is None:
        return frozenset()
    if not isinstance(given, dict):
        raise NotExpressible(f"authorizer {given!r}: give {{operation: ALLOWED | DENIED}}")
    for op, answer in given.items():
        if op not in _ACL_OPERATIONS or answer not in ("ALLOWED", "DENIED"):
            raise NotExpressible(f"authorizer {op}: {answer}: the model's KafkaApis checks "
                                 f"{' and '.join(_ACL_OPERATIONS)} on the transactional id, ALLOWED or DENIED")
    return frozenset(op for op, answer in given.items() if answer == "DENIED")


def put_transaction_state(w: World, inp: dict[str, Any]) -> Observed:
    """``TransactionStateManager.putTransactionStateIfNotExists(txn_metadata)``: the metadata cached for
    its transactional id afterwards (the given one only if there was none) and the coordinator epoch."""
    given = inp.get("txn_metadata")
    if not isinstance(given, dict):
        raise NotExpressible("putTransactionStateIfNotExists needs the txn_metadata it puts")
    tid = str(given.get("transactional_id", DEFAULT_TID))
    err, st = api.put_transaction_state_if_not_exists(w.coordinator(tid), w.meta_from(given))
    if err:
        return {"error": error_name(err), "error_code": err}
    w.set_coordinator(tid, st)
    return {"error": "NONE", "error_code": 0, "state_after": w.meta_view(st.metadata),
            "coordinator_epoch": _cached_epoch(w, tid)}


def get_transaction_state(w: World, inp: dict[str, Any]) -> Observed:
    """``TransactionStateManager.getTransactionState``: the lookup's error, or the cached metadata;
    ``cached_producer_epoch``: ``getTransactionState(id).toOption.flatten.map(_.producerEpoch)`` (None on an error or
    without metadata), what TransactionStateManagerTest's ``cachedProducerEpoch`` reads."""
    tid = _tid(inp)
    cs = w.coordinator(tid)
    err = int(Errors.COORDINATOR_LOAD_IN_PROGRESS) if cs.loading else cs.lookup_error
    if err:
        return {"error": error_name(err), "error_code": err, "cached_producer_epoch": None}
    if not cs.metadata.exists:
        return {"error": "NONE", "error_code": 0, "state_after": None, "cached_producer_epoch": None}
    return {"error": "NONE", "error_code": 0, "state_after": w.meta_view(cs.metadata),
            "coordinator_epoch": _cached_epoch(w, tid), "cached_producer_epoch": cs.metadata.epoch}


def _cached_epoch(w: World, tid: str) -> int | None:
    """The coordinator epoch of the cache entry ``tid``'s lookup reads."""
    cache = w.txn_partition_cache(tid)
    if cache is None:
        return w.coordinator_epoch
    return None if cache.cached_epoch == tp.NOT_CACHED else cache.cached_epoch


def load_transactions(w: World, inp: dict[str, Any]) -> Observed:
    """``loadTransactionsForTxnTopicPartition`` (then the scheduler's tick) of the world's ``__transaction_state``
    partition at ``coordinator_epoch``: ``transaction_log`` gives its records in offset order (each a metadata object of
    a transactional id, ``{"transactional_id", "tombstone": true}``, or ``{"unknown_key_version": v}``); without it, the
    world's metadata are the last record of each transactional id. A PrepareCommit or PrepareAbort gets its markers sent
    again (the test's callback records the transactional id); ``loading_partitions``, ``cached`` and
    ``coordinator_epoch`` are the cache's after (``loadingPartitions.size``, ``transactionMetadataCache``)."""
    epoch = integer(inp.get("coordinator_epoch", w.coordinator_epoch), "coordinator_epoch")
    part = _named_partition(w, inp)
    if part is not None:
        cache = _partition_cache(w, part)
    else:
        cache = w.txn_partition if w.txn_partition is not None else tp.TxnPartitionCache()
    result = tp.handle_load(cache, epoch, _log_records(w, inp), w.protocol)
    loaded = tp.loaded_transactions(result, epoch)
    if part is not None:
        w.txn_partition_caches[part] = result.cache
        if result.loaded is not None:
            _drop_partition_ids(w, part)
            w.txns.update({tid: meta for tid, (meta, _, _) in loaded.items()})
    else:
        _set_partition(w, result.cache)
        if result.loaded is not None:
            w.txns = {tid: meta for tid, (meta, _, _) in loaded.items()}
    resumed: list[str] = []
    out: Observed = {}
    for tid, (_, partitions, marker) in loaded.items():
        if partitions:
            resumed.append(tid)
            out["marker_result"] = "COMMIT" if marker == int(TxnResult.COMMIT) else "ABORT"
            out["marker_partitions"] = sorted(w.partitions.name(p) for p in partitions)
    out["markers_sent_for"] = resumed
    out.update(_partition_view(w, part))
    out["transactional_ids"] = sorted(loaded)
    out["loaded"] = {tid: w.meta_view(meta) for tid, (meta, _, _) in loaded.items()}
    return out


def _log_records(w: World, inp: dict[str, Any]) -> list[tp.LogRecord]:
    raw = inp.get("transaction_log")
    if raw is None:
        return [tp.LogRecord(tid, to_log_record(meta)) for tid, meta in sorted(w.txns.items()) if meta.exists]
    if not isinstance(raw, list) or not all(isinstance(r, dict) for r in raw):
        raise NotExpressible("transaction_log: a list of records (metadata objects, tombstones, unknown keys)")
    records: list[tp.LogRecord] = []
    for r in raw:
        if "unknown_key_version" in r:
            records.append(tp.LogRecord("", None, known_key=False))
        elif r.get("tombstone") is True:
            records.append(tp.LogRecord(str(r.get("transactional_id", DEFAULT_TID)), None))
        else:
            records.append(tp.LogRecord(str(r.get("transactional_id", DEFAULT_TID)), to_log_record(w.meta_from(r))))
    return records


def _set_partition(w: World, cache: tp.TxnPartitionCache) -> None:
    """The world's lookup answers follow the partition's cache (``getTransactionState``)."""
    w.txn_partition = cache
    w.loading = bool(cache.loading)
    w.lookup_error = 0 if cache.loading else tp.lookup_error(cache)
    w.coordinator_epoch = None if cache.cached_epoch == tp.NOT_CACHED else cache.cached_epoch


def _partition_view(w: World, part: int | None = None) -> Observed:
    cache = (w.txn_partition or tp.TxnPartitionCache()) if part is None else w.txn_partition_caches[part]
    return {"loading_partitions": len(cache.loading), "cached": cache.cached_epoch != tp.NOT_CACHED,
            "coordinator_epoch": None if cache.cached_epoch == tp.NOT_CACHED else cache.cached_epoch}


def _named_partition(w: World, inp: dict[str, Any]) -> int | None:
    """The __transaction_state partition a load or unload step names (``partition``; None: the world's one), whose
    transactional ids the world must be able to place (``transaction_state_partitions`` or each ``txn_partition``)."""
    if "partition" not in inp:
        return None
    part = integer(inp["partition"], "partition")
    if w.txn_log_partition_count is None and not w.txn_log_partition_of:
        raise NotExpressible("a load or unload of a named __transaction_state partition needs the partition count "
                             "(initial_state.transaction_state_partitions) or each id's txn_partition")
    if part < 0 or (w.txn_log_partition_count is not None and part >= w.txn_log_partition_count):
        raise NotExpressible(f"partition {part}: not one of the {w.txn_log_partition_count} __transaction_state "
                             "partitions")
    return part


def _partition_cache(w: World, part: int) -> tp.TxnPartitionCache:
    """Partition ``part``'s cache entry; one no step named yet gives the initial state's answers."""
    if part in w.txn_partition_caches:
        return w.txn_partition_caches[part]
    cached = w.coordinator_epoch if w.coordinator_epoch is not None else 0
    return tp.TxnPartitionCache(tp.NOT_CACHED if w.lookup_error == Errors.NOT_COORDINATOR else cached,
                                (cached,) if w.loading else ())


def _drop_partition_ids(w: World, part: int) -> None:
    """The transactional ids of partition ``part`` leave the cache with its entry (``transactionMetadataCache``
    holds one pool per partition); the other partitions' stay."""
    for tid in [t for t in w.txns if w.txn_log_partition(t) == part]:
        del w.txns[tid]


def add_loaded_transactions(w: World, inp: dict[str, Any]) -> Observed:
    """``TransactionStateManager.addLoadedTransactionsToCache(partition, coordinator_epoch, pool)`` called directly
    (the load's last step, without its ``loadingPartitions`` bookkeeping): the partition's cache entry becomes
    ``transaction_log``'s transactions (an empty pool without it) at that epoch, replacing the entry it had (before
    KAFKA-9307, 2.4.1, the entry is put and IllegalStateException thrown)."""
    part = _named_partition(w, inp)
    if part is None:
        raise NotExpressible("addLoadedTransactionsToCache names the __transaction_state partition (partition)")
    epoch = integer(inp.get("coordinator_epoch", w.coordinator_epoch if w.coordinator_epoch is not None else 0),
                    "coordinator_epoch")
    before = _partition_cache(w, part)
    records = _log_records(w, inp) if "transaction_log" in inp else []
    result = tp.handle_load(before._replace(loading=()), epoch, records, w.protocol)
    w.txn_partition_caches[part] = tp.TxnPartitionCache(epoch, before.loading)
    _drop_partition_ids(w, part)
    w.txns.update({tid: meta for tid, (meta, _, _) in tp.loaded_transactions(result, epoch).items()})
    if not result.completed:
        return {"error": "EXCEPTION", "exception": "IllegalStateException"}
    return {"error": "NONE", **_partition_view(w, part)}


def unload_transactions(w: World, inp: dict[str, Any]) -> Observed:
    """``removeTransactionsForTxnTopicPartition(partition, coordinator_epoch)``, directly or through
    ``TransactionCoordinator.onResignation`` (the coordinator epoch it names does not change what is removed); the
    partition's records stay in the log, its cache entry goes: lookups answer NOT_COORDINATOR."""
    integer(inp.get("coordinator_epoch", 0), "coordinator_epoch")
    part = _named_partition(w, inp)
    if part is not None:
        try:
            w.txn_partition_caches[part] = tp.handle_unload(_partition_cache(w, part))
        except ValueError:
            raise NotExpressible("an emigration while the partition is loading: which loads it cancels differs by "
                                 "version (2.4 leavingPartitions, 1eb7644 the same epoch, 4.2.0-rc1 an older one)") from None
        _drop_partition_ids(w, part)
        out = _partition_view(w, part)
        out["__why__"] = {"markers_removed": "the model's coordinator keeps no queue of markers to send "
                                             "(TransactionMarkerChannelManager.removeMarkersForTxnTopicPartition)"}
        return out
    if w.txn_partition is None:
        cached = w.coordinator_epoch if w.coordinator_epoch is not None else 0
        w.txn_partition = tp.TxnPartitionCache(tp.NOT_CACHED if w.lookup_error == Errors.NOT_COORDINATOR else cached,
                                               (cached,) if w.loading else ())
    try:
        _set_partition(w, tp.handle_unload(w.txn_partition))
    except ValueError:
        raise NotExpressible("an emigration while the partition is loading: which loads it cancels differs by version "
                             "(2.4 leavingPartitions, 1eb7644 the same epoch, 4.2.0-rc1 an older one)") from None
    out = _partition_view(w)
    # TransactionCoordinator.onResignation also drops the partition's queued markers
    out["__why__"] = {"markers_removed": "the model's coordinator keeps no queue of markers to send "
                                         "(TransactionMarkerChannelManager.removeMarkersForTxnTopicPartition)"}
    return out
