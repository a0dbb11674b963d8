"""Steps on a partition leader: produce batches (one or several records: a sequence range),
transaction markers, the clock, producer-id expiry."""

from __future__ import annotations

import re
from typing import Any

from ..api import kafka_apis
from ..api import leader as api
from ..api.protocol import add_partition_passes_abortable
from ..errors import Errors
from ..partition.produce_request import REPLICAS, Replica
from ..partition.stable_read import AbortedTxn
from ..partition.validation import AppendOrigin
from ..partition.verification import (
    NO_COORDINATOR_ANSWER,
    superseded_verification,
    verification_callback_errors,
    verification_top_level_error,
)
from ..transactions.codes import TxnResult
from . import steps_log_cleaner
from .values import ANSWERED_BEFORE, NotExpressible, acls_denied, error_code, error_name, integer
from .world import World

Observed = dict[str, Any]


def _origin(inp: dict[str, Any]) -> int:
    name = str(inp.get("origin", "CLIENT"))
    try:
        return int(AppendOrigin[name])
    except KeyError:
        raise NotExpressible(f"append origin {name!r} is not one of CLIENT, COORDINATOR, REPLICATION") from None


def _result(res: api.ProduceResult) -> Observed:
    out: Observed = {"result": res.result, "error": error_name(res.error), "error_code": res.error}
    if res.result != api.REJECTED:
        out["first_offset"], out["last_offset"] = res.first_offset, res.last_offset
        out["offsets"] = f"{res.first_offset}..{res.last_offset}"
    return out


def _after(w: World, out: Observed, producer_id: int | None = None) -> Observed:
    w.note_transactions()
    undecided = api.first_undecided_offset(w.leader)
    out["first_undecided_offset"] = None if undecided < 0 else undecided
    unstable = w.first_unstable_offset()
    if unstable is not False:
        out["first_unstable_offset"] = unstable
        if w.unified_log:
            # UnifiedLog.lastStableOffset: the first unstable offset while it is below the high watermark, else
            # the high watermark (a read_committed fetch's upper bound)
            hw = w.high_watermark
            out["last_stable_offset"] = unstable if unstable is not None and unstable < hw else hw
    if producer_id is not None:
        out["verification_entry_present"] = any(v.producer_id == producer_id for v in w.leader.verifications)
    out["state_after"] = w.producers_view()
    out["producers_after"] = w.producers_view()
    out["active_producers"] = len(w.leader.producers)
    out["map_end_offset"] = w.leader.log_end_offset
    return out


def produce(w: World, inp: dict[str, Any]) -> Observed:
    kind = str(inp.get("api", ""))
    many = re.search(r"x\s*(\d+)", kind)
    if many or "batches" in inp:
        return _produce_many(w, inp, int(many.group(1)) if many else 0)
    batch = _batch(inp, inp)
    res, w.leader = api.append_batch(w.leader, batch, w.protocol, check_duplicates=w.unified_log)
    _logged(w, batch, res)
    steps_log_cleaner.record_data(w, inp, batch, res)
    shared = _append_info(w, inp, batch.producer_id, batch.base_sequence, res.first_offset, res.result == api.APPENDED)
    return _shared_view(w, _after(w, _result(res), batch.producer_id), shared)


def _append_info(w: World, inp: dict[str, Any], producer_id: int, first_seq: int, first_offset: int,
                 appended: bool) -> int | None:
    """A step's ``append_info``: ``new`` (a ProducerAppendInfo starts with this batch) or ``continue``
    (the batch goes through the previous step's). The test then asserts ``appendInfo.toEntry()``, whose
    firstSeq / firstDataOffset are the first batch of that append info, not the oldest cached batch.
    Returns the producer id whose view that is (None: the step does not say)."""
    mode = inp.get("append_info")
    if mode is None:
        return None
    if mode not in ("new", "continue"):
        raise NotExpressible(f"append_info {mode!r}: 'new' or 'continue'")
    if appended and first_seq >= 0 and (mode == "new" or producer_id not in w.append_infos):
        w.append_infos[producer_id] = (first_seq, first_offset)
    return producer_id


def _shared_view(w: World, out: Observed, producer_id: int | None) -> Observed:
    first = w.append_infos.get(producer_id) if producer_id is not None else None
    if first is not None and str(producer_id) in out["state_after"]:
        entry = dict(out["state_after"][str(producer_id)], first_seq=first[0], first_offset=first[1])
        out["state_after"] = dict(out["state_after"], **{str(producer_id): entry})
        out["producers_after"] = out["state_after"]
    return out


def _batch(inp: dict[str, Any], common: dict[str, Any]) -> api.ProduceBatch:
    get = lambda k, d=None: inp.get(k, common.get(k, d))
    base = integer(get("base_sequence", 0), "base_sequence")
    first, ts = get("first_offset"), get("timestamp")
    last_off = get("last_offset")
    count = (integer(get("last_sequence", base), "last_sequence") - base) % 2**31 + 1 if base >= 0 else 1
    if first is not None and last_off is not None and integer(last_off, "last_offset") - integer(first, "first_offset") + 1 != count:
        # the leader derives a batch's last offset from its records, one sequence each
        raise NotExpressible(f"offsets {first}..{last_off} do not hold the {count} records of sequences "
                             f"{base}..{get('last_sequence', base)}")
    _retained(get("retained_records"), base, count)
    guard = str(get("verification_guard", "none"))
    if guard not in ("none", "current"):
        raise NotExpressible(f"verification_guard {guard!r}: 'current' (the guard of the entry) or 'none' (SENTINEL)")
    return api.ProduceBatch(integer(get("producer_id", 0), "producer_id"), integer(get("producer_epoch", 0), "producer_epoch"),
                            base, integer(get("last_sequence", base), "last_sequence"),
                            _origin({"origin": get("origin", "CLIENT")}), bool(get("is_transactional", False)),
                            -1 if first is None else integer(first, "first_offset"),
                            -1 if ts is None else integer(ts, "timestamp"), guard == "current",
                            integer(get("records", 0), "records"))


