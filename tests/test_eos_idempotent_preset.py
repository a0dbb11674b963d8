"""The ``kafka.idempotent_produce`` preset of ``kafka.eos`` (``model/machines/eos_presets.py``): the
mapping of the older machine's variants, switches, bounds and properties, its agreement with the
older machine on every committed spec (verdict and trace length), the kafka.eos twins written on demand,
and bad input."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from eoscheck.checker.cli import main
from eoscheck.checker.compose.testing import reachable_steps
from eoscheck.checker.explore import explore
from eoscheck.checker.registry import find_model
from eoscheck.checker.spec import build_machine, load_spec, spec_to_options
from eoscheck.model.machines.eos import PROPERTY_DOCS as EOS_PROPERTIES
from eoscheck.model.machines.eos_model import BOUNDS as EOS_BOUNDS
from eoscheck.model.machines.eos_model import MODEL as EOS
from eoscheck.model.machines.eos_presets import IDEMPOTENT_PRODUCE as PRESET
from eoscheck.model.machines.eos_presets import PresetMachine
from eoscheck.model.machines.eos_twins import TWIN_PREFIX, twin_name, twin_text
from eoscheck.model.protocol import _LEGACY_NAMES, IDEMPOTENT, LEGACY_ALIASES
from eoscheck.model.registry import IDEMPOTENT_PRODUCE_MACHINE as OLD

REPO = Path(__file__).resolve().parents[1]


def legacy_specs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.toml") if tomllib.loads(p.read_text()).get("model") == OLD.name)


SPECS = legacy_specs(REPO / "specs")
LARGE = legacy_specs(REPO / "specs" / "large")
#: the agreement runs that take longer than a few seconds
SLOW = {"kip360-two-producers-shipped", "kip854-expiry-at-least-delivery-timeout", "kip854-expiry-covers-clock-skew"}


def outcome(result) -> tuple[str, list[tuple[str, int]]]:
    return result.verdict, [(v.property, len(v.trace)) for v in result.violations]


# --- the mapping ----------------------------------------------------------------------------------


def test_every_bound_property_and_fixed_bound_maps_onto_kafka_eos() -> None:
    assert set(PRESET.bounds) == set(OLD.bounds)
    assert set(PRESET.bounds.values()) <= set(EOS_BOUNDS) and set(PRESET.fixed) <= set(EOS_BOUNDS)
    assert set(PRESET.properties) == set(OLD.properties)
    assert set(PRESET.properties.values()) <= set(EOS_PROPERTIES)
    assert set(PRESET.temporal) == set(OLD.temporal) and set(PRESET.temporal.values()) <= set(EOS.temporal)


def test_old_defaults_become_explicit_eos_bounds() -> None:
    defaults = {name: b.default for name, b in OLD.bounds.items()}
    eos = PRESET.eos_bounds(defaults)
    assert set(eos) == set(EOS_BOUNDS)
    assert eos["producers"] == 0 and eos["partitions"] == 0 and eos["idempotent_producers"] == 1
    assert eos["max_in_flight"] == 2 and eos["producer_id_expiration"] == 100 and eos["lost_responses"] == 1
    assert PRESET.eos_bounds({"clients": 2, "records": 4})["idempotent_records"] == 4


@pytest.mark.parametrize("variant", sorted(OLD.variants))
def test_each_old_variant_is_its_legacy_alias_protocol(variant: str) -> None:
    got = PRESET.protocol(OLD.resolve_switches(variant, {}))
    want = LEGACY_ALIASES[(IDEMPOTENT, variant)]
    assert {d: getattr(got, d) for d in _LEGACY_NAMES[IDEMPOTENT]} == {d: getattr(want, d)
                                                                       for d in _LEGACY_NAMES[IDEMPOTENT]}


def test_the_preset_model_keeps_the_old_names() -> None:
    md = find_model("kafka.eos.idempotent_produce")
    assert md.variants == OLD.variants and md.bounds == OLD.bounds and md.switches == OLD.switches
    assert set(md.properties) == set(OLD.properties) and set(md.temporal) == set(OLD.temporal)
    m = md.machine("broker-0.11", bounds={"clients": 2})
    assert isinstance(m, PresetMachine) and set(m.properties()) == set(OLD.properties)
    assert all(p.name == name for name, p in m.properties().items())
    assert set(m.temporal_properties()) == set(OLD.temporal)
    assert m.protocol.client_version.value == "0.11" and m.n_idempotent == 2 and m.n_producers == 0


def test_the_closest_eos_variant_with_overrides() -> None:
    assert PRESET.eos_variant(OLD.resolve_switches("kafka-shipped", {})) == ("kafka-3.0-3.5", {})
    assert PRESET.eos_variant(OLD.resolve_switches("broker-2.0-2.3", {})) == ("kafka-1.0.2-2.3", {})
    name, overrides = PRESET.eos_variant(OLD.resolve_switches("kip360-client-old-broker", {}))
    assert (name, overrides) == ("kafka-1.0.2-2.3", {"client_version": "kip360"})


# --- agreement with the older machine ---------------------------------------------------------------


@pytest.mark.parametrize("path", [pytest.param(p, id=p.stem, marks=[pytest.mark.slow] if p.stem in SLOW else [])
                                  for p in SPECS])
def test_preset_agrees_with_the_older_machine(path: Path) -> None:
    spec = load_spec(path)
    options = spec_to_options(spec)
    old = explore(OLD.build(dict(spec.switches), dict(spec.bounds)), options)
    new = explore(PRESET.build(dict(spec.switches), dict(spec.bounds)), options)
    assert outcome(new) == outcome(old)
    expected = (spec.expect.verdict, spec.expect.property, spec.expect.length)
    verdict, found = outcome(new)
    assert (verdict == "holds") == (expected[0] == "holds")
    if expected[1] is not None:
        assert (expected[1], expected[2]) in found


def test_every_old_spec_in_specs_was_compared() -> None:
    assert len(SPECS) == 24 and len(LARGE) == 4


def test_no_twin_is_committed() -> None:
    """Session 18 removed the 28 committed twins: with the name on the preset each was its original's
    configuration again (the same machine, protocol and bounds), run twice by ``eoscheck check specs/``."""
    for folder in (REPO / "specs", REPO / "specs" / "large"):
        assert not list(folder.glob(f"{TWIN_PREFIX}*.toml"))
    assert not list((REPO / "counterexamples").glob(f"{TWIN_PREFIX}*"))


# --- the kafka.eos twins (written on demand: bench/preset_agreement.py --write-twins) -------------------


def _write_twin(path: Path, folder: Path) -> Path:
    twin = folder / (twin_name(path) + ".toml")
    twin.write_text(twin_text(path, PRESET, OLD))
    return twin


@pytest.mark.parametrize("path", SPECS + LARGE, ids=lambda p: p.stem)
def test_a_twin_builds_the_presets_machine_as_plain_kafka_eos(path: Path, tmp_path: Path) -> None:
    spec = load_spec(path)
    twin = load_spec(_write_twin(path, tmp_path))
    preset, plain = build_machine(spec), build_machine(twin)
    assert twin.model == "kafka.eos" and isinstance(preset, PresetMachine) and not isinstance(plain, PresetMachine)
    # the twin takes the closest named kafka.eos variant: the decisions the idempotent producers read are the
    # preset's; the transactional ones (no transactional producer here) are that variant's
    decisions = _LEGACY_NAMES[IDEMPOTENT]
    assert {d: getattr(plain.protocol, d) for d in decisions} == {d: getattr(preset.protocol, d) for d in decisions}
    assert plain.bounds == preset.bounds and plain.n_producers == preset.n_producers == 0
    names = dict(PRESET.properties) | dict(PRESET.temporal)
    assert twin.check.properties == tuple(names[p] for p in spec.check.properties or PRESET.properties)
    assert (twin.expect.verdict, twin.expect.length) == (spec.expect.verdict, spec.expect.length)


@pytest.mark.parametrize("path", [p for p in SPECS if p.stem not in SLOW][:6], ids=lambda p: p.stem)
def test_a_twin_runs_on_kafka_eos_with_the_same_outcome(path: Path, tmp_path: Path) -> None:
    spec = load_spec(path)
    twin = load_spec(_write_twin(path, tmp_path))
    assert twin.model == "kafka.eos"
    old = outcome(explore(build_machine(spec), spec_to_options(spec)))
    got = outcome(explore(build_machine(twin), spec_to_options(twin)))
    assert got == (old[0], [(PRESET.properties[p], n) for p, n in old[1]])


# --- bad input ----------------------------------------------------------------------------------------


def test_unknown_preset_bound_or_switch_is_one_line() -> None:
    with pytest.raises(ValueError, match="preset idempotent_produce has no bound 'producers'") as bound:
        PRESET.eos_bounds({"producers": 1})
    assert "\n" not in str(bound.value)
    with pytest.raises(ValueError, match="no switch 'tv2_epoch_bump'"):
        PRESET.protocol({"tv2_epoch_bump": True})


@pytest.mark.parametrize(("text", "argv", "fragment"), [
    ('model = "kafka.eos.idempotent_produce"\n[bounds]\nproducers = 1\n', [], "unknown bound 'producers'"),
    ('model = "kafka.eos.idempotent_produce"\n', ["--bound", "partitions=2"], "partitions"),
    ('model = "kafka.eos.idempotent_produce"\n[bounds]\nclients = 9\n', [], "clients"),
    ('model = "kafka.eos.idempotent_produce"\nvariant = "kafka-4.0"\n', [], "kafka-4.0"),
])
def test_bad_preset_input_is_one_line_exit_2(tmp_path: Path, capsys, text: str, argv: list[str],
                                              fragment: str) -> None:
    spec = tmp_path / "bad.toml"
    spec.write_text(text)
    code = main(["check", str(spec), "--out", str(tmp_path / "out"), *argv])
    out, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in out + err and fragment in err, err


#: configurations no committed spec covers (sequence and epoch wrap, late delivery, the replica kinds, every
#: client version): with one client the two machines' state graphs are the same, state for state
ADHOC = [
    ("kafka-shipped", {"records": 4, "max_seq": 2, "lost_responses": 1, "transient_errors": 1}),
    ("kafka-shipped", {"records": 3, "max_epoch": 2, "lost_responses": 2, "delete_records": 1, "new_producer_ids": 2}),
    ("kafka-shipped", {"records": 3, "late_delivery": 1, "max_ticks": 3, "delivery_timeout": 2,
                       "producer_id_expiration": 2, "clock_skew": 1}),
    ("kafka-shipped", {"acked_prefix": 1, "records": 2, "snapshot_restored_failovers": 1,
                       "restarted_replica_failovers": 1, "leader_failovers": 1, "delete_records": 1}),
    ("broker-0.11", {"records": 3, "max_in_flight": 1, "lost_responses": 1, "delete_records": 1}),
    ("broker-1.0.0-1.0.1", {"acked_prefix": 1, "records": 2, "delete_records": 2, "lost_responses": 2}),
    ("kip360-designed", {"records": 3, "lost_responses": 2, "delete_records": 1, "max_ticks": 2,
                         "delivery_timeout": 1}),
]


@pytest.mark.parametrize(("variant", "bounds"), ADHOC, ids=[f"{v}-{i}" for i, (v, _) in enumerate(ADHOC)])
def test_same_state_graph_as_the_older_machine_off_the_specs(variant: str, bounds: dict[str, int]) -> None:
    from eoscheck.checker.explore.options import ExploreOptions
    options = ExploreOptions(stop_at_first=False, check_deadlock=False)
    switches = OLD.resolve_switches(variant, {})
    full = {name: b.default for name, b in OLD.bounds.items()} | bounds
    old = explore(OLD.build(switches, full), options)
    new = explore(PRESET.build(switches, full), options)
    assert outcome(new) == outcome(old)
    assert new.stats.distinct == old.stats.distinct > 50


def test_a_twins_chart_draws_the_idempotent_actors(tmp_path: Path) -> None:
    # HandleProduce is both a transactional and an idempotent rule: the chart takes the one that made the step
    from eoscheck.checker.chart import chart_of_counterexample
    from eoscheck.checker.counterexample import load_counterexample
    twin = _write_twin(REPO / "specs" / "first-write-reorder-duplicate-shipped.toml", tmp_path)
    assert main(["check", str(twin), "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    chart = chart_of_counterexample(load_counterexample(
        tmp_path / "out" / f"{twin.stem}.IdempotentNoDuplicates.json"))
    assert chart.lanes == ["client[0]", "idempotent leader"]
    kinds = {(e.kind, e.lane) for r in chart.rows for e in r.events}
    assert {("send", "client[0]"), ("receive", "idempotent leader"), ("send", "idempotent leader"),
            ("receive", "client[0]")} <= kinds


def test_the_name_kafka_idempotent_produce_runs_the_preset() -> None:
    md = find_model("kafka.idempotent_produce")
    m = md.machine("kafka-shipped")
    assert isinstance(m, PresetMachine) and set(m.properties()) == set(OLD.properties)
    assert md.variants == OLD.variants and md.bounds == OLD.bounds and md.switches == OLD.switches
    assert list(m.chart_lanes())[:2] == ["producer[0]", "leader"]  # the older machine's lane names


def test_kip360_bump_rewrites_the_batches_in_flight() -> None:
    # review finding 8, on what the name now runs: bumpIdempotentEpochAndResetIdIfNeeded runs at the top
    # of every Sender.runOnce; startSequencesAtBeginning rewrites the batches whose requests are on the wire
    from eoscheck.model.state import INFLIGHT
    m = find_model("kafka.idempotent_produce").machine(
        "kafka-shipped", None, {"records": 2, "max_in_flight": 2, "lost_responses": 1, "transient_errors": 1})
    bumped = [(m.view(s).client[0], m.view(t).client[0]) for s, step, t in reachable_steps(m)
              if step[0] == "BumpEpoch" and any(b.status == INFLIGHT for b in m.view(s).client[0].batches)]
    assert bumped
    for _, after in bumped:
        rewritten = [b for b in after.batches if b.status == INFLIGHT]
        assert rewritten and all(b.sequence_reset and b.epoch == after.epoch for b in rewritten)


def test_leader_and_follower_expire_producers_in_separate_steps() -> None:
    # review finding 22, on what the name now runs: each replica runs its own PeriodicProducerExpirationCheck
    m = find_model("kafka.idempotent_produce").machine(
        "kafka-shipped", None, {"acked_prefix": 1, "records": 1, "lost_responses": 0, "producer_id_expiration": 1,
                                "max_ticks": 1, "leader_failovers": 1})
    leader_only = follower_only = False
    for s, step, t in reachable_steps(m):
        if step[0] not in ("ExpireProducerIds", "ExpireFollowerProducerIds"):
            continue
        a, b = m.view(s), m.view(t)
        leader_kept = a.idem_leader.producers == b.idem_leader.producers
        follower_kept = a.idem_follower[0].producers == b.idem_follower[0].producers
        follower_only |= leader_kept and not follower_kept
        leader_only |= follower_kept and not leader_kept
    assert follower_only and leader_only
