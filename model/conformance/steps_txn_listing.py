"""The transaction coordinator's admin reads (KIP-664): ``handleDescribeTransactions(id)`` and
``listTransactionStates(producer_ids, states, duration_ms, transactional_id_pattern)`` /
``handleListTransactions(...)``, over the transactional ids the vector's initial state caches (``txn_metadata``,
``txnN`` objects with their ``transactional_id``; ``txn_start_timestamp`` and ``now_ms`` for the duration filter)."""

from __future__ import annotations

from typing import Any

from ..api import txn_listing as api
from ..errors import Errors
from .values import NotExpressible, error_name, integer
from .world import DEFAULT_TID, World

Observed = dict[str, Any]

_NOT_KEPT = "the model abstracts time: TransactionMetadata keeps no transaction timeout or start time"


def describe_transactions(w: World, inp: dict[str, Any]) -> Observed:
    tid = inp.get("transactional_id", DEFAULT_TID)
    if tid is None:
        raise NotExpressible("handleDescribeTransactions(null): IllegalArgumentException, which KafkaApis never reaches")
    d = api.describe_transaction(w.coordinator(str(tid)), str(tid), active=w.coordinator_active)
    out: Observed = {"error": error_name(d.error), "transactional_id": d.transactional_id}
    if d.error == Errors.NONE:
        out.update({"producer_id": d.producer_id, "producer_epoch": d.epoch, "state": api.STATE_NAMES[d.state],
                    "partitions": sorted(w.partitions.name(p) for p in d.partitions),
                    "__why__": {"transaction_timeout_ms": _NOT_KEPT, "transaction_start_time_ms": _NOT_KEPT}})
    return out


def _ints(v: Any, what: str) -> frozenset[int]:
    if v is None:
        return frozenset()
    if not isinstance(v, list):
        raise NotExpressible(f"{what} {v!r}: give a list")
    return frozenset(integer(x, what) for x in v)


def list_transactions(w: World, inp: dict[str, Any]) -> Observed:
    states = inp.get("states", [])
    if not isinstance(states, list):
        raise NotExpressible(f"states {states!r}: give a list of state names")
    pattern = inp.get("transactional_id_pattern")
    filters = api.ListFilters(_ints(inp.get("producer_ids"), "producer_ids"), tuple(map(str, states)),
                              integer(inp.get("duration_ms", -1), "duration_ms"),
                              None if pattern is None else str(pattern))
    # a broker that owns no __transaction_state partition holds none of the vector's transactions
    cache = {} if w.lookup_error == Errors.NOT_COORDINATOR else w.txns
    if filters.duration_ms >= 0:
        unknown = sorted(t for t, m in cache.items() if m.exists and t not in w.txn_start_ms)
        if unknown:
            raise NotExpressible(f"duration_ms with no txn_start_timestamp for {', '.join(unknown)}")
    a = api.list_transactions(cache, filters, w.protocol, start_ms=w.txn_start_ms, now_ms=w.now, loading=w.loading,
                              active=w.coordinator_active)
    out: Observed = {"error": error_name(a.error), "exception": a.exception or None, "throws": bool(a.exception)}
    if a.error == Errors.NONE:
        out.update({"transactional_ids": [t.transactional_id for t in a.transactions],
                    "transactions": {t.transactional_id: {"producer_id": t.producer_id,
                                                          "state": api.STATE_NAMES[t.state]} for t in a.transactions},
                    "unknown_state_filters": list(a.unknown_state_filters)})
    return out
