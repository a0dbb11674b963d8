"""``kafka.eos_pipeline``'s steps as message sequence chart events (``checker.chart``).

Lanes: ``app[i]`` (one consume-transform-produce instance: its consumer and transactional
producer), ``txn coordinator`` (transaction metadata, the coordinator's epoch and log),
``output leader`` (the output partition's leader) and ``group coordinator`` (the group and the
leader of its ``__consumer_offsets`` partition). The model handles most requests in one step
(InitProducerId, AddPartitionsToTxn, OffsetFetch, TxnOffsetCommit, EndTxn, WriteTxnMarker): each
is an arrow sent and received in its step. Produce requests, EndTxn requests given up on and
markers of a previous coordinator stay in flight: arrows across steps. Timeouts, session
timeouts and coordinator failovers are faults.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from eoscheck.checker.chart import (
    ChartEvent,
    fault,
    message_events,
    receive,
    send,
    state_events,
    step,
)

from ..transactions.codes import TxnResult

TXN = "txn coordinator"
OUTPUT = "output leader"
GROUP = "group coordinator"
#: partition number (PARTITION_NAMES: output, __consumer_offsets) -> the lane of its leader
LEADER_OF = (OUTPUT, GROUP)
#: a WriteTxnMarker step names its partition
LEADER_NAMED = {"output": OUTPUT, "__consumer_offsets": GROUP}

#: steps that are one request handled at once: action -> (its target lane, request name)
_AT_ONCE = {
    "InitProducerId": (TXN, "InitProducerId"),
    "AddPartitionsToTxn": (TXN, "AddPartitionsToTxn"),
    "AddOffsetsToTxn": (TXN, "AddOffsetsToTxn"),
    "OffsetFetch": (GROUP, "OffsetFetch"),
    "TxnOffsetCommit": (GROUP, "TxnOffsetCommit"),
    "EndTxn": (TXN, "EndTxn"),
}
_FAULTS = {
    "ProduceTimesOut": "delivery timeout: the client aborts; its produce stays in flight",
    "EndTxnTimesOut": "request timeout: EndTxn given up on, still in flight",
    "SessionTimeout": "session timeout: the group evicts this member",
}


def lanes(instances: int) -> list[str]:
    return [*(f"app[{i}]" for i in range(instances)), TXN, OUTPUT, GROUP]


def _result(r: int) -> str:
    return "COMMIT" if r == TxnResult.COMMIT else "ABORT"


def chart_step(machine: Any, st: tuple, before: Any, after: Any) -> Sequence[ChartEvent]:
    name = st[0]
    produce = message_events(name, before.produce_requests, after.produce_requests,
                             lambda r: (f"app[{r.instance}]", OUTPUT),
                             lambda r: f"Produce value {r.value} (epoch {r.epoch})", ("ProduceArrives",))
    end_txn = message_events(name, before.endtxn_requests, after.endtxn_requests,
                             lambda r: (f"app[{r.instance}]", TXN),
                             lambda r: f"EndTxn({_result(r.result)}) (epoch {r.epoch})", ("StaleEndTxnArrives",))
    markers = message_events(name, before.stale_markers, after.stale_markers,
                             lambda m: (TXN, LEADER_OF[m.partition]),
                             lambda m: f"{_result(m.result)} marker (coordinator epoch {m.coordinator_epoch})",
                             ("StaleTxnMarkerArrives",))
    events: list[ChartEvent] = [*produce[0], *end_txn[0], *markers[0]]
    label = machine.format_step(st)
    key: Hashable  # a send and its receive share one, of a shape per kind of event
    if name in _AT_ONCE:
        target, request = _AT_ONCE[name]
        app = f"app[{st[1]}]"
        key = ("at once", name, st)
        rest = ", ".join(f"{k}={v}" for k, v in machine.step_params(st).items() if k != "instance")
        events += [send(app, target, f"{request}({rest})", key), receive(target, request, key)]
    elif name == "WriteTxnMarker":
        key = ("at once", st)
        target = LEADER_NAMED[st[2]]
        events += [send(TXN, target, label, key), receive(target, "marker", key)]
    elif name in _FAULTS:
        events.append(fault(f"app[{st[1]}]", _FAULTS[name]))
    elif name == "TxnCoordinatorFailover":
        events.append(fault(TXN, "coordinator failover: the new coordinator loads the log"))
    elif name == "AbortTimedOutTransaction":
        events.append(fault(TXN, "transaction.timeout.ms: the coordinator aborts"))
    events += [*produce[1], *end_txn[1], *markers[1]]
    rename = {"txn": TXN, "coordinator": TXN, "output": OUTPUT, "offsets": GROUP, "group": GROUP}
    rename.update({f"txn[{t}]": TXN for t in range(len(after.txns))})
    events.extend(state_events(machine.fields(before), machine.fields(after), rename,
                               ("network.", "ghost.", "coordinator.stale_markers")))
    if not events:
        events.append(step(f"app[{st[1]}]" if machine.actions.get(name, ())[:1] == ("instance",) else TXN,
                           name))
    return events
