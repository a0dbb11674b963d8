"""The ``kafka.eos_pipeline`` preset of ``kafka.eos`` (beside ``eos_presets``, whose ``Preset`` maps
bounds by name: this one needs arithmetic and refusals). An older machine's configuration space (its switches, variants, bounds and
properties, under its own names) mapped onto one configuration of ``kafka.eos``.

A ``Preset`` says how: the older switches become a ``Protocol`` (``protocol._LEGACY_NAMES`` read
backwards, over the protocol the older machine hard-wires), the older bounds become ``kafka.eos``
bounds (``bounds``; a bound the preset cannot express is refused in one line), and the older
property names are ``kafka.eos`` properties of the same meaning (``properties``). ``preset_model``
gives the result as a ``ModelDef`` so a spec of the older model runs on ``kafka.eos`` by naming it,
``model = "eoscheck.model.machines.eos_pipeline_preset:EOS_PIPELINE"``; ``tests/test_eos_presets.py`` compares
verdicts and trace lengths with the older machine (``bench/compare_presets.py`` prints the table).

Only ``kafka.eos_pipeline`` is a preset here; the name stays the older machine's until every
committed spec agrees (see ``docs/eos-pipeline-preset.md``).
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eoscheck.checker.registry import ModelDef, SwitchValue

from ..protocol import (
    _LEGACY_NAMES,
    KAFKA_3_0,
    PIPELINE,
    VARIANTS,
    Deployment,
    Protocol,
    TransactionVersion,
    TxnOffsetCommitCheck,
)
from .eos_model import BOUNDS as EOS_BOUNDS
from .eos_presets import PresetMachine


@dataclass(frozen=True)
class PipelinePreset:
    """A named configuration of ``kafka.eos`` standing for an older machine."""

    name: str
    doc: str
    #: the protocol the older machine hard-wires (its switches change the rest)
    base: Protocol
    #: kafka.eos bounds the preset fixes (the rest are kafka.eos's defaults or mapped)
    fixed: Mapping[str, int]
    #: older bounds -> kafka.eos bounds; ValueError (one line) for one it cannot express
    bounds: Callable[[Mapping[str, int]], dict[str, int]]
    #: older property name -> the kafka.eos property that checks the same thing
    properties: Mapping[str, str] = field(default_factory=dict)
    #: older temporal property name -> the kafka.eos temporal property (checked under kafka.eos's fairness)
    temporal: Mapping[str, str] = field(default_factory=dict)


def protocol_of(preset: PipelinePreset, switches: Mapping[str, SwitchValue]) -> Protocol:
    """The ``Protocol`` an older machine's switch values stand for."""
    decisions: dict[str, Any] = {}
    for decision, legacy in _LEGACY_NAMES[preset.name].items():
        if legacy not in switches:
            continue
        value = switches[legacy]
        if decision == "transaction_version":
            value = TransactionVersion.TV2 if value else TransactionVersion.TV1
        decisions[decision] = value
    protocol = preset.base.with_(**decisions)
    # The pipeline's per-partition members send their generation and member id with TxnOffsetCommit, as
    # its per-thread ones do (Streams' exactly_once sends the group id only: kafka.eos's default); only a
    # KIP-447 check reads them, so the decision is set only where it matters (twins stay minimal).
    relevant = (protocol.deployment == Deployment.PER_PARTITION
                and protocol.txn_offset_commit_check != TxnOffsetCommitCheck.PRE_KIP447)
    return protocol.with_(per_partition_group_metadata=relevant) if relevant else protocol


def eos_bounds(preset: PipelinePreset, bounds: Mapping[str, int]) -> dict[str, int]:
    """The complete kafka.eos bounds for an older machine's bounds (ValueError: not expressible)."""
    out = {name: b.default for name, b in EOS_BOUNDS.items()}
    out.update(preset.fixed)
    out.update(preset.bounds(bounds))
    for name, value in out.items():
        b = EOS_BOUNDS[name]
        if not b.min <= value <= b.max:
            raise ValueError(f"preset {preset.name}: kafka.eos bound {name}={value} is outside {b.min}..{b.max}")
    return out


def build_preset(preset: PipelinePreset, switches: Mapping[str, SwitchValue], bounds: Mapping[str, int]) -> PresetMachine:
    return PresetMachine(protocol_of(preset, switches), eos_bounds(preset, bounds), preset.properties,
                         preset.temporal)


def preset_model(preset: PipelinePreset, older: ModelDef) -> ModelDef:
    """The older model's configuration space, built as ``kafka.eos``."""
    return ModelDef(name=preset.name, doc=f"{older.doc} (as a preset of kafka.eos: {preset.doc})",
                    variants=older.variants, default_variant=older.default_variant, switches=older.switches,
                    bounds=older.bounds, properties={k: older.properties[k] for k in preset.properties},
                    build=lambda switches, bounds: build_preset(preset, switches, bounds),
                    temporal={k: older.temporal[k] for k in preset.temporal})


# --- kafka.eos_pipeline ---------------------------------------------------------------------------------

