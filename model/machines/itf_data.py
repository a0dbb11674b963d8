"""Typed fields for ITF traces (``Machine.itf_fields``) of the three Kafka machines.

``fields`` describes logs, requests and producer-state entries in one-line strings for people
(``"pid 1: epoch 0, batches [(0, 0)] ..."``); an ITF consumer (Quint, Apalache, itf-py, a test
harness replaying a trace against Kafka) needs the data. Here every such field becomes records
(dicts keyed by the NamedTuple's own field names), with enum codes as their names, and the other
fields stay as ``fields`` gives them, so the variables are the same in both files.
"""

from __future__ import annotations

from typing import Any

from ..errors import error_name
from ..state import BATCH_STATUS_NAMES
from ..transactions.codes import TxnResult, TxnState


def record(value: Any, **names: Any) -> dict[str, Any]:
    """A NamedTuple as a record, nested NamedTuples and tuples of them included; ``names``
    replaces fields (an enum code by its name)."""
    out: dict[str, Any] = {}
    for key, item in value._asdict().items():
        out[key] = names[key] if key in names else data(item)
    return out


def data(value: Any) -> Any:
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return record(value)
    if isinstance(value, tuple):
        return [data(v) for v in value]
    return value


def _txn_state(code: int) -> str:
    try:
        return TxnState(code).name
    except ValueError:
        return str(code)


def idempotent_fields(machine: Any, s: Any) -> dict[str, Any]:
    """kafka.idempotent_produce (``s`` unpacked: an IdempotentState)."""
    out = dict(machine.fields(s))
    part = s.partition
    out["leader.log"] = [record(r) for r in part.log]
    out["leader.producers"] = [record(e) for e in part.producers]
    for c, client in enumerate(s.clients):
        out[f"client[{c}].batches"] = [record(b, status=BATCH_STATUS_NAMES[b.status])
                                       for b in client.batches]
    if s.follower:
        out["follower.producers"] = [record(e) for e in s.follower[0].producers]
    out["network.requests"] = [record(r) for r in s.requests]
    out["network.responses"] = [record(r, error=error_name(r.error)) for r in s.responses]
    return out


def log_record(log: Any) -> dict[str, Any]:
    """A __transaction_state record; the client's transaction version only when it is not 0 (the record keeps it
    since session 27; traces without TV2 read as before)."""
    out = record(log, state=_txn_state(log.state))
    if not out.get("tv"):
        out.pop("tv", None)
    return out


def init_pid_fields(machine: Any, s: Any) -> dict[str, Any]:
    """kafka.init_producer_id."""
    out = dict(machine.fields(s))
    m, log = s.metadata, s.txn_log
    out["coordinator.metadata"] = record(m, state=_txn_state(m.state)) if m.exists else {"exists": False}
    out["coordinator.pending"] = [record(p, metadata=record(p.metadata, state=_txn_state(p.metadata.state)))
                                  for p in s.pending]
    out["txn_log.record"] = log_record(log) if log.exists else {"exists": False}
    for c, client in enumerate(s.clients):
        out[f"client[{c}].request"] = {"producer_id": client.req_producer_id, "epoch": client.req_epoch}
    out["network.requests"] = [record(r) for r in s.requests]
    out["network.responses"] = [record(r, error=error_name(r.error)) for r in s.responses]
    return out


def pipeline_fields(machine: Any, s: Any, partition_names: tuple[str, ...], entry_kind: Any) -> dict[str, Any]:
    """kafka.eos_pipeline."""
    out = dict(machine.fields(s))
    for partition, (name, log) in enumerate((("output", s.output), ("offsets", s.offsets_log))):
        out[f"{name}.log"] = [record(e, kind=entry_kind(e.kind).name) for e in log]
        for tid, e in enumerate(s.leaders[partition]):
            out[f"{name}.producer_state_pid{machine.pid_of(tid)}"] = record(e)
    out["group.pending"] = [record(e) for e in s.group.pending]
    out["coordinator.stale_markers"] = [record(x, result=TxnResult(x.result).name,
                                               partition=partition_names[x.partition])
                                        for x in s.stale_markers]
    out["network.produce"] = [record(r) for r in s.produce_requests]
    out["network.end_txn"] = [record(r, result=TxnResult(r.result).name) for r in s.endtxn_requests]
    return out
