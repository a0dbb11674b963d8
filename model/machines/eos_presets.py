"""Presets of ``kafka.eos``: an older machine's configuration space (its variants, switches, bounds and
properties, as its specs write them) mapped onto ``kafka.eos``'s, so that a spec of the older machine
runs on ``kafka.eos``.

A ``Preset`` names the ``kafka.eos`` bounds it pins (``fixed``: e.g. no transactional producers),
maps each of the older machine's bounds and properties to ``kafka.eos``'s, and takes the older
machine's switches as ``model.protocol`` decisions (the idempotent machine's switch names are
decision names). ``Preset.model_def`` publishes it as a model of its own (``kafka.eos.<preset>``)
with the older machine's variants, defaults and property names: the same spec text, with
``model`` changed, runs on ``kafka.eos``; ``eos_spec`` writes the same configuration as a plain
``kafka.eos`` spec (its twin).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from eoscheck.checker.liveness.temporal import TemporalProperty
from eoscheck.checker.machine import Property
from eoscheck.checker.registry import ModelDef, SwitchValue

from ..protocol import _LEGACY_NAMES, IDEMPOTENT, VARIANTS, Protocol
from .eos import PROPERTY_DOCS, EosMachine
from .eos_idempotent_bounds import TEMPORAL_DOCS
from .eos_model import BOUNDS as EOS_BOUNDS


class PresetMachine(EosMachine):
    """``kafka.eos`` under a preset: its properties under the older machine's names, and only those."""

    def __init__(self, protocol: Protocol, bounds: Mapping[str, int], properties: Mapping[str, str],
                 temporal: Mapping[str, str], memoize: bool = True, lanes: Mapping[str, str] | None = None) -> None:
        self.preset_properties = dict(properties)
        self.preset_temporal = dict(temporal)
        if lanes:  # the older machine's lane names on charts
            # this instance's lanes shadow the class's table (mypy allows no instance value for a ClassVar)
            self.chart_parts = {**lanes, **{k: v for k, v in type(self).chart_parts.items() if k not in lanes}}  # type: ignore[misc]
        super().__init__(protocol, bounds, memoize=memoize)

    def properties(self) -> dict[str, Property]:
        own = super().properties()
        return {old: replace(own[new], name=old) for old, new in self.preset_properties.items()}

    def temporal_properties(self) -> dict[str, TemporalProperty]:
        own = super().temporal_properties()
        return {old: replace(own[new], name=old) for old, new in self.preset_temporal.items()}


