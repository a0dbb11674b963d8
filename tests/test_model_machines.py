"""The Kafka machines as the engine sees them: registry, states, fields, and small explorations
whose verdicts come from the reference's scenarios (each a few hundred states at most)."""

from __future__ import annotations

import pytest
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.fingerprint import check_state
from eoscheck.checker.registry import find_model
from eoscheck.model.registry import (
    IDEMPOTENT_PRODUCE_MACHINE,
    INIT_PRODUCER_ID_MACHINE,
    MODELS,
)
from reachable_states import first_step

IDEM = "kafka.idempotent_produce"
INIT = "kafka.init_producer_id"


def walk(machine, limit: int = 300):
    """Up to ``limit`` states reachable by BFS, with their steps (for structural checks)."""
    seen, frontier, out = set(), list(machine.init_states()), []
    while frontier and len(out) < limit:
        s = frontier.pop(0)
        if s in seen:
            continue
        seen.add(s)
        out.append(s)
        frontier.extend(t for _, t in machine.successors(s))
    return out


@pytest.mark.parametrize("md", MODELS, ids=lambda m: m.name)
def test_registry_declares_what_the_machine_provides(md) -> None:
    assert find_model(md.name) is md
    for variant in md.variants:
        machine = md.machine(variant)
        assert set(machine.properties()) == set(md.properties)
        for name, prop in machine.properties().items():
            assert prop.doc == md.properties[name] and prop.doc
        for switch, value in md.variants[variant].switches.items():
            sw = md.switches[switch]
            assert not sw.choices or value in sw.choices
    for bound in md.bounds.values():
        assert bound.min <= bound.default <= bound.max


@pytest.mark.parametrize("name,bounds", [
    (IDEM, {"acked_prefix": 1, "records": 2, "delete_records": 1, "lost_responses": 1, "leader_failovers": 1,
            "transient_errors": 1, "max_ticks": 2}),
    (INIT, {"clients": 2, "failovers": 1, "transactions": 1, "expirations": 1, "max_epoch": 3}),
])
def test_states_are_stable_and_fields_are_named_by_actor(name: str, bounds: dict) -> None:
    # the hand-written machines (their presets of kafka.eos: test_preset_init_pid.py, test_eos_idempotent*.py)
    machine = (INIT_PRODUCER_ID_MACHINE if name == INIT else IDEMPOTENT_PRODUCE_MACHINE).machine(None, None, bounds)
    states = walk(machine)
    assert len(states) > 50
    actors = {"time", "allocator", "leader", "follower", "client[0]", "client[1]", "network", "faults",
              "coordinator", "txn_log"}
    for s in states:
        check_state(s)  # ints/bools/tuples only: fingerprints agree across processes
        fields = machine.fields(s)
        assert all(k.split(".")[0] in actors for k in fields)
        steps = [step for step, _ in machine.successors(s)]
        assert steps == [step for step, _ in machine.successors(s)]  # deterministic
        for step in steps:
            assert step[0] in machine.actions and len(step) - 1 == len(machine.actions[step[0]])
            assert machine.format_step(step).startswith(step[0])


def verdict(name: str, variant: str, props: list[str] | None, **bounds) -> tuple[str, int]:
    machine = find_model(name).machine(variant, None, bounds)
    r = explore(machine, ExploreOptions(properties=tuple(props) if props else None, check_deadlock=False))
    return r.verdict, (len(r.violations[0].trace) if r.violations else 0)


def test_spurious_out_of_order_sequence_in_0_11_and_fixed_in_1_0() -> None:
    b = dict(acked_prefix=1, records=1, max_in_flight=1, delete_records=1, lost_responses=0)
    assert verdict(IDEM, "broker-0.11", ["OutOfOrderOnlyOnDataLoss"], **b) == ("violated", 6)
    assert verdict(IDEM, "broker-1.0.0-1.0.1", ["OutOfOrderOnlyOnDataLoss"], **b)[0] == "holds"


def test_pre_kip360_reset_duplicates_and_kip360_does_not() -> None:
    b = dict(acked_prefix=1, records=1, max_in_flight=2, delete_records=1, lost_responses=1)
    assert verdict(IDEM, "broker-2.0-2.3", ["NoDuplicates"], **b)[0] == "violated"
    # KAFKA-7190 is in 2.4.0 (audit A2): the 2.4 broker keeps the producer state, no duplicate
    assert verdict(IDEM, "broker-2.4", ["NoDuplicates"], **b)[0] == "holds"
    assert verdict(IDEM, "kafka-shipped", None, **b)[0] == "holds"