def _retained(raw: Any, base: int, count: int) -> None:
    """``retained_records``: the records log compaction left in a batch of a producer (``MemoryRecords.filterTo``; 0:
    an emptied batch kept for its header, KAFKA-5490, 0.11.0.1). The producer state is built from the header alone
    (``ProducerAppendInfo.append``: baseSequence, lastSequence, lastOffset, epoch), which compaction keeps, so the
    count cannot change an answer; it is read to refuse a count the header cannot hold."""
    if raw is None:
        return
    n = integer(raw, "retained_records")
    if base < 0:
        raise NotExpressible("retained_records of a batch without a producer id: its records are the 'records' count")
    if not 0 <= n <= count:
        raise NotExpressible(f"retained_records {n}: a batch of sequences {base}..{base + count - 1} holds 0..{count}")


_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}


def _produce_many(w: World, inp: dict[str, Any], times: int) -> Observed:
    """Several batches in one step: a list of batch objects (the step's other fields are their
    defaults), or 'seq A..B, N records each' (N one, two, ... or a number)."""
    raw = inp.get("batches")
    if isinstance(raw, list):
        batches = [_batch(b if isinstance(b, dict) else {}, inp) for b in raw]
    else:
        text = str(raw or "")
        m = re.search(r"seq\s*(\d+)\s*\.\.\s*(\d+)", text)
        per = re.search(r"(\d+|one|two|three|four|five) records? each", text)
        if not m or not per:
            raise NotExpressible(f"batch list not understood: {text!r}")
        n = int(per.group(1)) if per.group(1).isdigit() else _WORDS[per.group(1)]
        lo, hi = int(m.group(1)), int(m.group(2))
        if (hi - lo + 1) % n:
            raise NotExpressible(f"{text!r}: the range does not split into batches of {n}")
        batches = [_batch({"base_sequence": s, "last_sequence": s + n - 1, "first_offset": None}, inp)
                   for s in range(lo, hi + 1, n)]
    if times and times != len(batches):
        raise NotExpressible(f"{inp.get('api')!r} does not match the {len(batches)} batches given")
    if batches[0].origin == AppendOrigin.REPLICATION and not api.offsets_monotonic(tuple(batches)):
        return {"error": "EXCEPTION", "exception": "OffsetsOutOfOrderException", "result": api.REJECTED}
    results = []
    for batch in batches:
        res, w.leader = api.append_batch(w.leader, batch, w.protocol, check_duplicates=w.unified_log)
        _logged(w, batch, res)
        results.append(res)
    bad = [r for r in results if r.result != api.APPENDED]
    last = bad[0] if bad else api.ProduceResult(api.APPENDED, 0, results[0].first_offset, results[-1].last_offset)
    return _after(w, _result(last))


def marker(w: World, inp: dict[str, Any]) -> Observed:
    denied = acls_denied(inp)
    if denied is not None and not kafka_apis.write_txn_markers_authorized(
            denied, alter_cluster=w.protocol.write_txn_markers_alter_cluster):
        # authorizeClusterOperation throws before any marker is read; the request handler's error response answers
        # every partition of the request with the exception's error (WriteTxnMarkersRequest.getErrorResponse)
        code = int(Errors.CLUSTER_AUTHORIZATION_FAILED)
        return {"exception": "ClusterAuthorizationException", "appended": False,
                "per_partition": {str(tp): {"error": error_name(code), "error_code": code}
                                  for tp in inp.get("partitions", [])},
                ANSWERED_BEFORE: "KafkaApis' authorization"}
    if w.replica_magic is not None:
        # KafkaApis.handleWriteTxnMarkersRequest first: a partition not hosted here, or whose log is older
        # than format v2, is answered without an append
        parts = [str(p) for p in inp.get("partitions", [])]
        refused, append = kafka_apis.marker_errors(parts, w.replica_magic)
        answers = {tp: {"error": error_name(e), "error_code": e} for tp, e in refused.items()}
        if len(append) > 1:
            raise NotExpressible("a marker for several hosted partitions: a model world holds one leader partition")
        if not append:
            return {"per_partition": answers, "appended": False, ANSWERED_BEFORE: "KafkaApis' getMagic check"}
        out = _marker(w, inp)
        out["per_partition"] = {**answers, append[0]: {"error": out.get("error", "NONE"),
                                                       "error_code": out.get("error_code", 0)}}
        out["appended"] = True
        return out
    return _marker(w, inp)


