"""``kafka.idempotent_produce``'s steps as message sequence chart events (``checker.chart``).

Lanes: ``producer[c]`` (the idempotent producer client ``client[c]``), ``leader`` (the
partition leader) and ``follower`` (the replica that takes over on a failover). Produce requests
and responses are arrows; a response the network loses, or one left on a connection the client
closed after a request timeout, is a lost message; injected transient errors
(NOT_ENOUGH_REPLICAS), DeleteRecords/retention, failovers and timeouts are faults; changes of the
producer's epoch, producer id, acknowledgements and the leader's log and producer state are state
changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from eoscheck.checker.chart import (
    ChartEvent,
    fault,
    message_events,
    state,
    state_events,
    step,
)

from ..errors import error_name
from ..producer.client import OUTCOME_NAMES
from ..state import ProduceRequest, ProduceResponse

LEADER = "leader"

#: fields whose changes the arrows and marks already tell, or that change on nearly every step
_SKIP = ("network.", "faults.", "allocator.")
_SKIP_CLIENT = (".batches", ".sent", ".next_seq")


def producer(c: int) -> str:
    return f"producer[{c}]"


def request_label(r: ProduceRequest) -> str:
    return f"Produce r{r.record} epoch {r.epoch} seq {r.seq}"


def response_label(r: ProduceResponse) -> str:
    return f"{error_name(r.error)} r{r.record}"


def lanes(clients: int) -> list[str]:
    return [*(producer(c) for c in range(clients)), LEADER, "follower", "time"]


def chart_step(machine: Any, st: tuple, before: Any, after: Any) -> Sequence[ChartEvent]:
    name = st[0]
    requests = message_events(name, before.requests, after.requests, lambda r: (producer(r.client), LEADER),
                              request_label, ("HandleProduce",))
    responses = message_events(name, before.responses, after.responses,
                               lambda r: (LEADER, producer(r.client)), response_label, ("HandleProduceResponse",))
    events: list[ChartEvent] = [*requests[0]]
    old_faults, new_faults = before.faults, after.faults
    if new_faults.transient_errors > old_faults.transient_errors:
        events.append(fault(LEADER, "transient error injected (NOT_ENOUGH_REPLICAS)"))
    if new_faults.delete_records > old_faults.delete_records:
        events.append(fault(LEADER, f"DeleteRecords up to offset {st[1]}"))
    if name == "LeaderFailover":
        events.append(fault(LEADER, "leader failover: the follower takes over"
                                    + (" (state rebuilt from the log)" if st[1] else "")))
    if name == "RequestTimeout":
        events.append(fault(producer(st[1]), "request timeout: closes the connection"))
    if name == "ExpireBatch":
        events.append(fault(producer(st[1]), f"r{st[2]} expires (delivery.timeout.ms)"))
    events += [*responses[0], *requests[1], *responses[1]]
    if name == "Send":
        events.append(state(producer(st[1]), f"the application hands it r{before.clients[st[1]].sent}"))
    if name == "HandleProduceResponse":
        events.append(state(producer(st[1]), f"r{st[2]}: {OUTCOME_NAMES[st[4]]}"))
    rename = {f"client[{c}]": producer(c) for c in range(machine.n_clients)}
    skip = [*_SKIP, *(f"client[{c}]{f}" for c in range(machine.n_clients) for f in _SKIP_CLIENT)]
    events.extend(state_events(machine.fields(before), machine.fields(after), rename, skip))
    if not events:
        lane = producer(st[1]) if machine.actions.get(name, ())[:1] == ("client",) else LEADER
        events.append(step(lane, name))
    return events
