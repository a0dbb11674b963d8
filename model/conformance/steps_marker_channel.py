"""Steps for the coordinator's marker queues (``TransactionMarkerChannelManager``, ``model.transactions.marker_channel``):
queueing a transaction's markers by leader, generating the WriteTxnMarkers requests, their answers, an emigrating
``__transaction_state`` partition, and what the mocked cache, leaders and completion append answer."""

from __future__ import annotations

import weakref
from typing import Any

from ..api.coordinator import CoordinatorState, complete_transaction
from ..transactions import marker_channel as mc
from ..transactions.codes import Errors, TxnResult, TxnState
from ..transactions.metadata import TxnMeta
from .values import NotExpressible, error_code, error_name, integer
from .world import DEFAULT_TID, World

Observed = dict[str, Any]


class _WorldEnv(mc.Env):
    """The channel's view of the conformance world; the leaders and the completion append's answers are the mocks the
    vector gives (a list is answered in order, its last answer repeating)."""

    def __init__(self, w: World) -> None:
        self.w = w
        self.channel = mc.Channel(by_identity="kafka-16352" not in w.protocol.lacks)
        self.leaders: dict[int, list[int | None]] = {}
        self.append_answers: list[int] = []
        self.requests: dict[tuple[int, int], mc.Request] = {}
        self.generations = 0
        #: the brokers the leader mocks name and the __transaction_state partitions markers were queued under: a
        #: queue's view lists each (Kafka answers 0 for a partition the queue never held, and no queue at all for a
        #: broker nothing was queued for)
        self.brokers_named: set[int] = set()
        self.txn_partitions: set[int] = set()

    def leader(self, partition: int) -> int | None:
        answers = self.leaders.get(partition)
        if not answers:
            raise NotExpressible(f"no leader given for {self.w.partitions.name(partition)}")
        return answers.pop(0) if len(answers) > 1 else answers[0]

    def lookup(self, tid: str) -> tuple[int, int]:
        if self.w.loading:
            return int(Errors.COORDINATOR_LOAD_IN_PROGRESS), -1
        epoch = self.w.coordinator_epoch
        return self.w.lookup_error, 0 if epoch is None else epoch

    def metadata(self, tid: str) -> TxnMeta | None:
        meta = self.w.txns.get(tid)
        return meta if meta is not None and meta.exists else None

    def set_metadata(self, tid: str, meta: TxnMeta) -> None:
        self.w.txns[tid] = meta

    def append_completion(self, pending: mc.Pending, meta: TxnMeta) -> int:
        answer = self.append_answers.pop(0) if len(self.append_answers) > 1 else \
            (self.append_answers[0] if self.append_answers else int(Errors.NONE))
        if answer == Errors.NONE:
            # the test's mock completes the transition (completeTransitionTo), then calls back NONE
            _, st = complete_transaction(CoordinatorState(meta, self.w.next_pid), self.w.protocol)
            self.w.txns[pending.transactional_id] = st.metadata
        return answer


_ENVS: weakref.WeakKeyDictionary[World, _WorldEnv] = weakref.WeakKeyDictionary()


def _env(w: World) -> _WorldEnv:
    env = _ENVS.get(w)
    if env is None:
        env = _ENVS[w] = _WorldEnv(w)
    return env


def _leader(x: Any) -> int | None:
    if x is None:
        return None
    if x == "noNode":
        return mc.NO_NODE
    return integer(x, "leader")


def _read_mocks(w: World, env: _WorldEnv, inp: dict[str, Any]) -> None:
    for name, x in (inp.get("leaders") or {}).items():
        answers = [_leader(a) for a in (x if isinstance(x, list) else [x])]
        env.leaders[w.partitions.id(str(name))] = answers
        env.brokers_named.update(a for a in answers if a is not None and a != mc.NO_NODE)
    if "completion_append_results" in inp:
        env.append_answers = [error_code(str(e)) for e in inp["completion_append_results"]]


def _queue(env: _WorldEnv, broker: int | None) -> Observed | None:
    ch = env.channel
    total = ch.num_markers(broker)
    if total is None:
        return None
    return {"total": total, "by_txn_partition": {str(t): ch.num_markers(broker, t) for t in sorted(env.txn_partitions)}}


def _view(w: World, env: _WorldEnv, tid: str | None = None) -> Observed:
    ch = env.channel
    out: Observed = {
        "num_txns_with_pending_markers": len(ch.pending),
        "queue_for_broker": {str(b): _queue(env, b) for b in sorted(set(ch.brokers) | env.brokers_named)},
        "queue_for_unknown_broker": _queue(env, None),
        "completion_appends": [{"transactional_id": t, "coordinator_epoch": e} for t, e in ch.appends],
        "transactions": {t: w.meta_view(m) for t, m in sorted(w.txns.items())},
    }
    if tid is not None:
        out["state_after"] = w.meta_view(w.txns[tid]) if tid in w.txns else {"exists": False}
    return out