def _marker(w: World, inp: dict[str, Any]) -> Observed:
    # peeked at without marking it read: before KAFKA-19446 (kafka.eos's ``tv2_marker_epoch_check``) the model's marker step takes no
    # transaction version, and an unknown one from the coordinator is no protocol answer but appendAsLeader's
    # argument check (KAFKA-19446, PR 20882, 4.2.0-rc1: IllegalArgumentException; a follower may leave it unknown)
    if dict.get(inp, "transaction_version") in ("TV_UNKNOWN", -1) and \
            str(dict.get(inp, "origin", "COORDINATOR")) == "COORDINATOR":
        raise NotExpressible("transaction_version TV_UNKNOWN on a COORDINATOR marker: the model's WriteTxnMarker "
                             "takes no transaction version (its coordinator always states one), so it has no "
                             "refusal of an unknown one (appendAsLeader's IllegalArgumentException, KAFKA-19446)")
    req = api.MarkerRequest(integer(inp.get("producer_id", 0), "producer_id"),
                            integer(inp.get("producer_epoch", 0), "producer_epoch"),
                            int(TxnResult[str(inp.get("result", "COMMIT"))]),
                            integer(inp.get("coordinator_epoch", 0), "coordinator_epoch"),
                            integer(inp.get("offset", -1), "offset"))
    entry = next((e for e in w.leader.producers if e.producer_id == req.producer_id), None)
    txn_first = entry.current_txn_first_offset if entry is not None else -1
    if integer(inp.get("records", 1), "records") == 0:
        # a control batch with no records: no marker is applied, whoever appends it
        _origin(inp)
        res, w.leader = api.append_empty_control_batch(w.leader, req.producer_id, req.offset)
        return _after(w, _result(res), req.producer_id)
    # KAFKA-19446 (4.2.0-rc1) reads the marker's transaction version; before it, the field stays listed as not read
    raw_tv = inp.get("transaction_version", 0) if w.protocol.eos.tv2_marker_epoch_check != "lenient" else 0
    tv = 0 if raw_tv in ("TV_UNKNOWN", -1) else integer(raw_tv, "transaction_version")
    res, w.leader = api.append_marker(w.leader, req, w.protocol, origin=_origin({'origin': inp.get('origin', 'COORDINATOR')}),
                                      unified_log=w.unified_log, transaction_version=tv)
    if res.result == api.APPENDED:
        w.log.append(req._replace(offset=res.first_offset))
        steps_log_cleaner.record_marker(w, req, res.first_offset)
        if txn_first >= 0 and req.result == TxnResult.ABORT:
            # ProducerStateManager.completeTxn: an aborted transaction goes into the aborted transaction index
            w.aborted_txns.append(AbortedTxn(req.producer_id, txn_first, res.first_offset))
    shared = _append_info(w, inp, req.producer_id, -1, -1, False)
    out = _shared_view(w, _after(w, _result(res), req.producer_id), shared)
    # the CompletedTxn the marker returns (appendEndTxnMarker): none when no transaction was open
    out["completed_txn"] = None if res.result != api.APPENDED or txn_first < 0 else {
        "producer_id": req.producer_id, "first_offset": txn_first, "last_offset": res.last_offset,
        "is_aborted": req.result == TxnResult.ABORT}
    return out


def active_producers(w: World, inp: dict[str, Any]) -> Observed:
    """``UnifiedLog.activeProducersWithLastSequence`` read for ``producer_id``: whether it holds the producer
    (``contains``) and its last sequence (None when it does not); ``active_producers`` is the map's size."""
    pid = integer(inp.get("producer_id"), "producer_id")
    entry = next((e for e in w.leader.producers if e.producer_id == pid), None)
    return {"active_producers": len(w.leader.producers), "contains": entry is not None,
            "last_sequence": None if entry is None else w.entry_view(entry)["last_seq"]}


def advance_time(w: World, inp: dict[str, Any]) -> Observed:
    w.now += integer(inp.get("ms", 0), "ms")
    w.leader = w.leader._replace(now=w.now)
    return {}


def has_late_transaction(w: World, inp: dict[str, Any]) -> Observed:
    """``hasLateTransaction(now)``, at the step's ``now`` (default the world's clock) with the initial state's
    ``max_transaction_timeout_ms`` (default the profile's transaction.max.timeout.ms)."""
    now = integer(inp.get("now", w.now), "now", w.symbols)
    limit = w.protocol.max_txn_timeout_ms if w.psm_max_txn_timeout_ms is None else w.psm_max_txn_timeout_ms
    return {"has_late_transaction": api.has_late_transaction(w.leader, now, limit)}


def remove_expired(w: World, inp: dict[str, Any]) -> Observed:
    w.leader = api.remove_expired_producers(w.leader, w.pid_expiration_ms)
    out = _after(w, {})
    out["verification_entry_present"] = bool(w.leader.verifications)
    return out


def start_verification(w: World, inp: dict[str, Any]) -> Observed:
    pid = integer(inp.get("producer_id", 0), "producer_id")
    seq = integer(inp.get("base_sequence", inp.get("sequence", 0)), "sequence")
    epoch = integer(inp.get("producer_epoch", 0), "producer_epoch")
    bump = bool(inp.get("supports_epoch_bump", False))
    if api.stale_at_verification(w.leader, pid, epoch, w.protocol):
        # KAFKA-18042: the call throws before it creates or updates an entry
        entry = next((e for e in w.leader.verifications if e.producer_id == pid), None)
        return {**_result(api.ProduceResult(api.REJECTED, int(Errors.INVALID_PRODUCER_EPOCH))),
                "verification_entry_present": entry is not None}
    w.leader = api.start_verification(w.leader, pid, seq, epoch, supports_epoch_bump=bump)
    entry = next((e for e in w.leader.verifications if e.producer_id == pid), None)
    if entry is None:  # a transaction is ongoing: the SENTINEL guard, nothing to verify
        return {"verification_entry_present": False, "verification_entry": None}
    return {"verification_entry_present": True,
            "verification_entry": {"lowest_sequence": entry.lowest_sequence, "epoch": entry.epoch}}


