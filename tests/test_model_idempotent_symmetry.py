"""Symmetry of ``kafka.idempotent_produce``: renaming clients (with their initial producer ids) is an
automorphism of the machine, and the canonical form picks exactly one state per orbit.

The orbit counting of ``check_symmetry`` only shows that the reduced count is consistent with the
full one; the commutation test shows the reason: every step of a renamed state is the renamed step
of the state, on every reachable state of every variant.
"""

from __future__ import annotations

import itertools
import pickle
from typing import Any

import pytest
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.spec import load_spec
from eoscheck.checker.symmetry import check_symmetry
from eoscheck.model.machines.idempotent_produce import IdempotentProduceMachine
from eoscheck.model.registry import IDEMPOTENT_PRODUCE_MACHINE as IDEMPOTENT_PRODUCE
from reachable_states import reachable

VARIANTS: list[str] = list(IDEMPOTENT_PRODUCE.variants)

# Two complete state spaces (7k-10k states with two clients) that between them reach every step:
# a prefix of acknowledged records (initial states in every client order), lost acks, DeleteRecords,
# a new producer id (max_epoch=0: the first epoch bump needs one), delivery and producer-id expiry;
# and a failover to a restarted replica with DeleteRecords and a transient error.
CONFIGS: dict[str, dict[str, int]] = {
    "faults": dict(acked_prefix=1, records=1, max_ticks=1, producer_id_expiration=1, delivery_timeout=1,
                   lost_responses=1, transient_errors=0, delete_records=1, leader_failovers=0,
                   restarted_replica_failovers=0, new_producer_ids=1, max_epoch=0),
    "failover": dict(acked_prefix=1, records=1, max_ticks=0, lost_responses=0, transient_errors=1, delete_records=1,
                     leader_failovers=0, restarted_replica_failovers=1, new_producer_ids=1, max_epoch=0),
}
REQUIRED_STEPS: dict[str, set[str]] = {
    "faults": {"LoseResponse", "DeleteRecords", "InitProducerId", "ExpireBatch", "ExpireProducerIds",
               "RequestTimeout", "Tick"},
    "failover": {"LeaderFailover", "DeleteRecords", "PropagateLogStartOffset", "HandleProduceResponse"},
}
#: three clients: the first states in BFS order (their full spaces are 60k+)
STATE_CAP = 6_000
FULL_CAP = 20_000


def machine(variant: str, clients: int, config: str = "faults", **bounds: int) -> IdempotentProduceMachine:
    built = IDEMPOTENT_PRODUCE.machine(variant, bounds={**CONFIGS[config], "clients": clients, **bounds})
    assert isinstance(built, IdempotentProduceMachine)
    return built


def perms(n: int) -> list[tuple[int, ...]]:
    return [p for p in itertools.permutations(range(n)) if p != tuple(range(n))]


@pytest.mark.parametrize("variant", VARIANTS)
# three clients: about 3 s per variant (the full suite only)
@pytest.mark.parametrize("config, clients", [("faults", 2), ("failover", 2),
                                             pytest.param("faults", 3, marks=pytest.mark.slow)])
def test_renaming_clients_commutes_with_every_step_and_keeps_every_verdict(variant: str, config: str,
                                                                          clients: int) -> None:
    m = machine(variant, clients, config)
    invariants = {n: p.check for n, p in m.properties().items() if p.kind == "invariant"}
    transition = m.properties()["OutOfOrderOnlyOnDataLoss"].check
    rename = m.symmetry.apply
    states = reachable(m, STATE_CAP if clients == 3 else FULL_CAP)
    assert clients == 3 or len(states) < FULL_CAP  # two clients: the whole space
    steps_seen: set[str] = set()
    for s in states:
        succ = list(m.successors(s))
        steps_seen.update(step[0] for step, _ in succ)
        for p in perms(clients):
            image = rename(s, (p,))
            assert {rename(t, (p,)) for _, t in succ} == {t for _, t in m.successors(image)}
            assert m.within_bounds(image) == m.within_bounds(s) and m.is_terminal(image) == m.is_terminal(s)
            for name, check in invariants.items():
                assert check(image) == check(s), name
            for step, t in succ:
                renamed_step = (step[0], p[step[1]], *step[2:]) if step[0] in CLIENT_STEPS else step
                assert transition(image, renamed_step, rename(t, (p,))) == transition(s, step, t)
    if clients == 2:  # the bounds still reach the steps this test is about
        assert REQUIRED_STEPS[config] <= steps_seen


