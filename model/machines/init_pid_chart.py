"""``kafka.init_producer_id``'s steps as message sequence chart events (``checker.chart``).

Lanes: ``producer[c]`` (the transactional producer client ``client[c]``) and ``coordinator``
(the transaction coordinator, its pending transaction-log append, the log record and the producer
id allocator). InitProducerId requests and responses are arrows; a lost response, or one left
behind by a request timeout or a coordinator failover, is a lost message; failovers, transactional
id expiry, abortable errors and timeouts are faults; the producer's and the coordinator's state
changes are marked on their lanes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from eoscheck.checker.chart import ChartEvent, fault, message_events, state_events, step

from ..errors import error_name
from ..state import InitPidRequest, InitPidResponse

COORDINATOR = "coordinator"

_SKIP = ("network.", "faults.")
_SKIP_CLIENT = (".request", ".attempt")
_FAULTS = {
    "CoordinatorFailover": "coordinator failover: the new coordinator loads the transaction log",
    "ExpireTransactionalId": "the transactional id expires",
}


def producer(c: int) -> str:
    return f"producer[{c}]"


def request_label(r: InitPidRequest) -> str:
    return f"InitProducerId #{r.attempt} (pid {r.producer_id}, epoch {r.epoch})"


def response_label(r: InitPidResponse) -> str:
    return f"{error_name(r.error)} #{r.attempt} (pid {r.producer_id}, epoch {r.epoch})"


def lanes(clients: int) -> list[str]:
    return [*(producer(c) for c in range(clients)), COORDINATOR]


def chart_step(machine: Any, st: tuple, before: Any, after: Any) -> Sequence[ChartEvent]:
    name = st[0]
    requests = message_events(name, before.requests, after.requests,
                              lambda r: (producer(r.client), COORDINATOR), request_label,
                              ("HandleInitProducerId",))
    responses = message_events(name, before.responses, after.responses,
                               lambda r: (COORDINATOR, producer(r.client)), response_label,
                               ("HandleInitProducerIdResponse",))
    events: list[ChartEvent] = [*requests[0], *responses[0]]
    if name in _FAULTS:
        events.append(fault(COORDINATOR, _FAULTS[name]))
    elif name == "RequestTimeout":
        events.append(fault(producer(st[1]), "request timeout"))
    elif name == "AbortableError":
        events.append(fault(producer(st[1]), f"abortable error: aborts (EndTxn -> {error_name(st[2])})"))
    elif name == "RestartInstance":
        events.append(fault(producer(st[1]), "the application restarts the producer"))
    elif name in ("AddPartitionsToTxn", "EndTxn"):
        events.append(step(producer(st[1]), f"{name} -> {error_name(st[2])}"))
    events += [*requests[1], *responses[1]]
    clients = range(len(after.clients))
    rename = {**{f"client[{c}]": producer(c) for c in clients}, "coordinator": COORDINATOR,
              "txn_log": COORDINATOR, "allocator": COORDINATOR}
    skip = [*_SKIP, *(f"client[{c}]{f}" for c in clients for f in _SKIP_CLIENT)]
    events.extend(state_events(machine.fields(before), machine.fields(after), rename, skip))
    if not events:
        events.append(step(producer(st[1]) if machine.actions.get(name, ())[:1] == ("client",)
                           else COORDINATOR, name))
    return events