def move_log_start_offset(w: World, inp: dict[str, Any]) -> Observed:
    """Retention / DeleteRecords / ``onLogStartOffsetIncremented(n)``: the new log start offset comes
    from a field (``log_start_offset``, ``offset``, ``new_log_start_offset``) or the text."""
    text = " ".join(str(inp.get(k, "")) for k in ("event", "call", "api"))
    raw = inp.get("log_start_offset", inp.get("new_log_start_offset", inp.get("offset")))
    if raw is None:
        m = re.search(r"(\d+)", text)
        if not m:
            raise NotExpressible(f"{text!r}: no new log start offset given")
        raw = int(m.group(1))
    w.log_start_offset = max(w.log_start_offset, integer(raw, "log_start_offset"))
    w.leader = api.move_log_start_offset(w.leader, w.log_start_offset, w.protocol)
    return _after(w, {})


def update_high_watermark(w: World, inp: dict[str, Any]) -> Observed:
    w.high_watermark = max(w.high_watermark, integer(inp.get("offset", inp.get("high_watermark")), "offset"))
    return _after(w, _snapshot_view(w))


def set_verification_enabled(w: World, inp: dict[str, Any]) -> Observed:
    """``transaction.partition.verification.enable`` changed while the broker runs."""
    w.leader = w.leader._replace(verification_enabled=bool(inp.get("enabled", True)))
    return {}


def clear_verification(w: World, inp: dict[str, Any]) -> Observed:
    pid = integer(inp.get("producer_id", 0), "producer_id")
    w.leader = w.leader._replace(verifications=tuple(v for v in w.leader.verifications if v.producer_id != pid))
    return {"verification_entry_present": False}


def _replica(inp: dict[str, Any]) -> tuple[Replica, bool]:
    """The step's partition as this broker holds it (``replica``: leader, follower or none) and whether the metadata
    cache knows it (``in_metadata_cache``, default true)."""
    replica = str(inp.get("replica", "leader"))
    if replica not in REPLICAS:
        raise NotExpressible(f"replica {replica!r}: one of {', '.join(REPLICAS)}")
    return replica, bool(inp.get("in_metadata_cache", True))


def _response(w: World, out: Observed, from_log: bool) -> Observed:
    """The PartitionResponse's logStartOffset: the log's for an append and for an error the log raised
    (``processFailedRecord``); -1 (``UNKNOWN_LOG_APPEND_INFO``) for a refusal before the log (lookup, verification)."""
    out["log_start_offset"] = w.log_start_offset if from_log else -1
    return out


def replica_append(w: World, inp: dict[str, Any]) -> Observed:
    """``ReplicaManager.appendRecords`` / ``handleProduceAppend`` for one partition; ``verification_callback_error`` is
    what AddPartitionsToTxnManager's callback answers (mocked in ReplicaManagerTest); without it the batch waits for a
    later 'verification callback' step. ``other_partitions``: the batches the request carries for other partitions,
    read by the several-producer check only (a request it lets through is not expressible: the world holds one
    leader partition). ``replica`` / ``in_metadata_cache``: how this broker holds the partition."""
    batch = _batch(inp, inp)
    others = inp.get("other_partitions")
    tid = inp.get("transactional_id")
    verifying = tid is not None and w.leader.verification_enabled
    if others is not None:
        if not isinstance(others, list) or not all(isinstance(o, dict) for o in others):
            raise NotExpressible("other_partitions: a list of batches (producer_id, producer_epoch, is_transactional)")
        rest = tuple(_batch(o, {"base_sequence": 0}) for o in others)
        check = api.produce_request_pid_check((batch, *rest), w.protocol.produce_pid_check, verifying=verifying)
        if check.started_first and batch.transactional:
            # 3.6.0 .. 3.7.x: each partition's verification entry is started in the loop that collects the ids
            w.leader = api.start_verification(w.leader, batch.producer_id, batch.base_sequence, batch.epoch)
        if check.refused:
            return {"error": "EXCEPTION", "exception": "InvalidPidMappingException", "result": api.REJECTED,
                    "verification_sent": False,
                    "verification_entry_present": any(v.producer_id == batch.producer_id
                                                      for v in w.leader.verifications)}
        if rest:
            raise NotExpressible("a produce request for several partitions that the several-producer check lets "
                                 "through: the world holds one leader partition")
    replica, known = _replica(inp)
    refused = api.lookup_error(replica, known)
    if refused != Errors.NONE:
        # getPartitionOrException fails before any verification starts (errors of partitionEntriesForVerification /
        # maybeStartTransactionVerificationForPartitions, or appendToLocalLog's)
        out = _after(w, _result(api.ProduceResult(api.REJECTED, refused)), batch.producer_id)
        return _response(w, {**out, "verification_sent": False}, False)
    # the produce request's operation (v12+): verifying one (TV1, genericErrorSupported from v11) or adding the
    # partition (TV2); the errors converted are the same but for the add's retry of CONCURRENT_TRANSACTIONS
    operation = str(inp.get("transaction_supported_operation", "genericError"))
    if operation not in ("genericError", "defaultError", "ADD_PARTITION"):
        raise NotExpressible(f"transaction_supported_operation {operation!r}: genericError, defaultError or "
                             "ADD_PARTITION")
    w.pending_operation = operation
    started, w.leader = api.start_replica_append(w.leader, batch, w.protocol,
                                                 transactional_id=inp.get("transactional_id") is not None)
    if started.result is not None:
        _logged(w, batch, started.result)
        return _response(w, {**_after(w, _result(started.result), batch.producer_id), "verification_sent": False},
                         True)
    w.pending_append = batch
    if "verification_callback_error" not in inp:
        return {**_after(w, {"result": "PENDING"}, batch.producer_id), "verification_sent": True}
    return {**verification_callback(w, inp), "verification_sent": True}


