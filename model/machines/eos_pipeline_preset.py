"""``kafka.eos_pipeline`` as a preset of ``kafka.eos`` (the mechanism: ``eos_presets.Preset``): a group of
``instances`` members with per-thread (or per-partition) producers, one output partition, one batch per
transaction and one in flight, ``records + 1`` transactions per producer and one timeout abort.

Its switches are protocol decisions over Kafka 3.0's (its coordinator is hard-wired to KIP-360 as
shipped, its clients to KIP-360), with its boolean ``tv2_epoch_bump`` read as the transaction version;
its per-partition members send their group metadata where a KIP-447 check reads it. Its bounds need
arithmetic (``To``): ``transactions = records + 1``, ``rebalances = max_generation - 1``; a bound
whose kafka.eos value is out of range is refused in one line. ``docs/eos-presets.md`` has the table.

The name ``kafka.eos_pipeline`` is this preset (``model/registry.py``); the hand-written machine
stays as ``registry.EOS_PIPELINE_MACHINE`` for the agreement tests (``tests/test_eos_pipeline_preset.py``,
``bench/compare_presets.py``).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from eoscheck.checker.registry import SwitchValue

from ..protocol import (
    KAFKA_3_0,
    PIPELINE,
    VARIANTS,
    Deployment,
    Protocol,
    TransactionVersion,
    TxnOffsetCommitCheck,
)
from .eos_model import BOUNDS as EOS_BOUNDS
from .eos_presets import Preset, To


def _group_metadata(protocol: Protocol) -> Protocol:
    # The pipeline's per-partition members send their generation and member id with TxnOffsetCommit, as
    # its per-thread ones do (Streams' exactly_once sends the group id only: kafka.eos's default); only a
    # KIP-447 check reads them, so the decision is set only where it matters (twins stay minimal).
    relevant = (protocol.deployment == Deployment.PER_PARTITION
                and protocol.txn_offset_commit_check != TxnOffsetCommitCheck.PRE_KIP447)
    return protocol.with_(per_partition_group_metadata=relevant) if relevant else protocol


def _transaction_version(tv2_epoch_bump: SwitchValue) -> TransactionVersion:
    return TransactionVersion.TV2 if tv2_epoch_bump else TransactionVersion.TV1


PIPELINE_PRESET = Preset(
    name="eos_pipeline",
    legacy=PIPELINE,
    doc="Exactly-once consume-transform-produce: a consumer group of `instances` members with per-thread "
        "(KIP-447) or per-partition producers, TxnOffsetCommit fencing, the timeout abort, late produce requests "
        "and EndTxn, coordinator failover, KIP-890; on kafka.eos with one output partition, one batch per "
        "transaction and one in flight, records + 1 transactions per producer and one timeout abort",
    base=KAFKA_3_0,
    switch_values={"transaction_version": _transaction_version},
    derive=_group_metadata,
    # the same Short.MAX_VALUE stand-in, and like the pipeline no state with an exhausted epoch (>= max_epoch - 1)
    # is explored: no producer-id rotation, which the pipeline does not model
    fixed={"partitions": 1, "batches": 1, "max_in_flight": 1, "txn_timeouts": 1, "exhausted_epochs": 0},
    # a transaction per record plus one retry (the pipeline's are unbounded, cut by its epochs)
    bounds={"records": ("input_records", To("transactions", 1)), "instances": ("members", "producers"),
            "max_generation": To("rebalances", -1), "rejoins": "rejoins", "max_epoch": "max_epoch",
            "failovers": "coordinator_failovers", "produce_timeouts": "produce_timeouts",
            "endtxn_timeouts": "endtxn_timeouts"},
    properties={name: name for name in ("NoDuplicateOutput", "OffsetsAgreeWithOutput", "NoHangingTransaction",
                                        "ZombieNeverCommitsOffsets", "ValidTxnTransitions")},
    # kafka.eos's are the pipeline's, under its fairness with kafka.eos's step names (eos_liveness)
    temporal={name: name for name in ("TransactionsComplete", "MarkersComplete", "RebalanceSettles")},
    # the pipeline's lanes, in its order: app[i] is member i and its producer, then the coordinator, one output leader
    lanes={"producer": "app[]", "member": "app[]", "next_producer_id": "txn coordinator", "leader": "output leader"},
    # e.g. max_generation = 10 would be rebalances = 9, beyond what kafka.eos's group declares
    within_eos_ranges=True,
)

__all__ = ["PIPELINE_PRESET"]


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
    variant, overrides = closest_variant(PIPELINE_PRESET.protocol(switches), PIPELINE_PRESET.base)
    older = {name: b.default for name, b in PIPELINE_MODEL.bounds.items()} | raw.get("bounds", {})
    bounds = {k: v for k, v in PIPELINE_PRESET.eos_bounds(older).items() if v != EOS_BOUNDS[k].default}
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