def _pipeline_bounds(b: Mapping[str, int]) -> dict[str, int]:
    # a transaction per record plus one retry (the pipeline's are unbounded, cut by its epochs)
    return {"input_records": b["records"], "transactions": b["records"] + 1,
            "members": b["instances"], "producers": b["instances"],
            "rebalances": b["max_generation"] - 1, "rejoins": b["rejoins"],
            # the same Short.MAX_VALUE stand-in, and like the pipeline no state with an exhausted epoch
            # (>= max_epoch - 1) is explored: no producer-id rotation, which the pipeline does not model
            "max_epoch": b["max_epoch"], "exhausted_epochs": 0,
            "coordinator_failovers": b["failovers"], "produce_timeouts": b["produce_timeouts"],
            "endtxn_timeouts": b.get("endtxn_timeouts", 0)}


PIPELINE_PRESET = PipelinePreset(
    name=PIPELINE,
    doc="one output partition, one batch per transaction and one in flight, a group of `instances` members with "
        "per-thread producers, records + 1 transactions per producer and one timeout abort",
    # the pipeline's coordinator is hard-wired to KIP-360 as shipped, its clients to KIP-360
    base=KAFKA_3_0,
    fixed={"partitions": 1, "batches": 1, "max_in_flight": 1, "txn_timeouts": 1},
    bounds=_pipeline_bounds,
    properties={name: name for name in ("NoDuplicateOutput", "OffsetsAgreeWithOutput", "NoHangingTransaction",
                                        "ZombieNeverCommitsOffsets", "ValidTxnTransitions")},
    # kafka.eos's are the pipeline's, under its fairness with kafka.eos's step names (eos_liveness)
    temporal={name: name for name in ("TransactionsComplete", "MarkersComplete", "RebalanceSettles")},
)


def _pipeline_model() -> ModelDef:
    from .eos_pipeline import MODEL
    return preset_model(PIPELINE_PRESET, MODEL)


#: ``kafka.eos_pipeline``'s configuration space on kafka.eos (``model = "<this module>:EOS_PIPELINE"``)
EOS_PIPELINE = _pipeline_model()

__all__ = ["EOS_PIPELINE", "PIPELINE_PRESET", "PipelinePreset", "build_preset", "eos_bounds", "preset_model",
           "protocol_of"]


# --- twins: a pipeline spec as a plain kafka.eos spec -----------------------------------------------------

#: a twin's file name: this prefix and the original's name
TWIN_PREFIX = "eos-group-twin-"


def closest_variant(protocol: Protocol, prefer: Protocol | None = None) -> tuple[str, dict[str, SwitchValue]]:
    """The named kafka.eos variant with the fewest decisions differing from ``protocol``, and those
    decisions as switch overrides (ties: the variant that is ``prefer``, then the first in
    ``protocol.VARIANTS``)."""
    wanted = protocol.as_switches()

    def overrides(name: str) -> dict[str, SwitchValue]:
        have = VARIANTS[name].protocol.as_switches()
        return {k: v for k, v in wanted.items() if have[k] != v}
    name = min(VARIANTS, key=lambda n: (len(overrides(n)), VARIANTS[n].protocol != prefer))
    return name, overrides(name)


def twin_text(path: Path, length: int | None) -> str:
    """The kafka.eos twin of the kafka.eos_pipeline spec at ``path``: the preset's configuration as a
    plain kafka.eos spec (closest named variant with overrides, the mapped bounds that differ from
    kafka.eos's defaults, the same properties, ``[check]`` and verdict); ``length``: the preset's trace
    length of a violation (longer than the pipeline's: its steps are finer)."""
    from .eos_pipeline import MODEL as PIPELINE_MODEL
    from .eos_twins import _table, _value
    raw = tomllib.loads(path.read_text())
    if raw.get("model") != PIPELINE_MODEL.name:
        raise ValueError(f"{path}: a {raw.get('model')} spec, not one of {PIPELINE_MODEL.name}")
    switches = PIPELINE_MODEL.resolve_switches(raw.get("variant", PIPELINE_MODEL.default_variant),
                                               raw.get("switches", {}))
    variant, overrides = closest_variant(protocol_of(PIPELINE_PRESET, switches), PIPELINE_PRESET.base)
    older = {name: b.default for name, b in PIPELINE_MODEL.bounds.items()} | raw.get("bounds", {})
    bounds = {k: v for k, v in eos_bounds(PIPELINE_PRESET, older).items() if v != EOS_BOUNDS[k].default}
    check = dict(raw.get("check", {}))
    names = {**PIPELINE_PRESET.properties, **PIPELINE_PRESET.temporal}
    check["properties"] = [names[p] for p in check.get("properties", PIPELINE_PRESET.properties)]
    expect = dict(raw.get("expect", {}))
    if "property" in expect:
        expect["property"] = names[expect["property"]]
    if length is not None:
        expect["length"] = length
    description = (f"kafka.eos twin of {path.stem} (kafka.eos_pipeline preset, bench/compare_presets.py): "
                   + raw.get("description", path.stem).rstrip("."))
    lines = [f"description = {_value(description)}", 'model = "kafka.eos"', f"variant = {_value(variant)}"]
    lines += _table("switches", overrides) + _table("bounds", bounds) + _table("check", check)
    lines += _table("expect", expect)
    return "\n".join(line for line in lines if line).rstrip("\n") + "\n"


__all__ += ["TWIN_PREFIX", "closest_variant", "twin_text"]
