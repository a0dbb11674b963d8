"""``kafka.eos``'s transactional-id expiry for data producers and the zombie's re-initialisation
(``model/machines/eos_txn_id_expiry.py``): KAFKA-18019's duplicate is reachable with the 2.5-3.9 client
and not with the 4.0 one. Pinned on the pure functions, on reachable steps of small configurations
and on the two committed specs' explorations."""

from __future__ import annotations

from typing import Any

import pytest
from eoscheck.checker.compose.testing import reachable_steps
from eoscheck.model.coordinator.txn_log import NO_METADATA
from eoscheck.model.errors import Errors
from eoscheck.model.machines.eos import machine
from eoscheck.model.machines.eos_txn_id_expiry import ACTIONS, adopt, may_expire
from eoscheck.model.producer import transactional as tx
from eoscheck.model.state import TXN_BUMP, TXN_FATAL, TXN_FENCED, TXN_READY, TxnMetadata
from eoscheck.model.transactions.codes import NO_PENDING, TxnState

IPM = int(Errors.INVALID_PRODUCER_ID_MAPPING)
#: the committed pair's bounds (specs/eos-kafka-18019-*)
PAIR = {"input_records": 1, "transactions": 2, "restarts": 1, "txn_id_expirations": 1}


def _meta(state: TxnState, pending: int = NO_PENDING) -> TxnMetadata:
    return TxnMetadata(True, 0, -1, 1, -1, int(state), False)._replace(pending_state=pending)


@pytest.mark.parametrize("state", list(TxnState))
def test_an_id_may_expire_only_when_idle_with_nothing_pending(state: TxnState) -> None:
    idle = state in (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)
    assert may_expire(_meta(state)) == idle
    assert not may_expire(_meta(state, pending=int(TxnState.ONGOING)))
    assert not may_expire(NO_METADATA)


def test_the_bound_at_zero_removes_every_action_and_restarts_gate_the_zombie() -> None:
    assert not ACTIONS & set(machine("kafka-3.6-3.9", restarts=1).actions)
    expiring = set(machine("kafka-3.6-3.9", txn_id_expirations=1).actions)
    assert ACTIONS & expiring == {"ExpireDataTransactionalId"}
    assert ACTIONS <= set(machine("kafka-3.6-3.9", txn_id_expirations=1, restarts=1).actions)


def test_adopt_keeps_the_reinitialised_pair_and_position_and_the_replaced_ghosts() -> None:
    replaced = tx.with_producer_id(tx.new_producer(2), 0, 1)._replace(phase=TXN_READY, txn=3, committed=0b111,
                                                                     inputs=(0, 1, 2), position=3)
    zombie = tx.with_producer_id(tx.new_producer(2), 5, 0)._replace(phase=TXN_READY, position=1)
    live = adopt(replaced, zombie)
    assert (live.phase, live.producer_id, live.epoch, live.position) == (TXN_READY, 5, 0, 1)
    assert (live.txn, live.committed, live.inputs) == (3, 0b111, (0, 1, 2))
    assert all(p.connection == q.connection + 1 and (p.producer_id, p.epoch, p.next_seq) == (5, 0, 0)
               for p, q in zip(live.parts, replaced.parts))


def _zombie_answers(variant: str, **switches: Any) -> list[tuple[Any, Any, Any]]:
    m = machine(variant, **PAIR)
    if switches:
        from eoscheck.model.machines.eos import EosMachine
        m = EosMachine(m.protocol.with_(**switches), m.bounds)
    return [(m, s, t) for s, step, t in reachable_steps(m) if step[0] == "ZombieAddPartitionsToTxn"]


@pytest.mark.parametrize(("variant", "switches", "after_expiry"),
                         [("kafka-3.6-3.9", {}, TXN_BUMP), ("kafka-3.6-3.9", {"client_pid_mapping_fatal": True}, TXN_FATAL),
                          ("kafka-4.0", {"transaction_version": "tv1"}, TXN_FATAL)])
def test_the_zombies_add_partitions_is_fenced_while_the_id_exists_and_unmapped_after_expiry(
        variant: str, switches: dict[str, Any], after_expiry: int) -> None:
    answers = _zombie_answers(variant, **switches)
    seen = set()
    for m, s, t in answers:
        before, after = m.view(s), m.view(t)
        zombie = after.zombie[0]
        meta = before.txn[0]
        if meta.exists and meta.producer_id == zombie.producer_id:
            # the new instance's InitProducerId bumped the epoch past the zombie's
            assert (zombie.phase, zombie.fatal_error) == (TXN_FENCED, int(Errors.PRODUCER_FENCED))
            seen.add("fenced")
        else:  # expired, or recreated for another producer id (the instance a re-initialised zombie replaced)
            assert zombie.fatal_error == (IPM if after_expiry == TXN_FATAL else 0) and zombie.phase == after_expiry
            # it tries the record its own position names again: KAFKA-18019's "in its view, that is next"
            assert zombie.position == before.zombie[0].position
            seen.add("expired" if not meta.exists else "remapped")
        assert after.producer == before.producer and after.txn == before.txn  # nothing else moves
    # remapped: the id expired before the new instance's InitProducerId, which recreated it with a new
    # producer id (a 4.0 zombie then fails with InvalidPidMappingException, not a fencing error), or a
    # re-initialised zombie replaced the new instance (2.5-3.9 only)
    assert seen == {"fenced", "expired", "remapped"}


def test_a_reinitialised_zombie_holds_the_recreated_id_and_becomes_the_live_instance() -> None:
    m = machine("kafka-3.6-3.9", **PAIR)
    steps = [(s, t) for s, step, t in reachable_steps(m) if step[0] == "ZombieInitProducerId" and step[-1] == 0]
    assert steps
    for s, t in steps:
        before, after = m.view(s), m.view(t)
        assert not before.txn[0].exists  # only an expired id takes InitProducerId(old producer id, epoch)
        live, meta = after.producer[0], after.txn[0]
        assert (live.producer_id, live.epoch) == (meta.producer_id, meta.epoch) == (before.next_producer_id, 0)
        assert after.zombie[0] == before.producer[0] and live.position == before.zombie[0].position


@pytest.mark.parametrize(("variant", "switches", "verdict"),
                         [("kafka-3.6-3.9", {}, {"ExactlyOnce": 39}),
                          ("kafka-3.6-3.9", {"client_pid_mapping_fatal": True}, {}),
                          ("kafka-4.0", {"transaction_version": "tv1"}, {})])
def test_kafka_18019_is_the_switch_that_removes_the_duplicate(variant: str, switches: dict[str, Any],
                                                              verdict: dict[str, int]) -> None:
    """The spec pair's exploration, and the 3.9 variant with the 4.0 client's switch alone."""
    from eoscheck.checker.explore import explore
    from eoscheck.checker.explore.options import ExploreOptions
    from eoscheck.model.machines.eos import EosMachine
    from eoscheck.model.protocol import VARIANTS
    base = machine(variant, **PAIR)
    protocol = VARIANTS[variant].protocol.with_(**switches)
    m = EosMachine(protocol, base.bounds)
    r = explore(m, ExploreOptions(properties=("ExactlyOnce",)))
    assert {v.property: len(v.trace) for v in r.violations} == verdict
    if verdict:  # the trace goes through the expiry and the zombie's recovery, in that order
        actions = [t.step[0] for t in r.violations[0].trace if t.step is not None]
        path = [a for a in actions if a in ACTIONS]
        assert path == ["ExpireDataTransactionalId", "ZombieAddPartitionsToTxn", "ZombieInitProducerId"]
