"""kafka.eos's failed send() calls (``send_errors``, ``eos_send_errors``): the client's reaction per
version (KAFKA-9279, 3.2.0) and what exploration reaches."""

from __future__ import annotations

from typing import Any

import pytest
from eoscheck.checker.explore import explore
from eoscheck.checker.explore.options import ExploreOptions
from eoscheck.model.machines.eos import EosMachine, machine
from eoscheck.model.producer import transactional as tx
from eoscheck.model.protocol import VARIANTS, decision_doc
from eoscheck.model.state import QUEUED, TXN_ABORTABLE, TXN_IN_TXN, TXN_READY


def _in_txn(m: EosMachine) -> Any:
    p = m.initial_producer(0, True)._replace(phase=TXN_READY, producer_id=0, epoch=0)
    return tx.begin_transaction(p, 1, 0)


@pytest.mark.parametrize("aborts", [False, True])
def test_the_failed_record_is_dropped_and_only_the_fixed_client_aborts(aborts: bool) -> None:
    m = machine("kafka-3.3-3.5", send_errors=1)
    p = _in_txn(m)
    assert p.phase == TXN_IN_TXN and all(part.batches[0].status == QUEUED for part in p.parts)
    out = tx.send_failed(p, 0, aborts=aborts)
    assert out is not None and out.parts[0].batches == () and out.parts[0].failed == 1
    assert out.parts[1] == p.parts[1]
    assert out.phase == (TXN_ABORTABLE if aborts else TXN_IN_TXN)
    assert bool(out.bump_after_abort) == aborts  # 3.2.0: epochBumpRequired where the client can bump
    assert tx.send_failed(out, 0, aborts=aborts) is None  # nothing queued is left on partition 0


def test_the_switch_is_on_from_3_2() -> None:
    off = {"kafka-0.11.0.0", "kafka-1.0.2-2.3", "kafka-2.4.1", "kafka-2.6", "kafka-2.7-2.8", "kafka-3.0-3.2",
           "kafka-3.0-3.1"}
    on = {"kafka-3.2", "kafka-3.3-3.5", "kafka-3.0-3.5", "kafka-3.6-3.7", "kafka-3.8-3.9", "kafka-4.0"}
    assert not any(VARIANTS[v].protocol.client_send_error_aborts for v in off)
    assert all(VARIANTS[v].protocol.client_send_error_aborts for v in on)
    assert "3.2.x" in VARIANTS["kafka-3.0-3.2"].doc and "KAFKA-9279" in decision_doc("client_send_error_aborts")


def test_without_the_bound_the_fault_is_neither_listed_nor_shown() -> None:
    off = machine("kafka-2.7-2.8")
    assert "SendFails" not in off.actions
    assert "faults.send_errors" not in off.fields(next(iter(off.init_states())))
    assert "SendFails" in machine("kafka-2.7-2.8", send_errors=1).actions


@pytest.mark.parametrize(("variant", "switches", "verdict"),
                         [("kafka-2.7-2.8", {}, {"NoLoss": 9}), ("kafka-3.0-3.2", {}, {"NoLoss": 9}),
                          ("kafka-2.7-2.8", {"client_send_error_aborts": True}, {}), ("kafka-3.3-3.5", {}, {})])
def test_kafka_9279_is_the_switch_that_stops_the_commit(variant: str, switches: dict[str, Any],
                                                        verdict: dict[str, int]) -> None:
    base = machine(variant, send_errors=1)
    m = EosMachine(VARIANTS[variant].protocol.with_(**switches), base.bounds)
    r = explore(m, ExploreOptions(properties=("NoLoss",)))
    assert {v.property: len(v.trace) for v in r.violations} == verdict
    if verdict:  # the failed send comes before the commit that loses its record
        actions = [t.step[0] for t in r.violations[0].trace if t.step is not None]
        assert actions.index("SendFails") < actions.index("EndTxn") == len(actions) - 1
