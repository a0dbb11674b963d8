"""Symmetry of ``kafka.init_producer_id``: renaming producer instance slots is an automorphism of the
machine (every step of a renamed state is the renamed step of the state), and the canonical form
picks exactly one state per orbit."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from eoscheck.checker.explore import ExploreOptions
from eoscheck.checker.machine import Machine
from eoscheck.checker.symmetry import check_symmetry

# the hand-written machine (kafka.init_producer_id is now a preset of kafka.eos: test_preset_init_pid.py)
from eoscheck.model.registry import INIT_PRODUCER_ID_MACHINE as INIT_PRODUCER_ID
from reachable_states import reachable

VARIANTS: list[str] = list(INIT_PRODUCER_ID.variants)
# every fault of the model, small epochs so that overflow and new producer ids are reached
BOUNDS: dict[str, int] = dict(max_epoch=2, lost_responses=1, failovers=1, abortable_errors=1, restarts=1,
                              expirations=1, transactions=1, new_producer_ids=2)
STATE_CAP = 5_000


def machine(variant: str, clients: int) -> Machine:
    return INIT_PRODUCER_ID.machine(variant, bounds={**BOUNDS, "clients": clients})


SLOT_STEPS = {name for name, params in INIT_PRODUCER_ID.build(
    {k: v.default for k, v in INIT_PRODUCER_ID.switches.items()},
    {k: v.default for k, v in INIT_PRODUCER_ID.bounds.items()}).actions.items() if params[:1] == ("client",)}


@pytest.mark.parametrize("variant", VARIANTS)
# three slots: the same check on a larger space, about 4 s per variant (the full suite only)
@pytest.mark.parametrize("clients", [2, pytest.param(3, marks=pytest.mark.slow)])
def test_renaming_slots_commutes_with_every_step_and_keeps_every_verdict(variant: str, clients: int) -> None:
    m = machine(variant, clients)
    props = m.properties().values()
    rename = m.symmetry.apply
    steps_seen: set[str] = set()
    for s in reachable(m, STATE_CAP if clients == 2 else STATE_CAP // 3):
        succ = list(m.successors(s))
        steps_seen.update(step[0] for step, _ in succ)
        for p in itertools.permutations(range(clients)):
            image = rename(s, (p,))
            assert {rename(t, (p,)) for _, t in succ} == {t for _, t in m.successors(image)}
            assert m.is_terminal(image) == m.is_terminal(s)
            for prop in props:
                if prop.kind == "invariant":
                    assert prop.check(image) == prop.check(s), prop.name
                else:
                    for step, t in succ:
                        renamed = (step[0], p[step[1]], *step[2:]) if step[0] in SLOT_STEPS else step
                        assert prop.check(image, renamed, rename(t, (p,))) == prop.check(s, step, t), prop.name
    assert {"StartInstance", "RestartInstance", "HandleInitProducerId", "CompleteAppend", "LoseResponse",
            "RequestTimeout", "CoordinatorFailover", "AddPartitionsToTxn"} <= steps_seen


@pytest.mark.parametrize("variant", ["pre-kip360", "kafka-shipped"])
def test_canonical_form_is_one_state_per_orbit(variant: str) -> None:
    m = machine(variant, 3)
    forms: dict[frozenset, Any] = {}
    for s in reachable(m, STATE_CAP):
        orbit = frozenset(m.symmetry.orbit(s))
        c = m.canonical(s)
        assert c in orbit and forms.setdefault(orbit, c) == c
    assert len(set(forms.values())) == len(forms)
    assert {len(o) for o in forms} >= {1, 3, 6}


@pytest.mark.parametrize("variant", VARIANTS)
def test_check_symmetry_counts_orbits_exactly(variant: str) -> None:
    bounds = {**BOUNDS, "clients": 2, "restarts": 0, "expirations": 0, "transactions": 1}
    report = check_symmetry(INIT_PRODUCER_ID.machine(variant, bounds=bounds), ExploreOptions(strategy="bfs"))
    assert report.ok and report.orbit_check is True, report.summary()
    assert 1.9 < report.reduction <= 2.0


def test_one_slot_declares_no_symmetry() -> None:
    m = machine("kafka-shipped", 1)
    assert not m.has_symmetry() and not hasattr(m, "symmetry")


def test_every_message_names_its_slot_first() -> None:
    from eoscheck.model.machines.init_pid_symmetry import MESSAGE_TYPES, STATE_FIELDS
    from eoscheck.model.state import InitPidState
    assert all(t._fields[0] == "client" for t in MESSAGE_TYPES)
    assert InitPidState._fields == STATE_FIELDS