def verification_callback(w: World, inp: dict[str, Any]) -> Observed:
    batch = w.pending_append
    if batch is None:
        raise NotExpressible("verification callback: no produce request is waiting for its verification")
    answer = error_code(str(inp.get("verification_callback_error", "NONE")))
    if w.pending_operation == "ADD_PARTITION" and answer == Errors.CONCURRENT_TRANSACTIONS:
        # KAFKA-18654 [2/2] (PR 18810, 9cb271f1e1, 4.1.0): a TV2 produce request whose partition the coordinator
        # is still adding is retried after addPartitionsToTxnRetryBackoffMs; the model's ReplicaManager has no
        # scheduler and answers at once (the TV1 conversion to NOT_ENOUGH_REPLICAS)
        raise NotExpressible("verification callback CONCURRENT_TRANSACTIONS on an ADD_PARTITION (TV2) produce: "
                             "ReplicaManager's scheduled retry, which the model has no step for")
    w.pending_append = None
    res, w.leader = api.complete_verified_append(w.leader, batch, w.protocol, answer)
    _logged(w, batch, res)
    return _response(w, _after(w, _result(res), batch.producer_id), answer == Errors.NONE)


def replica_start_verification(w: World, inp: dict[str, Any]) -> Observed:
    """``ReplicaManager.maybeStartTransactionVerificationForPartition`` (KAFKA-15449, 3.7.0: the group coordinator's
    verification of a transactional offset commit): without a transactional id or with verification off nothing is
    looked up and the callback answers NONE; a partition the broker cannot verify answers the callback with the
    lookup error at once, and AddPartitionsToTxnManager is not asked; a partition with a transaction ongoing
    answers the SENTINEL guard at once; otherwise the verification is sent and its answer pending."""
    replica, known = _replica(inp)
    tid = inp.get("transactional_id")
    pid = integer(inp.get("producer_id", 0), "producer_id")
    epoch = integer(inp.get("producer_epoch", 0), "producer_epoch")
    seq = integer(inp.get("base_sequence", 0), "base_sequence")
    if not w.leader.verification_enabled or tid is None:
        # skipped before any partition is looked up (maybeStartTransactionVerificationForPartitions)
        return {"callback_error": "NONE", "verification_sent": False, "verification_entry_present": False}
    refused = api.lookup_error(replica, known)
    if refused != Errors.NONE:
        return {"callback_error": error_name(refused), "verification_sent": False,
                "verification_entry_present": False}
    if api.stale_at_verification(w.leader, pid, epoch, w.protocol):
        return {"callback_error": error_name(Errors.INVALID_PRODUCER_EPOCH), "verification_sent": False,
                "verification_entry_present": any(v.producer_id == pid for v in w.leader.verifications)}
    w.leader = api.start_verification(w.leader, pid, seq, epoch)
    present = any(v.producer_id == pid for v in w.leader.verifications)
    return {"callback_error": None if present else "NONE", "verification_sent": present,
            "verification_entry_present": present}


def active_producer_state(w: World, inp: dict[str, Any]) -> Observed:
    """``ReplicaManager.activeProducerState`` (DescribeProducers, KIP-664, 2.8.0): the lookup error of a partition
    the broker holds no replica of; a leader or a follower answers its producers."""
    replica, known = _replica(inp)
    refused = api.lookup_error(replica, known, needs_leader=False)
    out: Observed = {"error": error_name(refused), "error_code": int(refused)}
    if refused == Errors.NONE and replica == "leader":
        out["active_producers"] = len(w.leader.producers)
    return out


def fetch_read_committed(w: World, inp: dict[str, Any]) -> Observed:
    """``ReplicaManager.fetchMessages`` from a consumer at ``isolation_level`` READ_COMMITTED for the leader partition
    (``api.leader.read_committed``). A fetch waiting in the purgatory for ``min_bytes`` answers what the log holds
    when it times out, as here: the model keeps no byte sizes, so ``min_bytes`` and ``max_wait_ms`` are not read."""
    if str(inp.get("isolation_level", "READ_COMMITTED")) != "READ_COMMITTED":
        raise NotExpressible(f"isolation_level {inp.get('isolation_level')!r}: the model reads READ_COMMITTED only")
    start = integer(inp.get("fetch_offset", 0), "fetch_offset")
    if not w.log_start_offset <= start <= w.leader.log_end_offset:
        raise NotExpressible(f"fetch_offset {start}: outside the log (OFFSET_OUT_OF_RANGE is not modelled)")
    if w.log_incomplete:
        raise NotExpressible("a fetch from a log whose initial producers have no batches in it")
    unstable = w.first_unstable_offset()
    read = api.read_committed(tuple(w.log), start, w.leader.log_end_offset,
                              None if unstable is None or unstable is False else int(unstable),
                              w.high_watermark, tuple(w.aborted_txns))
    return {"error": "NONE", "error_code": 0, "last_stable_offset": read.last_stable_offset,
            "high_watermark": w.high_watermark, "batches": len(read.batches),
            "records": sum(n for _, _, n in read.batches),
            "aborted_transactions": [{"producer_id": t.producer_id, "first_offset": t.first_offset}
                                     for t in read.aborted]}


