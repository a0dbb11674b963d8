"""kafka.eos's Tick on projections of the parts (perf21c): the clock's guard sees each producer's
``awaiting`` (connection and records in flight per partition) and the channels' ``waiting`` / ``busy``,
and must decide exactly as the whole-part formula did."""

from __future__ import annotations

from typing import Any

from eoscheck.checker.compose.testing import reachable_steps
from eoscheck.model.machines.eos import machine
from eoscheck.model.state import INFLIGHT


def _quiet_whole(v: Any) -> bool:
    """Tick's guard as it read whole parts before the projections (session 20's ``_quiet``)."""
    def awaited(client: int, partition: int, connection: int, record: int) -> bool:
        part = v.producer[client].parts[partition]
        return connection == part.connection and any(b.record == record and b.status == INFLIGHT
                                                     for b in part.batches)

    return (not v.responses and not any(awaited(m.client, m.partition, m.connection, m.record) for m in v.requests)
            and not any(awaited(p.request.client, i, p.request.connection, p.request.record)
                        for i, leader in enumerate(v.leader) for p in leader.pending)
            and not v.idem_requests and not v.idem_responses)


def test_tick_fires_exactly_where_the_whole_part_guard_holds() -> None:
    # lost responses and a delivery timeout leave requests in flight nobody awaits any more (a tick
    # may pass over them) beside awaited ones (it may not)
    m = machine("kafka-4.0", transactions=1, lost_responses=1, produce_timeouts=1, max_ticks=2)
    top = m.bounds["max_ticks"]
    sources: set[tuple] = set()
    ticks: set[tuple] = set()
    for s, step, _ in reachable_steps(m):
        sources.add(s)
        if step[0] == "Tick":
            ticks.add(s)
    late = quiet = busy = 0
    for s in sources:
        v = m.view(s)
        if v.now >= top:
            continue
        whole = _quiet_whole(v)
        assert (s in ticks) == whole, (v.requests, v.responses, v.producer)
        quiet += whole
        busy += not whole
        late += whole and bool(v.requests)
    assert quiet and busy and late  # both answers, and a tick over a request nobody awaits