def test_failover_to_a_snapshot_restored_replica_duplicates() -> None:
    # audit B4: a snapshot keeps one batch per producer; the same faults with the in-sync follower or a
    # replica rebuilt from its log (five cached batches) hold
    b = {"records": 3, "max_in_flight": 3, "lost_responses": 2}
    assert verdict(IDEM, "kafka-shipped", ["NoDuplicates"], snapshot_restored_failovers=1, **b) == ("violated", 19)
    assert verdict(IDEM, "kafka-shipped", ["NoDuplicates"], restarted_replica_failovers=1, **b)[0] == "holds"


def test_kip854_advice_needs_timely_requests_and_agreeing_clocks() -> None:
    # audit B5: expiration == delivery timeout holds only if no request outlives its tick and the
    # clocks agree; the expiration must also cover the clock skew
    b = {"records": 1, "max_in_flight": 1, "lost_responses": 1, "delivery_timeout": 3, "max_ticks": 4}
    assert verdict(IDEM, "kafka-shipped", ["NoDuplicates"], producer_id_expiration=3, **b)[0] == "holds"
    assert verdict(IDEM, "kafka-shipped", ["NoDuplicates"], producer_id_expiration=3, late_delivery=1, **b) == (
        "violated", 12)
    assert verdict(IDEM, "kafka-shipped", ["NoDuplicates"], producer_id_expiration=3, clock_skew=1, **b) == (
        "violated", 11)
    assert verdict(IDEM, "kafka-shipped", ["NoDuplicates"], producer_id_expiration=4, clock_skew=1, **b)[0] == "holds"


def test_producer_id_expiry_against_delivery_timeout() -> None:
    b = dict(records=2, max_in_flight=2, lost_responses=1, delivery_timeout=3, max_ticks=4)
    assert verdict(IDEM, "kafka-shipped", ["NoDuplicates"], producer_id_expiration=2, **b)[0] == "violated"
    assert verdict(IDEM, "kafka-shipped", ["NoDuplicates"], producer_id_expiration=3, **b)[0] == "holds"


def test_init_producer_id_retry_across_failover() -> None:
    # the abortable error happens inside a transaction (EndTxn(ABORT) first, kafka-semantics.md §2.6)
    b = dict(clients=1, lost_responses=1, failovers=1, abortable_errors=1, transactions=1)
    assert verdict(INIT, "kafka-shipped", ["SoleInstanceNeverFenced"], **b) == ("violated", 15)
    assert verdict(INIT, "kip360-designed", None, **b)[0] == "holds"


def test_epoch_overflow_rotates_the_producer_id_without_reuse() -> None:
    b = dict(clients=2, max_epoch=3, lost_responses=0, failovers=0, abortable_errors=1, transactions=1, restarts=1)
    for variant in ("kafka-shipped", "kip360-designed", "pre-kip360"):
        assert verdict(INIT, variant, ["UniqueProducerIdEpoch", "CoordinatorEpochMonotonic",
                                       "CoordinatorLegalState"], **b)[0] == "holds"


def test_epoch_overflow_is_reached_at_small_max_epoch() -> None:
    machine = INIT_PRODUCER_ID_MACHINE.machine("kafka-shipped", None, dict(clients=2, max_epoch=3, lost_responses=0,
                                                                   failovers=0, abortable_errors=1, transactions=1,
                                                                   restarts=1))
    states = walk(machine, limit=20000)
    rotated = [s for s in states if s.metadata.exists and s.metadata.producer_id == 1]
    assert rotated and all(s.metadata.epoch <= 2 for s in states if s.metadata.exists)
    assert any(c.producer_id == 1 and c.epoch == 0 for s in rotated for c in s.clients)