def verify_transaction(w: World, inp: dict[str, Any]) -> Observed:
    """``AddPartitionsToTxnManager.verifyTransaction``: the verification is queued for the
    coordinator; one already queued for the transactional id is answered or kept
    (``superseded_verification``)."""
    tid = str(inp.get("transactional_id", ""))
    pid = integer(inp.get("producer_id", 0), "producer_id")
    epoch = integer(inp.get("producer_epoch", 0), "producer_epoch")
    parts = tuple(str(p) for p in inp.get("partitions", []))
    out: Observed = {"callback_errors": {}}
    if inp.get("coordinator_node", "known") != "known":
        # no transaction coordinator to ask: answered at once, nothing queued
        out["callback_errors"] = {p: error_name(NO_COORDINATOR_ANSWER) for p in parts}
        return out
    queued = w.verify_queue.get(tid)
    if queued is not None:
        old_answer, new_answer = superseded_verification(queued[1], epoch)
        if new_answer != Errors.NONE:
            out["callback_errors"] = {p: error_name(new_answer) for p in parts}
            out["queued"] = {t: e for t, (_, e, _) in w.verify_queue.items()}
            return out
        out["superseded_callback_errors"] = {p: error_name(old_answer) for p in queued[2]}
    w.verify_queue[tid] = (pid, epoch, parts)
    out["queued"] = {t: e for t, (_, e, _) in w.verify_queue.items()}
    return out


def verification_response(w: World, inp: dict[str, Any]) -> Observed:
    """The coordinator's answer to a verify-only AddPartitionsToTxn as ``AddPartitionsToTxnManager``
    hands it to the produce path: 'response' (disconnected / version_mismatch), a 'top_level_error',
    or per-partition 'partition_errors'; 'transaction_supported_operation' is the produce request's
    (genericError from v11)."""
    kind = str(inp.get("response", ""))
    parts = [str(p) for p in (inp.get("partition_errors") or {})] or ["foo-1", "foo-2", "foo-3"]
    operation = str(inp.get("transaction_supported_operation", "genericError"))
    generic = operation == "genericError" or (operation == "ADD_PARTITION"
                                              and add_partition_passes_abortable(w.protocol))
    if kind == "version_mismatch":
        # a coordinator without verify-only AddPartitionsToTxn: the produce request goes on unverified
        return {"callback_errors": {}}
    if kind == "disconnected":
        return {"callback_errors": {p: "NETWORK_EXCEPTION" for p in parts}}
    if kind:
        raise NotExpressible(f"AddPartitionsToTxnManager response {kind!r}: disconnected or version_mismatch")
    top = inp.get("top_level_error")
    if top is not None:
        code = verification_top_level_error(error_code(str(top)))
        return {"callback_errors": {p: error_name(code) for p in parts}}
    raw = {i: error_code(str(e)) for i, e in enumerate((inp.get("partition_errors") or {}).values())}
    got = verification_callback_errors(raw, generic_error=generic)
    return {"callback_errors": {parts[i]: error_name(e) for i, e in got.items()}}


def _logged(w: World, batch: api.ProduceBatch, res: api.ProduceResult) -> None:
    if res.result == api.APPENDED:
        w.log.append(batch._replace(first_offset=res.first_offset))


def _snapshot_view(w: World) -> Observed:
    w.unreadable_snapshots &= {o for o, _ in w.snapshots}
    return {"snapshot_offsets": [o for o, _ in w.snapshots], "snapshot_count": len(w.snapshots),
            "latest_snapshot_offset": w.snapshots[-1][0] if w.snapshots else None,
            "oldest_snapshot_offset": w.snapshots[0][0] if w.snapshots else None,
            "producer_state_end_offset": w.leader.log_end_offset}


def _snapshot(w: World) -> None:
    """``takeSnapshot`` at the map end offset: a file written anew there parses again."""
    w.snapshots = api.take_snapshot(w.leader, w.snapshots)
    w.unreadable_snapshots.discard(w.leader.log_end_offset)


def take_snapshot(w: World, inp: dict[str, Any]) -> Observed:
    _snapshot(w)
    return _snapshot_view(w)


def roll(w: World, inp: dict[str, Any]) -> Observed:
    """``UnifiedLog.roll``: a new segment; the producer state is snapshotted at the roll offset."""
    _snapshot(w)
    if w.leader.log_end_offset > max([w.first_segment_base, *w.segment_bases]):
        w.segment_bases.append(w.leader.log_end_offset)
    return _snapshot_view(w)