def add_txn_markers_to_send(w: World, inp: dict[str, Any]) -> Observed:
    """``addTxnMarkersToSend(coordinatorEpoch, result, metadata, transit)``: ``transaction_metadata`` (when given) is
    the metadata the cache holds; ``leaders`` what the metadata cache answers for each partition (a broker id,
    "noNode", null, or a list of successive answers); ``check_completion: false`` stands for a call whose own
    ``maybeWriteTxnCompletion`` has not run yet (another thread holds the metadata's lock)."""
    env = _env(w)
    tid = str(inp.get("transactional_id", DEFAULT_TID))
    if inp.get("transaction_metadata") is not None:
        w.txns[tid] = w.meta_from({**inp["transaction_metadata"], "transactional_id": tid})
    _read_mocks(w, env, inp)
    meta = env.metadata(tid)
    if meta is None:
        raise NotExpressible(f"addTxnMarkersToSend: no metadata for {tid!r}")
    txn_partition = integer(inp.get("txn_topic_partition", 0), "txn_topic_partition")
    env.txn_partitions.add(txn_partition)
    result = str(inp.get("result", "COMMIT"))
    if result != TxnResult(1 if meta.state == TxnState.PREPARE_COMMIT else 0).name:
        raise NotExpressible(f"addTxnMarkersToSend result {result} for a {meta.state} transaction")
    mc.add_txn_markers_to_send(env.channel, env, tid, txn_partition,
                               integer(inp.get("coordinator_epoch", 0), "coordinator_epoch"), meta,
                               check_completion=inp.get("check_completion", True) is not False)
    return _view(w, env, tid)


def _entry(w: World, e: mc.Entry) -> Observed:
    return {"producer_id": e.producer_id, "producer_epoch": e.producer_epoch,
            "coordinator_epoch": e.pending.coordinator_epoch, "result": TxnResult(e.pending.result).name,
            "partitions": sorted(w.partitions.name(p) for p in e.partitions)}


def generate_requests(w: World, inp: dict[str, Any]) -> Observed:
    """``generateRequests()``: one WriteTxnMarkers request per broker (by broker id), each with its entries."""
    env = _env(w)
    _read_mocks(w, env, inp)
    requests = mc.generate_requests(env.channel, env)
    env.generations += 1
    for r in requests:
        env.requests[(env.generations, r.broker)] = r
    return {**_view(w, env), "generation": env.generations,
            "requests": {str(r.broker): [_entry(w, e) for e in r.entries] for r in requests}}


def _producer_id(key: Any) -> int:
    """A producer id as a JSON object's key (a string of digits)."""
    try:
        return int(str(key))
    except ValueError:
        raise NotExpressible(f"errors by producer id: {key!r} is not a producer id") from None


def complete_request(w: World, inp: dict[str, Any]) -> Observed:
    """A request's answer reaching ``TransactionMarkerRequestCompletionHandler.onComplete``: the request of
    ``generation`` (the nth generateRequests of the vector) to ``broker``; ``disconnected: true`` or ``errors`` by
    producer id and partition."""
    env = _env(w)
    _read_mocks(w, env, inp)
    key = (integer(inp.get("generation", env.generations), "generation"), integer(inp.get("broker", 0), "broker"))
    request = env.requests.get(key)
    if request is None:
        raise NotExpressible(f"no request of generation {key[0]} to broker {key[1]}")
    errors = None if inp.get("disconnected") else {
        _producer_id(pid): {w.partitions.id(str(p)): error_code(str(e)) for p, e in by_part.items()}
        for pid, by_part in (inp.get("errors") or {}).items()}
    try:
        mc.on_response(env.channel, env, request, errors)
    except ValueError as exc:
        return {"error": "EXCEPTION", "exception": "IllegalStateException", "message": str(exc)}
    return _view(w, env)


def remove_markers(w: World, inp: dict[str, Any]) -> Observed:
    """``removeMarkersForTxnTopicPartition(txnTopicPartition)``."""
    env = _env(w)
    mc.remove_markers_for_txn_topic_partition(env.channel, integer(inp.get("txn_topic_partition", 0),
                                                                   "txn_topic_partition"))
    return _view(w, env)


def maybe_write_completion(w: World, inp: dict[str, Any]) -> Observed:
    """``maybeWriteTxnCompletion(transactionalId)`` (the one a delayed addTxnMarkersToSend ends with)."""
    env = _env(w)
    tid = str(inp.get("transactional_id", DEFAULT_TID))
    mc.maybe_write_completion(env.channel, env, tid)
    return _view(w, env, tid)


def cache_answers(w: World, inp: dict[str, Any]) -> Observed:
    """What the mocked ``getTransactionState`` answers from now on: an ``error`` (NOT_COORDINATOR,
    COORDINATOR_LOAD_IN_PROGRESS) or the metadata at ``coordinator_epoch``."""
    env = _env(w)
    err = error_code(str(inp.get("error", "NONE")))
    w.loading = err == Errors.COORDINATOR_LOAD_IN_PROGRESS
    w.lookup_error = 0 if w.loading else err
    if "coordinator_epoch" in inp:
        w.coordinator_epoch = integer(inp["coordinator_epoch"], "coordinator_epoch")
    return {"error": error_name(err), **_view(w, env)}