def test_kip360_bump_does_not_wait_for_in_flight_requests() -> None:
    # earlier review finding 8: bumpIdempotentEpochAndResetIdIfNeeded runs at the top of every
    # Sender.runOnce; startSequencesAtBeginning rewrites the batches whose requests are on the wire
    from eoscheck.model.state import INFLIGHT
    machine = IDEMPOTENT_PRODUCE_MACHINE.machine("kafka-shipped", None, {"records": 2, "max_in_flight": 2, "lost_responses": 1,
                                                                   "transient_errors": 1})
    found = first_step(machine, lambda s, step, t: step[0] == "BumpEpoch"
                       and any(b.status == INFLIGHT for b in s.clients[0].batches))
    assert found is not None
    bumped_in_flight = found[2]
    rewritten = [b for b in bumped_in_flight.clients[0].batches if b.status == INFLIGHT]
    assert rewritten and all(b.sequence_reset and b.epoch == bumped_in_flight.clients[0].epoch for b in rewritten)


def test_leader_and_follower_expire_producers_in_separate_steps() -> None:
    # earlier review finding 22: each replica runs its own PeriodicProducerExpirationCheck
    machine = IDEMPOTENT_PRODUCE_MACHINE.machine("kafka-shipped", None, {"acked_prefix": 1, "records": 1, "lost_responses": 0,
                                                                   "producer_id_expiration": 1, "max_ticks": 1,
                                                                   "leader_failovers": 1})
    seen = set(machine.init_states())
    todo = list(seen)
    follower_only = leader_only = False
    while todo:
        s = todo.pop()
        for step, t in machine.successors(s):
            if step[0] == "ExpireProducerIds":
                leader_kept = t.partition.producers == s.partition.producers
                follower_kept = t.follower[0].producers == s.follower[0].producers
                follower_only |= step[1] == 1 and leader_kept and bool(t.partition.producers)
                leader_only |= step[1] == 0 and follower_kept and bool(t.follower[0].producers)
            if t not in seen:
                seen.add(t)
                todo.append(t)
    assert follower_only and leader_only


# review finding 7: the KIP-360 designed-vs-shipped pair must exercise the client_epoch_bump switch, i.e.
# explore different state spaces on the committed bounds (on kafka.eos: the name is its preset; the
# kafka.eos twins that repeated the pair were removed in session 18)
_KIP360_PAIRS = [("kip360-delete-records-no-duplicate", "kip360-designed-delete-records-no-duplicate")]


@pytest.mark.parametrize("shipped,designed", _KIP360_PAIRS)
def test_kip360_designed_and_shipped_pair_explore_different_states(shipped: str, designed: str) -> None:
    from pathlib import Path

    from eoscheck.checker.spec import build_machine, load_spec, spec_to_options
    specs = Path(__file__).resolve().parent.parent / "specs"
    runs = {}
    for name in (shipped, designed):
        spec = load_spec(specs / f"{name}.toml")
        machine = build_machine(spec)
        result = explore(machine, spec_to_options(spec))
        assert result.verdict == spec.expect.verdict == "holds"
        runs[name] = (result.stats.distinct, result.stats.coverage, machine.disabled_actions())
    (n_shipped, cov_shipped, off_shipped), (n_designed, cov_designed, off_designed) = runs[shipped], runs[designed]
    assert (n_shipped, n_designed) == (3272, 3034)
    # shipped leaves an expired batch's sequence unresolved; the design fails the later batches instead
    assert cov_shipped["ResolveSequences"].distinct > 0 and "ResolveSequences" not in off_shipped
    assert "ResolveSequences" in off_designed
    assert cov_designed["ExpireBatch"].distinct > 0 and cov_designed["BumpEpoch"].distinct > 0


def test_kip360_designed_expiry_fails_the_later_sequenced_batch_in_the_pairs_state_space() -> None:
    # the reaction the designed spec relies on is reachable there: one ExpireBatch fails two records
    # (the expired batch and the later one with a sequence) and requests the bump
    from eoscheck.model.state import QUEUED
    b = {"acked_prefix": 1, "records": 2, "max_in_flight": 2, "delete_records": 2, "lost_responses": 1,
         "transient_errors": 1, "delivery_timeout": 1, "max_ticks": 1}
    machine = IDEMPOTENT_PRODUCE_MACHINE.machine("kip360-designed", None, b)
    found = first_step(machine, lambda s, step, t: step[0] == "ExpireBatch"
                       and t.clients[0].failed.bit_count() - s.clients[0].failed.bit_count() == 2)
    assert found is not None
    before, after = found[0].clients[0], found[2].clients[0]
    assert sum(x.status != QUEUED for x in before.batches) == 2
    assert after.epoch_bump_required and after.unresolved == -1 and all(x.status == QUEUED for x in after.batches)