def flush(w: World, inp: dict[str, Any]) -> Observed:
    """``UnifiedLog.flush`` / ``flushUptoOffsetExclusive(offset)`` (1eb7644): segments are written to disk and the
    recovery point moves; no snapshot is taken or deleted (from KAFKA-9393, 2.8.0, a snapshot goes with its segment;
    before, LogManager's recovery-point checkpoint, not the flush, deleted those below the last two segments)."""
    offset = integer(inp.get("offset", w.leader.log_end_offset), "offset")
    if offset > w.leader.log_end_offset:
        raise NotExpressible(f"flush up to {offset}: past the log end offset {w.leader.log_end_offset}")
    return _snapshot_view(w)


def delete_snapshot_files(w: World, inp: dict[str, Any]) -> Observed:
    """``LogTestUtils.deleteProducerSnapshotFiles``: the files go, the in-memory state stays."""
    w.snapshots = ()
    return _snapshot_view(w)


def delete_snapshots_before(w: World, inp: dict[str, Any]) -> Observed:
    """``ProducerStateManager.deleteSnapshotsBefore(offset)``: the snapshots below ``offset`` go (the one at it
    stays); the in-memory state stays."""
    offset = integer(inp.get("offset"), "offset")
    w.snapshots = tuple((o, p) for o, p in w.snapshots if o >= offset)
    return _snapshot_view(w)


_DAMAGE = ("emptied", "truncated", "overwritten")


def corrupt_snapshot(w: World, inp: dict[str, Any]) -> Observed:
    """The test damages a snapshot file on disk (``offset``, default the latest): ``damage`` says how
    (``emptied``: cut to 0 bytes, ``truncated``: cut in the middle, ``overwritten``: bytes written over it). Each
    makes ``readSnapshot`` throw CorruptSnapshotException (the schema read fails or the CRC differs); the
    manager still lists the file until a load reaches it."""
    damage = str(inp.get("damage", ""))
    if damage not in _DAMAGE:
        raise NotExpressible(f"damage {damage!r}: one of {', '.join(_DAMAGE)}")
    if not w.snapshots:
        raise NotExpressible("no snapshot file to damage")
    offset = integer(inp.get("offset", w.snapshots[-1][0]), "offset")
    if offset not in dict(w.snapshots):
        raise NotExpressible(f"no snapshot file at {offset} to damage")
    w.unreadable_snapshots.add(offset)
    return _snapshot_view(w)


def delete_old_segments(w: World, inp: dict[str, Any]) -> Observed:
    """``UnifiedLog.deleteOldSegments`` (1eb7644): from the oldest segment on, while the segment's end (the next
    base, or the log end) is at or below the high watermark and it breaches a policy, it is deleted, but never a last
    segment that is empty. The policies: the log start offset is at or past the next segment's base
    (``deleteLogStartOffsetBreachedSegments``), or retention (``retention_breached``: the test's size or time
    retention holds for every segment, which the harness does not weigh). Deleting every segment rolls a new one
    first (a snapshot at the log end); the log start offset moves to the first segment left
    (``maybeIncrementLogStartOffset``: the producer state stays, KAFKA-7190) and each deleted segment's snapshot
    at its base offset goes (``deleteProducerSnapshots``, KAFKA-9393: ``harness.needed_features`` keeps the step from
    earlier versions). A ``log_start_offset`` given moves the log start
    first (a retention the harness does not split into segments, as before this step deleted any)."""
    text = " ".join(str(inp.get(k, "")) for k in ("event", "call", "api"))
    raw = inp.get("log_start_offset", inp.get("new_log_start_offset", inp.get("offset")))
    if raw is None:
        m = re.search(r"(\d+)", text)
        raw = int(m.group(1)) if m else None
    if raw is not None:
        w.log_start_offset = max(w.log_start_offset, integer(raw, "log_start_offset"))
        w.leader = api.move_log_start_offset(w.leader, w.log_start_offset, w.protocol)
    retention = bool(inp.get("retention_breached", False))
    bases = [w.first_segment_base, *[b for b in w.segment_bases if b > w.first_segment_base]]
    end = w.leader.log_end_offset
    deletable: list[int] = []
    for i, base in enumerate(bases):
        nxt = bases[i + 1] if i + 1 < len(bases) else None
        breached = retention or (nxt is not None and nxt <= w.log_start_offset)
        if breached and w.high_watermark >= (end if nxt is None else nxt) and not (nxt is None and base >= end):
            deletable.append(base)
        else:
            break
    if deletable:
        if len(deletable) == len(bases):
            roll(w, {})
            bases.append(end)
        start = bases[len(deletable)]
        w.log_start_offset = max(w.log_start_offset, start)
        w.leader = api.move_log_start_offset(w.leader, w.log_start_offset, w.protocol)
        w.first_segment_base = start
        w.segment_bases = [b for b in w.segment_bases if b > start]
        w.snapshots = tuple((o, p) for o, p in w.snapshots if o not in deletable)
        w.log = [x for x in w.log if _log_offset(x) >= start]
    out = _after(w, _snapshot_view(w))
    out.update({"deleted_segments": len(deletable), "log_start_offset": w.log_start_offset})
    return out


def reopen_log(w: World, inp: dict[str, Any]) -> Observed:
    """``UnifiedLog.close`` snapshots the producer state at the log end; the reopened log loads that
    snapshot (each producer with its last batch), with nothing after it to replay."""
    _snapshot(w)
    w.leader = w.leader._replace(producers=w.snapshots[-1][1])
    return _after(w, _snapshot_view(w))


