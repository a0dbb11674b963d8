"""``kafka.init_producer_id`` as a preset of ``kafka.eos`` (``model/machines/preset_init_pid.py`` and
the instances of ``model/machines/eos_instances.py``): every spec of the old machine gives the same
verdict, property and trace length on the preset; the state counts differ only where the old
machine kept its unordered network in send order; the instances' declared symmetry picks one state
per orbit; and the preset refuses bad input in one line."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from eoscheck.checker.cli import main
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.registry import find_model
from eoscheck.checker.spec import load_spec, spec_to_options
from eoscheck.model.machines.eos import machine as eos_machine
from eoscheck.model.machines.eos_instances import ACTIONS, _retry, _waiting, _with_retry
from eoscheck.model.machines.eos_presets import Preset, PresetMachine, To
from eoscheck.model.machines.preset_init_pid import INIT_PRODUCER_ID
from eoscheck.model.producer import txn_client as tc
from eoscheck.model.registry import INIT_PRODUCER_ID as REGISTERED
from eoscheck.model.registry import INIT_PRODUCER_ID_MACHINE
from eoscheck.model.state import TxnClient
from reachable_states import reachable

ROOT = Path(__file__).resolve().parents[1]
SPECS = sorted(p for p in (ROOT / "specs").glob("*.toml") if 'model = "kafka.init_producer_id"' in p.read_text())


def outcome(machine: Any, options: ExploreOptions) -> tuple[Any, ...]:
    r = explore(machine, options)
    v = r.violations[0] if r.violations else None
    return r.verdict, v.property if v else None, len(v.trace) if v else None, r.stats.depth, r.stats.distinct


def test_the_old_name_is_the_preset() -> None:
    md = find_model("kafka.init_producer_id")
    assert md is REGISTERED and md.build == INIT_PRODUCER_ID.build
    assert (md.variants, md.switches, md.bounds.keys(), md.properties) == (
        INIT_PRODUCER_ID_MACHINE.variants, INIT_PRODUCER_ID_MACHINE.switches, INIT_PRODUCER_ID_MACHINE.bounds.keys(),
        INIT_PRODUCER_ID_MACHINE.properties)
    assert md.temporal == INIT_PRODUCER_ID_MACHINE.temporal
    assert isinstance(md.machine(), PresetMachine)


def test_every_spec_of_the_old_machine_is_here() -> None:
    assert len(SPECS) == 13


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.stem)
def test_preset_agrees_with_the_old_machine(path: Path) -> None:
    spec = load_spec(path)
    options = spec_to_options(spec)
    old = outcome(INIT_PRODUCER_ID_MACHINE.build(dict(spec.switches), dict(spec.bounds)), options)
    new = outcome(INIT_PRODUCER_ID.build(dict(spec.switches), dict(spec.bounds)), options)
    assert new[:4] == old[:4]  # verdict, property, trace length, depth
    assert spec.expect.verdict == ("holds" if new[0] == "holds" else "violates")
    if spec.bounds["clients"] == 1:
        assert new[4] == old[4]  # one instance: the same state graph
    else:
        assert new[4] <= old[4]


def _unordered(s: Any) -> Any:
    return s._replace(requests=tuple(sorted(s.requests)), responses=tuple(sorted(s.responses)))


@pytest.mark.parametrize("variant", ["kafka-shipped", "kip360-designed", "pre-kip360"])
def test_two_instances_count_the_old_states_with_unordered_networks(variant: str) -> None:
    # the old machine handles any request or response in flight but keeps them in send order, so
    # states that differ only in that order are distinct there and one state on the preset
    bounds = {"clients": 2, "lost_responses": 1, "failovers": 1, "abortable_errors": 1, "transactions": 1,
              "max_epoch": 3}
    old = reachable(INIT_PRODUCER_ID_MACHINE.machine(variant, bounds=bounds), 10**6)
    new = reachable(find_model("kafka.eos.init_producer_id").machine(variant, bounds=bounds), 10**6)
    assert len({_unordered(s) for s in old}) == len(new) < len(old)


def _orbits(machine: Any, states: list[Any], scalarset: str) -> int:
    """Brute force: the number of orbits of ``states`` under every renaming of ``scalarset`` (the
    least image of each state over all permutations is its orbit's name)."""
    sym = machine.symmetry
    sizes = {ss.name: ss.size for ss in sym.scalarsets}
    perms = [tuple(p if name == scalarset else tuple(range(size)) for name, size in sizes.items())
             for p in itertools.permutations(range(sizes[scalarset]))]
    return len({min(sym.apply(s, perm) for perm in perms) for s in states})


@pytest.mark.parametrize("variant", ["kafka-shipped", "pre-kip360"])
def test_instance_symmetry_keeps_one_state_per_orbit(variant: str) -> None:
    bounds = {"clients": 2, "lost_responses": 1, "failovers": 0, "abortable_errors": 1, "transactions": 1,
              "restarts": 1, "max_epoch": 3}
    m = find_model("kafka.eos.init_producer_id").machine(variant, bounds=bounds)
    assert m.has_symmetry()
    full = reachable(m, 10**6)
    reduced = explore(m, ExploreOptions(stop_at_first=False))
    plain = explore(m, ExploreOptions(stop_at_first=False, symmetry=False))
    assert plain.stats.distinct == len(full)
    assert reduced.stats.distinct == _orbits(m, full, "instance") < len(full)
    assert reduced.verdict == plain.verdict and {v.property for v in reduced.violations} == {
        v.property for v in plain.violations}


def test_renaming_instances_commutes_with_every_step() -> None:
    m = find_model("kafka.eos.init_producer_id").machine("kafka-shipped", bounds={
        "clients": 2, "lost_responses": 1, "failovers": 1, "abortable_errors": 1, "transactions": 1, "expirations": 1,
        "restarts": 1, "max_epoch": 3})
    apply, swap = m.symmetry.apply, (1, 0)
    ids = tuple(tuple(range(ss.size)) for ss in m.symmetry.scalarsets)
    perm = tuple(swap if ss.name == "instance" else ident for ss, ident in zip(m.symmetry.scalarsets, ids))
    seen: set[str] = set()
    for s in reachable(m, 3000):
        succ = list(m.successors(s))
        seen.update(step[0] for step, _ in succ)
        assert {apply(t, perm) for _, t in succ} == {t for _, t in m.successors(apply(s, perm))}
        for prop in m.properties().values():
            if prop.kind == "invariant":
                assert prop.check(apply(s, perm)) == prop.check(s)
    assert {"StartInstance", "RestartInstance", "HandleInitProducerId", "CompleteAppend", "InitProducerIdTimeout",
            "LoseInitProducerIdResponse", "TxnCoordinatorFailover", "InstanceAddPartitionsToTxn",
            "ExpireTransactionalId"} <= seen


def test_without_instances_kafka_eos_has_none_of_them() -> None:
    m = eos_machine("kafka-3.0-3.5")
    assert not set(m.actions) & ACTIONS
    fields = m.fields(next(iter(m.init_states())))
    assert not {"init_requests", "instances_txn", "faults.abortable_errors"} & set(fields)
    assert "leader[0].log" in fields or any(k.startswith("leader[0]") for k in fields)


def test_instances_beside_data_producers() -> None:
    # the mechanisms compose: a data producer's transaction beside the instances' InitProducerId race,
    # on one coordinator (one producer id allocator, one failover)
    m = eos_machine("kafka-3.0-3.5", instances=1, instance_transactions=1, abortable_errors=1, lost_responses=1,
                    coordinator_failovers=1)
    r = explore(m, ExploreOptions(stop_at_first=False, properties=("SoleInstanceNeverFenced", "NoDuplicate",
                                                                     "AtomicTransactions")))
    steps = {a for a, c in r.stats.coverage.items() if c.generated}
    assert {"StartInstance", "HandleInitProducerId", "InitProducerId", "WriteTxnMarker",
            "TxnCoordinatorFailover"} <= steps
    assert r.verdict == "violated" and {v.property for v in r.violations} == {"SoleInstanceNeverFenced"}


# ------------------------------------------------------------------------------ bad input

def test_a_preset_must_map_every_bound_onto_kafka_eos() -> None:
    with pytest.raises(ValueError, match=r"kafka.eos bounds \['no_such'\] are unknown"):
        Preset("x", INIT_PRODUCER_ID.legacy, "", {"clients": "no_such"}, {})
    with pytest.raises(ValueError, match=r"\['producers'\] are unknown, pinned and mapped"):
        Preset("x", INIT_PRODUCER_ID.legacy, "", {"clients": "producers"}, {}, fixed={"producers": 0})
    with pytest.raises(ValueError, match=r"\['instances'\] .* mapped twice"):
        Preset("x", INIT_PRODUCER_ID.legacy, "", {"clients": "instances", "restarts": To("instances", 1)}, {})
    with pytest.raises(ValueError, match="no property 'NoSuchProperty'"):
        Preset("x", INIT_PRODUCER_ID.legacy, "", {}, {"P": "NoSuchProperty"})
    # the published model has exactly the older machine's bounds, each mapped
    with pytest.raises(ValueError, match=r"bounds \['clients'\] are not both"):
        Preset("x", INIT_PRODUCER_ID.legacy, "", {k: v for k, v in INIT_PRODUCER_ID.bounds.items() if k != "clients"},
               {}).model_def(INIT_PRODUCER_ID_MACHINE)


def _refused(tmp_path: Path, capsys: Any, text: str, fragment: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    capsys.readouterr()
    code = main(["check", str(path), "--out", str(tmp_path / "cx"), "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in out + err, (code, err)
    assert fragment in err, err
    assert not (tmp_path / "cx").exists()


@pytest.mark.parametrize("text, fragment", [
    ('model = "kafka.init_producer_id"\n[check]\nproperties = ["NoDuplicate"]\n', "unknown property 'NoDuplicate'"),
    ('model = "kafka.init_producer_id"\n[switches]\ntransaction_version = "tv2"\n', "transaction_version"),
    ('model = "kafka.init_producer_id"\n[bounds]\nclients = 0\n', "clients"),
    ('model = "kafka.init_producer_id"\n[bounds]\ninstances = 1\n', "instances"),
    ('model = "kafka.eos"\n[bounds]\ninstances = 4\n', "instances"),
    ('model = "kafka.eos"\n[bounds]\nproducers = 0\n', "producers = 0 needs instances"),
])
def test_bad_input_is_one_line(tmp_path: Path, capsys: Any, text: str, fragment: str) -> None:
    _refused(tmp_path, capsys, text, fragment)


UNLIKE_IDLE = TxnClient(5, 7, 2, 9, 3, 1, 2)  # every field unlike IDLE's


def test_timeout_reads_latest_attempts_and_retry_fields() -> None:
    # InitProducerIdTimeout reads ``waiting``, the latest attempt per instance in flight: it asks
    # whether the current attempt is in flight, which is the latest one here because an instance's
    # attempt only grows and a message carries the attempt it was sent in (checked on every state)
    m = find_model("kafka.eos.init_producer_id").machine("kafka-shipped", bounds={
        "clients": 2, "lost_responses": 1, "failovers": 1, "abortable_errors": 1, "transactions": 1, "restarts": 1,
        "max_epoch": 3})
    older = 0
    for s in reachable(m, 20000):
        v = m.view(s)
        for c, inst in enumerate(v.instance):
            # ``retry``, InitProducerIdTimeout's written projection: the laws of a Projection, and the
            # retry of the projection written back is the retry of the instance
            r = _retry(inst)
            assert _with_retry(inst, r) == inst and _retry(_with_retry(UNLIKE_IDLE, r)) == r
            new, req = tc.resend(r, c, new_connection=True)
            assert (_with_retry(inst, new), req) == tc.resend(inst, c, new_connection=True)
        for part in ("init_requests", "init_responses", "init_pending"):
            msgs = getattr(v, part)
            held = _waiting(msgs)
            latest = dict(held)
            assert len(latest) == len(held)  # one attempt per instance: the older ones are dropped
            for c, inst in enumerate(v.instance):
                pairs = {(x.client, x.attempt) for x in msgs if x.client == c}
                assert all(a <= inst.attempt for _, a in pairs)
                assert ((c, inst.attempt) in pairs) == (latest.get(c) == inst.attempt)
                older += len(pairs) > 1
    assert older  # older attempts beside the latest are reached: the projection drops them