@dataclass(frozen=True)
class Preset:
    """A named configuration of ``kafka.eos`` reproducing the older machine ``legacy``."""

    name: str
    legacy: str
    doc: str
    #: kafka.eos bounds the preset pins, whatever the spec says
    fixed: Mapping[str, int]
    #: the older machine's bound -> kafka.eos's
    bounds: Mapping[str, str]
    #: the older machine's property -> kafka.eos's
    properties: Mapping[str, str]
    #: the older machine's temporal property -> kafka.eos's
    temporal: Mapping[str, str]
    #: kafka.eos part -> the chart lane the older machine drew it on
    lanes: Mapping[str, str] = field(default_factory=dict)

    @property
    def model_name(self) -> str:
        return f"kafka.eos.{self.name}"

    def eos_bounds(self, bounds: Mapping[str, int]) -> dict[str, int]:
        """Complete kafka.eos bounds for the older machine's ``bounds`` (an unknown one: ValueError)."""
        unknown = sorted(set(bounds) - set(self.bounds))
        if unknown:
            raise ValueError(f"preset {self.name} has no bound {unknown[0]!r}; its bounds: "
                             f"{', '.join(sorted(self.bounds))}")
        out = {name: b.default for name, b in EOS_BOUNDS.items()}
        out.update({self.bounds[k]: v for k, v in bounds.items()})
        out.update(self.fixed)
        return out

    def protocol(self, switches: Mapping[str, SwitchValue]) -> Protocol:
        """The ``Protocol`` of the older machine's switch values (the decisions it does not read keep
        kafka.eos's defaults, which do not reach its mechanisms)."""
        names = {legacy: decision for decision, legacy in _LEGACY_NAMES[self.legacy].items()}
        unknown = sorted(set(switches) - set(names))
        if unknown:
            raise ValueError(f"preset {self.name} has no switch {unknown[0]!r}; its switches: "
                             f"{', '.join(sorted(names))}")
        return Protocol().with_(**{names[k]: v for k, v in switches.items()})

    def build(self, switches: Mapping[str, SwitchValue], bounds: Mapping[str, int]) -> PresetMachine:
        return PresetMachine(self.protocol(switches), self.eos_bounds(bounds), self.properties, self.temporal,
                             lanes=self.lanes)

    def model_def(self, legacy: ModelDef, name: str | None = None) -> ModelDef:
        """The preset as a model: the older machine's variants, switches, bounds and property names (with
        the docs of the kafka.eos properties they name); ``name`` registers it under another name (an alias)."""
        return ModelDef(name=name or self.model_name, doc=f"{self.doc} (kafka.eos preset of {legacy.name})",
                        variants=legacy.variants, default_variant=legacy.default_variant, switches=legacy.switches,
                        bounds=legacy.bounds, properties={k: PROPERTY_DOCS[v] for k, v in self.properties.items()},
                        build=self.build, temporal={k: TEMPORAL_DOCS[v] for k, v in self.temporal.items()})

    def eos_variant(self, switches: Mapping[str, SwitchValue]) -> tuple[str, dict[str, SwitchValue]]:
        """The named kafka.eos variant closest to ``switches`` on the decisions the older machine
        reads, with the overrides that make it exact."""
        wanted = self.protocol(switches)
        decisions = list(_LEGACY_NAMES[self.legacy])

        def overrides(p: Protocol) -> dict[str, SwitchValue]:
            have, want = p.as_switches(), wanted.as_switches()
            return {d: want[d] for d in decisions if have[d] != want[d]}
        def distance(n: str) -> tuple[int, int, str]:
            # fewest overrides; then the variant closest on every decision (the preset's others are kafka.eos's
            # defaults), so Kafka as shipped is kafka-3.0-3.5, not an older release with the same producer
            have, want = VARIANTS[n].protocol.as_switches(), wanted.as_switches()
            return len(overrides(VARIANTS[n].protocol)), sum(have[d] != want[d] for d in have), n
        name = min(VARIANTS, key=distance)
        return name, overrides(VARIANTS[name].protocol)

    def eos_spec(self, switches: Mapping[str, SwitchValue], bounds: Mapping[str, int],
                 properties: tuple[str, ...] | None) -> dict[str, Any]:
        """The same configuration as a plain ``kafka.eos`` spec: variant, switch overrides, the bounds
        that differ from kafka.eos's defaults, and the property names."""
        variant, overrides = self.eos_variant(switches)
        eos = self.eos_bounds(bounds)
        named = {k: v for k, v in eos.items() if v != EOS_BOUNDS[k].default}
        props = None if properties is None else [self.properties.get(p, self.temporal.get(p, p)) for p in properties]
        return {"variant": variant, "switches": overrides, "bounds": named, "properties": props}


IDEMPOTENT_PRODUCE = Preset(
    name="idempotent_produce",
    legacy=IDEMPOTENT,
    doc="Idempotent producers writing to one partition, with its follower: kafka.eos without transactional "
        "producers",
    fixed={"producers": 0, "partitions": 0, "input_records": 0, "produce_timeouts": 0, "txn_timeouts": 0,
           "coordinator_failovers": 0, "restarts": 0},
    bounds={"clients": "idempotent_producers", "records": "idempotent_records", "acked_prefix": "acked_prefix",
            "max_in_flight": "max_in_flight", "delivery_timeout": "delivery_timeout",
            "producer_id_expiration": "producer_id_expiration", "max_ticks": "max_ticks", "max_seq": "max_seq",
            "max_epoch": "max_epoch", "lost_responses": "lost_responses", "transient_errors": "transient_errors",
            "delete_records": "delete_records", "leader_failovers": "leader_failovers",
            "restarted_replica_failovers": "restarted_replica_failovers",
            "snapshot_restored_failovers": "snapshot_restored_failovers", "late_delivery": "late_delivery",
            "clock_skew": "clock_skew", "new_producer_ids": "new_producer_ids"},
    properties={"NoDuplicates": "IdempotentNoDuplicates", "SendOrderNoLoss": "IdempotentSendOrderNoLoss",
                "OutOfOrderOnlyOnDataLoss": "IdempotentOutOfOrderOnlyOnDataLoss",
                "FencedEpochNeverWrites": "IdempotentFencedEpochNeverWrites"},
    temporal={"SendsEventuallyComplete": "IdempotentSendsEventuallyComplete"},
    lanes={"client": "producer[]", "idem_leader": "leader", "idem_follower": "leader", "leader_epoch": "leader"},
)

PRESETS: dict[str, Preset] = {p.name: p for p in (IDEMPOTENT_PRODUCE,)}

__all__ = ["IDEMPOTENT_PRODUCE", "PRESETS", "Preset", "PresetMachine"]