def log_truncate(w: World, inp: dict[str, Any]) -> Observed:
    """``UnifiedLog.truncateTo(offset)`` and ``truncateFullyAndStartAt(offset[, log_start_offset])``.
    Starting over empties the producer state and deletes every snapshot, the map end offset at the
    new offset. Truncating drops the segments above the offset and rebuilds the producer state
    (``UnifiedLog.rebuildProducerState``, 1eb7644): ``truncateAndReload`` deletes the snapshots above
    the offset and loads the latest one left (none: empty, at the log start); unless the state was
    empty before, the batches from there up to the offset are replayed, with a snapshot where a
    replayed segment of the last two starts; then the map end moves to the offset and a snapshot is
    taken there if it is past the loaded one."""
    call = str(inp.get("call", ""))
    target = integer(inp.get("offset"), "offset")
    if re.search(r"truncateFullyAndStartAt", call) or target < w.log_start_offset:
        w.leader = w.leader._replace(producers=(), log_end_offset=target, verifications=())
        w.snapshots, w.log, w.segment_bases = (), [], []
        w.first_segment_base = target
        w.log_start_offset = integer(inp.get("log_start_offset", target), "log_start_offset")
    elif target < w.leader.log_end_offset:
        if w.log_incomplete:
            raise NotExpressible(f"{call}({target}): the initial state's producers have no batches in the log to "
                                 "rebuild them from")
        if [x for x in w.log if isinstance(x, api.ProduceBatch) and _log_offset(x) < target <= _last_offset(x)]:
            # the segment is cut at the batch holding the offset, which the harness does not follow
            raise NotExpressible(f"{call}({target}): the offset falls inside a batch")
        # isEmptyBeforeTruncation (the map end is past the offset in this branch)
        empty_before = not w.leader.producers
        w.segment_bases = [b for b in w.segment_bases if b <= target]
        w.log = [x for x in w.log if _log_offset(x) < target]
        w.leader, w.snapshots = api.truncate_and_reload(w.leader, w.snapshots, w.log_start_offset, target, w.now,
                                                        w.pid_expiration_ms, w.protocol,
                                                        frozenset(w.unreadable_snapshots))
        w.leader = w.leader._replace(verifications=())
        last_snapshot = w.leader.log_end_offset  # the loaded snapshot's offset, or the log start
        if target > w.leader.log_end_offset and not empty_before:
            last_snapshot = _replay(w, w.leader.log_end_offset, target, last_snapshot)
        w.leader = w.leader._replace(log_end_offset=target)
        if target > last_snapshot:
            _snapshot(w)
    w.high_watermark = min(w.high_watermark, w.leader.log_end_offset)
    w.completed_txns.clear()
    w.reset_open_transactions()
    out = _after(w, _snapshot_view(w))
    out.update({"log_start_offset": w.log_start_offset, "log_end_offset": w.leader.log_end_offset})
    return out


def _log_offset(x: Any) -> int:
    return int(x.offset if isinstance(x, api.MarkerRequest) else x.first_offset)


def _last_offset(b: api.ProduceBatch) -> int:
    count = b.records if b.records > 0 else b.last_sequence - b.base_sequence + 1
    return b.first_offset + max(count, 1) - 1


def _replay(w: World, start: int, target: int, last_snapshot: int) -> int:
    """``loadProducersFromRecords`` over the segments from the map end offset ``start`` to ``target``
    (as a follower's appends); entering a segment that is one of the log's last two (the first
    segment counts), at its base or ``start``, snapshots the map first (``takeSnapshot``: only past
    ``last_snapshot``, the last one taken or loaded). Returns the last snapshot's offset."""
    bases = [w.log_start_offset, *w.segment_bases]
    snapshot_at = set(bases[-2:])
    for i, base in enumerate(bases):
        end = bases[i + 1] if i + 1 < len(bases) else target
        if end <= start or base >= target:
            continue
        begin = max(base, start, w.log_start_offset)
        w.leader = w.leader._replace(log_end_offset=begin)
        if base in snapshot_at and begin > last_snapshot:
            _snapshot(w)
            last_snapshot = begin
        for x in w.log:
            if begin <= _log_offset(x) < min(end, target):
                if isinstance(x, api.MarkerRequest):
                    _, w.leader = api.append_marker(w.leader, x, w.protocol, origin=AppendOrigin.REPLICATION)
                else:
                    _, w.leader = api.append_batch(w.leader, x._replace(origin=int(AppendOrigin.REPLICATION)),
                                                   w.protocol)
    return last_snapshot


def truncate_and_reload(w: World, inp: dict[str, Any]) -> Observed:
    """``truncateAndReload(logStart, logEnd, now)``; ``fresh_manager``: a new ProducerStateManager on
    the same directory (the test's ``recoveredMapping``), whose map end offset starts at 0."""
    if inp.get("fresh_manager"):
        w.leader = w.leader._replace(producers=(), log_end_offset=0, verifications=())
    start = integer(inp.get("log_start_offset", 0), "log_start_offset")
    now = integer(inp.get("now", w.now), "now", w.symbols)
    w.leader, w.snapshots = api.truncate_and_reload(w.leader, w.snapshots, start,
                                                    integer(inp.get("log_end_offset"), "log_end_offset"), now,
                                                    w.pid_expiration_ms, w.protocol, frozenset(w.unreadable_snapshots))
    # the transactions a reload forgets (unreplicatedTxns is cleared: the offset is below the high watermark)
    w.completed_txns.clear()
    w.reset_open_transactions()
    out = _after(w, {})
    out.update(_snapshot_view(w))
    return out
