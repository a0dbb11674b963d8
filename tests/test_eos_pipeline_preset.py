"""``kafka.eos_pipeline`` as a preset of kafka.eos (model/machines/eos_pipeline_preset.py): the mapping of
switches, bounds and properties, its refusals, the name building the preset, and its agreement in verdict
with the hand-written machine (``registry.EOS_PIPELINE_MACHINE``) on every spec both finish
(bench/compare_presets.py measures every spec)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
from eoscheck.checker.explore import explore
from eoscheck.checker.registry import find_model
from eoscheck.checker.spec import build_machine, load_spec, spec_to_options
from eoscheck.model.machines.eos_pipeline import EosPipeline
from eoscheck.model.machines.eos_pipeline_preset import (
    PIPELINE_PRESET,
    TWIN_PREFIX,
    closest_variant,
    twin_text,
)
from eoscheck.model.machines.eos_presets import PresetMachine
from eoscheck.model.protocol import LEGACY_ALIASES, PIPELINE, legacy_switches
from eoscheck.model.registry import EOS_PIPELINE_MACHINE as PIPELINE_MODEL

EOS_PIPELINE = find_model("kafka.eos_pipeline")
OLD = "eoscheck.model.registry:EOS_PIPELINE_MACHINE"
SPECS = Path(__file__).resolve().parent.parent / "specs"
PIPELINE_DEFAULTS = {name: b.default for name, b in PIPELINE_MODEL.bounds.items()}


@pytest.mark.parametrize("variant", sorted(PIPELINE_MODEL.variants))
def test_switches_map_to_the_protocol_and_back(variant: str) -> None:
    switches = PIPELINE_MODEL.resolve_switches(variant, {})
    protocol = PIPELINE_PRESET.protocol(switches)
    assert legacy_switches(protocol, PIPELINE) == switches
    # the same decisions as the legacy alias of that variant name, where the pipeline reads them
    alias = LEGACY_ALIASES[(PIPELINE, variant)]
    assert legacy_switches(alias, PIPELINE) == legacy_switches(protocol, PIPELINE)


def test_default_bounds_map_onto_kafka_eos() -> None:
    out = PIPELINE_PRESET.eos_bounds(PIPELINE_DEFAULTS)
    assert {k: out[k] for k in ("input_records", "transactions", "members", "producers", "rebalances", "rejoins",
                                "max_epoch", "exhausted_epochs", "partitions", "batches", "max_in_flight",
                                "txn_timeouts", "coordinator_failovers", "produce_timeouts", "endtxn_timeouts",
                                "restarts", "lost_responses")} == {
        "input_records": 1, "transactions": 2, "members": 2, "producers": 2, "rebalances": 1, "rejoins": 0,
        "max_epoch": 6, "exhausted_epochs": 0, "partitions": 1, "batches": 1, "max_in_flight": 1,
        "txn_timeouts": 1, "coordinator_failovers": 0, "produce_timeouts": 0, "endtxn_timeouts": 0, "restarts": 0,
        "lost_responses": 0}
    bigger = PIPELINE_PRESET.eos_bounds({**PIPELINE_DEFAULTS, "records": 3, "max_generation": 4, "rejoins": 2,
                                          "instances": 1, "failovers": 2, "produce_timeouts": 1, "endtxn_timeouts": 2,
                                          "max_epoch": 3})
    assert (bigger["input_records"], bigger["transactions"], bigger["rebalances"], bigger["rejoins"],
            bigger["members"], bigger["coordinator_failovers"], bigger["produce_timeouts"], bigger["endtxn_timeouts"],
            bigger["max_epoch"]) == (3, 4, 3, 2, 1, 2, 1, 2, 3)


def test_the_preset_explores_the_pipelines_epochs_and_no_exhausted_one() -> None:
    """The pipeline explores epochs below max_epoch - 1 and never rotates a producer id: the preset keeps
    its max_epoch and leaves out the exhausted epochs (max_epoch - 1 and up)."""
    m = PIPELINE_PRESET.build(PIPELINE_MODEL.resolve_switches("kip890-tv2", {}),
                     {**PIPELINE_DEFAULTS, "instances": 1, "max_epoch": 5})
    assert m.max_epoch == 5 and m.explored_epoch == 3


@pytest.mark.parametrize(("changes", "needle"), [
    ({"max_generation": 10}, "rebalances=9 is outside"),
    ({"max_generation": 0}, "rebalances=-1 is outside"),
])
def test_bounds_the_preset_cannot_express_are_refused(changes: dict[str, int], needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        PIPELINE_PRESET.eos_bounds({**PIPELINE_DEFAULTS, **changes})


def test_per_partition_variants_build_with_one_producer_instance_per_member() -> None:
    switches = PIPELINE_MODEL.resolve_switches("eos-alpha-kip447", {})
    m = PIPELINE_PRESET.build(switches, PIPELINE_DEFAULTS)
    assert m.alpha and m.n_producers == m.members == 2
    # the pipeline's per-partition members send their group metadata; only a KIP-447 check reads it
    assert m.protocol.per_partition_group_metadata
    pre = PIPELINE_PRESET.build(PIPELINE_MODEL.resolve_switches("eos-alpha-pre-kip447", {}),
                       PIPELINE_DEFAULTS)
    assert pre.alpha and not pre.protocol.per_partition_group_metadata


def test_the_name_is_the_preset_and_the_hand_written_machine_stays() -> None:
    assert EOS_PIPELINE.build == PIPELINE_PRESET.build
    assert isinstance(EOS_PIPELINE.machine(), PresetMachine)
    assert isinstance(find_model(OLD).machine(), EosPipeline)
    assert (EOS_PIPELINE.variants, EOS_PIPELINE.switches, EOS_PIPELINE.bounds) == (
        PIPELINE_MODEL.variants, PIPELINE_MODEL.switches, PIPELINE_MODEL.bounds)


def test_the_preset_checks_exactly_the_pipelines_properties() -> None:
    m = EOS_PIPELINE.machine()
    assert isinstance(m, PresetMachine)
    assert set(m.properties()) == set(EOS_PIPELINE.properties) == set(PIPELINE_MODEL.properties)
    assert set(m.temporal_properties()) == set(EOS_PIPELINE.temporal) == set(PIPELINE_MODEL.temporal)
    assert all(p.name == name for name, p in m.temporal_properties().items())
    assert all(p.name == name for name, p in m.properties().items())
    assert EOS_PIPELINE.variants == PIPELINE_MODEL.variants and EOS_PIPELINE.bounds == PIPELINE_MODEL.bounds


def _outcome(spec_path: Path, model: str | None = None) -> tuple[str, str | None, int | None]:
    """Verdict, first violated property and its trace length of the spec (on ``model`` if given)."""
    spec = load_spec(spec_path)
    if model is not None:
        spec = dataclasses.replace(spec, model=model)
    result = explore(build_machine(spec), spec_to_options(spec))
    if not result.violations:
        return result.verdict, None, None
    v = result.violations[0]
    return result.verdict, v.property, len(v.trace)


#: specs where the preset and the older machine agree in verdict (bench/results/presets.md has every
#: spec): (spec, older trace length, preset trace length). kafka.eos's steps are finer (InitProducerId
#: before the first transaction, Drain / HandleProduce / HandleProduceResponse for one produce), so a
#: violation's shortest trace is longer; the verdict is the same.
AGREEING = [
    ("eos-beta-pre-kip447-zombie", 10, 13),
    ("eos-beta-pre-kip447-stale-offset", 20, 26),
    ("late-produce-hanging-kip447", 8, 10),
    ("late-produce-kip447", 17, 22),
    ("stale-marker-no-coordinator-epoch-check", 15, 18),
    ("timeout-abort-no-bump-hanging", 7, 8),
    ("timeout-abort-no-bump", 11, 14),
    ("late-produce-kip890-verification", None, None),
    # a late EndTxn (endtxn_timeouts): TV1 ends the next transaction, TV2 fences it or answers it as a retry
    ("stale-end-txn-tv1", 16, 19),
    ("stale-end-txn-tv2", None, None),
    ("stale-end-txn-tv2-kafka-19367", None, None),
    ("coordinator-failover", None, None),
    ("late-produce-kip890-tv2", None, None),
    ("late-produce-kip890-tv2-kafka-19367", None, None),
    # per-partition producers (eos_alpha): the new owner's InitProducerId fences the previous owner
    ("kafka-0.11-eos-alpha", 11, 14),
    ("kafka-2.4-eos-alpha", None, None),
    ("eos-alpha-pre-kip447", None, None),
]
#: agreeing specs whose preset run takes a minute or more (bench/results/presets.md has their counts)
AGREEING_SLOW = [
    ("eos-beta-kip447", None, None),
    ("kip890-tv2", None, None),
    ("timeout-abort-bump", None, None),
    ("tv2-client-upgrade", None, None),
    ("tv2-client-downgrade", None, None),
    ("eos-alpha-kip447", None, None),  # 260k states on the preset
    # liveness (eos_liveness) under the pipeline's fairness with kafka.eos's step names
    ("liveness-lso-stuck-kafka-0.11", 11, 14),
    ("liveness-lso-advances-kafka-2.4", None, None),
    # two records: 328,919 states on the preset, 71,066 on the hand-written machine (one record from session 7 to 17)
    ("liveness-eos-beta-kip447", None, None),
]

@pytest.mark.parametrize(("name", "old_length", "preset_length"),
                         AGREEING + [pytest.param(*row, marks=pytest.mark.slow) for row in AGREEING_SLOW])
def test_preset_agrees_with_the_older_machine(name: str, old_length: int | None, preset_length: int | None) -> None:
    path = SPECS / f"{name}.toml"
    old = _outcome(path, OLD)
    new = _outcome(path)
    assert old[:2] == new[:2] and old[0] == ("holds" if old_length is None else "violated")
    assert (old[2], new[2]) == (old_length, preset_length)
    expect = load_spec(path).expect
    assert expect.length in (None, preset_length)


def test_every_pipeline_spec_is_in_the_agreement_lists_or_explained() -> None:
    names = {p.stem for p in SPECS.glob("*.toml") if load_spec(p).model == PIPELINE}
    # the kafka.eos twins went when the name became the preset: each was the same configuration
    assert not list(SPECS.glob(f"{TWIN_PREFIX}*.toml")) and not list((SPECS / "large").glob(f"{TWIN_PREFIX}*.toml"))
    assert names == {name for name, _, _ in AGREEING + AGREEING_SLOW} | set(PRESET_ONLY)


#: specs the hand-written machine does not finish (kip890-tv2-kafka-19367: cut at 700 s with 905,000 states);
#: 102,201 states since session 13 (a verification answering PRODUCER_FENCED reaches the producer as
#: INVALID_PRODUCER_EPOCH, which it aborts on instead of failing; 52,959 before); 102,781 since session 14
#: (TxnOffsetCommit's verification answers INVALID_PRODUCER_EPOCH too, a label that no longer merges with
#: PRODUCER_FENCED); 101,854 since session 17 (a 4.0.0 coordinator answers CONCURRENT_TRANSACTIONS to a TV2
#: EndTxn or AddPartitionsToTxn while a transition is pending, before its epoch checks: KAFKA-18464, KAFKA-18660);
#: 101,778 since session 20 (the single-bump fence-abort writes lastEpoch = the fenced epoch at TV2, as 4.0.1's
#: prepareAbortOrCommit does, the same metadata as the client's own TV2 abort, so those states merge)
PRESET_ONLY = {"kip890-tv2-kafka-19367": 101_778}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PRESET_ONLY))
def test_specs_only_the_preset_finishes(name: str) -> None:
    spec = load_spec(SPECS / f"{name}.toml")
    result = explore(build_machine(spec), spec_to_options(spec))
    assert (result.verdict, result.stats.distinct) == ("holds", PRESET_ONLY[name]) and spec.expect.verdict == "holds"


PIPELINE_SPECS = sorted([*SPECS.glob("*.toml"), *(SPECS / "large").glob("*.toml")])


@pytest.mark.parametrize("path", [p for p in PIPELINE_SPECS if load_spec(p).model == PIPELINE], ids=lambda p: p.stem)
def test_twin_text_writes_the_same_configuration_as_plain_kafka_eos(path: Path, tmp_path: Path) -> None:
    """What a removed twin was: the spec's preset configuration as a plain kafka.eos spec (the same protocol,
    bounds and properties, so the same state graph), e.g. to add bounds of kafka.eos the pipeline lacks."""
    spec = load_spec(path)
    twin_path = tmp_path / f"{TWIN_PREFIX}{path.stem}.toml"
    twin_path.write_text(twin_text(path, None))
    twin = load_spec(twin_path)
    preset, plain = build_machine(spec), build_machine(twin)
    assert type(plain).__name__ == "EosMachine" and isinstance(preset, PresetMachine)
    assert plain.protocol == preset.protocol and plain.bounds == preset.bounds
    assert twin.check.properties == tuple(preset.preset_properties.get(p, preset.preset_temporal.get(p))
                                          for p in spec.check.properties or PIPELINE_PRESET.properties)


def test_a_twin_takes_the_closest_named_variant_and_overrides_the_rest() -> None:
    from eoscheck.model.protocol import KAFKA_3_6, KAFKA_3_8
    assert closest_variant(KAFKA_3_8) == ("kafka-3.6-3.9", {})
    assert closest_variant(KAFKA_3_6) == ("kafka-3.6-3.7", {})
    name, overrides = closest_variant(KAFKA_3_8.with_(client_tv_change="upgrade"))
    assert name == "kafka-3.6-3.9" and overrides == {"client_tv_change": "upgrade"}
    # a tie goes to the preferred protocol's variant, else to the first listed: 3.3's checks with the
    # 3.0-3.1 client's failed send() is one decision from kafka-2.5-2.8, kafka-3.0-3.5 and kafka-3.0-3.2
    tie = PIPELINE_PRESET.base.with_(client_send_error_aborts=False)
    assert closest_variant(tie) == ("kafka-2.5-2.8", {"txn_offset_commit_check": "current"})
    assert closest_variant(tie, PIPELINE_PRESET.base) == ("kafka-3.0-3.5", {"client_send_error_aborts": False})
    # KIP-447's decisions alone: kafka-2.5-2.8 is one decision further (its 2.7-2.8 client's failed send())
    pre_kip447 = PIPELINE_PRESET.base.with_(txn_offset_commit_check="pre-kip447", require_stable="never")
    assert closest_variant(pre_kip447) == (
        "kafka-3.0-3.5", {"txn_offset_commit_check": "pre-kip447", "require_stable": "never"})


def test_a_spec_on_the_preset_with_an_inexpressible_bound_is_one_line(tmp_path: Path) -> None:
    spec = tmp_path / "late-endtxn.toml"
    spec.write_text('model = "kafka.eos_pipeline"\nvariant = "kip890-tv2"\n'
                    '[bounds]\nmax_generation = 10\n')
    before = sorted(p.name for p in tmp_path.iterdir())
    done = subprocess.run([sys.executable, "-m", "eoscheck.checker.cli", "check", str(spec), "--no-progress",
                           "--out", str(tmp_path / "ce")], capture_output=True, text=True, check=False, timeout=120)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "rebalances=9" in lines[0]
    assert "Traceback" not in done.stderr and sorted(p.name for p in tmp_path.iterdir()) == before


def test_the_comparison_counts_only_complete_runs_as_agreeing() -> None:
    sys.path.insert(0, str(SPECS.parent / "bench"))
    try:
        from compare_presets import Outcome, Row
    finally:
        sys.path.pop(0)
    cut = Outcome("incomplete (time)")
    assert not Row("x", cut, cut).agrees and not Row("x", cut, cut).verdict_agrees
    longer = Row("y", Outcome("violated", "P", 10), Outcome("violated", "P", 13))
    assert longer.verdict_agrees and not longer.agrees
    assert Row("z", Outcome("holds"), Outcome("holds")).agrees
    assert not Row("r", Outcome("holds"), Outcome("refused: no")).verdict_agrees