CLIENT_STEPS = {name for name, params in IdempotentProduceMachine.actions.items() if params[:1] == ("client",)}


@pytest.mark.parametrize("clients", [2, 3])
def test_initial_states_are_one_orbit(clients: int) -> None:
    m = machine("kafka-shipped", clients)
    inits = set(m.init_states())
    assert len(inits) == len(list(itertools.permutations(range(clients))))
    (first, *_) = inits
    assert m.symmetry.orbit(first) == inits
    assert len({m.canonical(s) for s in inits}) == 1
    assert len(set(machine("kafka-shipped", clients, acked_prefix=0).init_states())) == 1


@pytest.mark.parametrize("variant", ["broker-0.11", "kip360-designed", "kafka-shipped"])
def test_canonical_form_is_one_state_per_orbit(variant: str) -> None:
    m = machine(variant, 3, acked_prefix=0)
    sym = m.symmetry
    states = reachable(m, STATE_CAP)
    orbits: dict[frozenset, Any] = {}
    for s in states:
        orbit = frozenset(sym.orbit(s))
        c = m.canonical(s)
        assert c in orbit
        assert orbits.setdefault(orbit, c) == c  # every member of an orbit has the same form
    assert len(set(orbits.values())) == len(orbits)  # and different orbits have different forms
    assert any(len(o) == 6 for o in orbits) and any(len(o) < 6 for o in orbits)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("config", list(CONFIGS))
def test_check_symmetry_counts_orbits_exactly(variant: str, config: str) -> None:
    report = check_symmetry(machine(variant, 2, config), ExploreOptions(strategy="bfs"))
    assert report.ok, report.summary()
    assert report.orbit_check is True and report.exact is True
    assert 1.9 < report.reduction <= 2.0


def test_one_client_declares_no_symmetry() -> None:
    m = machine("kafka-shipped", 1)
    assert not m.has_symmetry() and not hasattr(m, "symmetry")
    assert all(m.canonical(s) is s for s in reachable(m, 500))


def test_a_known_bug_is_found_with_the_same_shortest_length_with_two_clients() -> None:
    spec = load_spec("specs/pre-kip360-reset-duplicate.toml")
    m = IDEMPOTENT_PRODUCE.build(dict(spec.switches), {**spec.bounds, "clients": 2})
    report = check_symmetry(m, ExploreOptions(strategy="bfs"))
    assert report.ok and report.orbit_check, report.summary()
    assert report.full.verdict == report.reduced.verdict == "violated"
    assert {v.property for v in report.reduced.violations} >= {"NoDuplicates"}
    assert report.reduction > 1.9


def test_parallel_engine_and_a_shipped_machine_reduce_alike() -> None:
    m = machine("kafka-shipped", 2)
    bfs = explore(m, ExploreOptions(strategy="bfs", stop_at_first=False))
    par = explore(m, ExploreOptions(strategy="parallel", workers=2, stop_at_first=False))
    assert (par.verdict, par.stats.distinct, par.stats.generated, par.stats.depth) == \
           (bfs.verdict, bfs.stats.distinct, bfs.stats.generated, bfs.stats.depth)
    shipped = pickle.loads(pickle.dumps(m))
    assert not shipped._symmetry._renamed  # caches are not shipped
    for s in reachable(m, 2_000):
        assert shipped.canonical(s) == m.canonical(s)
