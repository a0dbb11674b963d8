"""Presets of ``kafka.eos``: one declared mechanism through which a spec written for one of the older
Kafka machines runs on the one machine.

A ``Preset`` is data: the older machine's name, the ``Protocol`` it hard-wires (``base``), how its
switches read as ``model.protocol`` decisions (``protocol._LEGACY_NAMES``, with ``switch_values`` for a
value of another type and ``derive`` for a decision the older machine fixes from the others), the
``kafka.eos`` bounds it pins (``fixed``), each of its bounds as ``kafka.eos`` bounds (``bounds``: a
name, a ``To`` with an offset, or several), its property names as ``kafka.eos``'s (``properties``,
``temporal``) and its chart lanes (``lanes``). ``Preset.model_def(older)`` publishes it with the
older machine's variants, switches, bound declarations and property names, so the older specs run
unchanged; ``PresetMachine`` is ``kafka.eos`` checking only the preset's properties, under the
older names. A fourth preset is one more ``Preset(...)`` and its entry in ``model/registry.py``'s ``PRESETS``.

Bad input is one line (``ValueError``, exit 2 through a spec or ``--bound``/``--set``): a bound or
switch the preset does not have, a ``kafka.eos`` bound outside its range, a protocol ``kafka.eos``
refuses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from eoscheck.checker.liveness.temporal import TemporalProperty
from eoscheck.checker.machine import Property
from eoscheck.checker.registry import ModelDef, SwitchValue

from ..protocol import _LEGACY_NAMES, IDEMPOTENT, VARIANTS, Protocol
from .eos import PROPERTY_DOCS, EosMachine
from .eos_idempotent_bounds import TEMPORAL_DOCS as IDEMPOTENT_TEMPORAL_DOCS
from .eos_model import BOUNDS as EOS_BOUNDS


def _temporal_docs() -> dict[str, str]:
    from .eos_instances import TEMPORAL_DOCS as INSTANCE_DOCS
    from .eos_liveness import TEMPORAL_DOCS as TRANSACTION_DOCS
    return {**IDEMPOTENT_TEMPORAL_DOCS, **INSTANCE_DOCS, **TRANSACTION_DOCS}


class PresetMachine(EosMachine):
    """``kafka.eos`` under a preset: its properties under the older machine's names, and only those
    (in kafka.eos's order, which decides which of two properties a state violates is reported)."""

    def __init__(self, protocol: Protocol, bounds: Mapping[str, int], properties: Mapping[str, str],
                 temporal: Mapping[str, str], memoize: bool = True, lanes: Mapping[str, str] | None = None) -> None:
        self.preset_properties = dict(properties)
        self.preset_temporal = dict(temporal)
        if lanes:  # the older machine's lane names on charts
            # this instance's lanes shadow the class's table (mypy allows no instance value for a ClassVar)
            self.chart_parts = {**lanes, **{k: v for k, v in type(self).chart_parts.items() if k not in lanes}}  # type: ignore[misc]
        super().__init__(protocol, bounds, memoize=memoize)

    @staticmethod
    def _renamed(own: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
        older = {new: old for old, new in names.items()}
        return {older[new]: (p if older[new] == new else replace(p, name=older[new]))
                for new, p in own.items() if new in older}

    def properties(self) -> dict[str, Property]:
        return self._renamed(super().properties(), self.preset_properties)

    def temporal_properties(self) -> dict[str, TemporalProperty]:
        return self._renamed(super().temporal_properties(), self.preset_temporal)


@dataclass(frozen=True)
class To:
    """A ``kafka.eos`` bound set from an older bound: its value plus ``plus``."""

    bound: str
    plus: int = 0


#: an older bound's targets: a kafka.eos bound name, a ``To``, or a tuple of them
Target = str | To | tuple[str | To, ...]


def _targets(target: Target) -> tuple[To, ...]:
    items = target if isinstance(target, tuple) else (target,)
    return tuple(To(t) if isinstance(t, str) else t for t in items)


@dataclass(frozen=True)
class Preset:
    """A named configuration of ``kafka.eos`` reproducing the older machine ``legacy`` (module doc)."""

    #: kafka.eos.<name> is its model name
    name: str
    #: the older machine's name (a ``protocol._LEGACY_NAMES`` key); ``model/registry.py`` publishes the preset under it too
    legacy: str
    doc: str
    #: the older machine's bound -> the kafka.eos bound(s) it sets
    bounds: Mapping[str, Target]
    #: the older machine's property -> kafka.eos's
    properties: Mapping[str, str]
    #: the older machine's temporal property -> kafka.eos's
    temporal: Mapping[str, str] = field(default_factory=dict)
    #: kafka.eos bounds the preset pins, whatever the spec says (the others not mapped take kafka.eos's defaults)
    fixed: Mapping[str, int] = field(default_factory=dict)
    #: the protocol the older machine hard-wires; its switches change the decisions they name
    base: Protocol = field(default_factory=Protocol)
    #: decision -> the older switch's value as the decision's (where the types differ)
    switch_values: Mapping[str, Callable[[SwitchValue], Any]] = field(default_factory=dict)
    #: decisions the older machine fixes from the others (applied after the switches)
    derive: Callable[[Protocol], Protocol] | None = None
    #: kafka.eos part -> the chart lane the older machine drew it on
    lanes: Mapping[str, str] = field(default_factory=dict)
    #: refuse a kafka.eos value outside kafka.eos's declared range; off where the older machine declares wider
    #: ranges that kafka.eos runs as the older machine did (the idempotent machine's max_epoch from 1 and
    #: max_ticks up to 50, the init machine's max_epoch from 2; tests/test_eos_idempotent_preset.py builds some)
    within_eos_ranges: bool = False

    def __post_init__(self) -> None:
        targets = [t.bound for target in self.bounds.values() for t in _targets(target)]
        wrong = sorted((set(targets) | set(self.fixed)) - set(EOS_BOUNDS)) or sorted(set(targets) & set(self.fixed))
        twice = sorted({t for t in targets if targets.count(t) > 1})
        if wrong or twice:
            raise ValueError(f"preset {self.name}: kafka.eos bounds {wrong or twice} are unknown, pinned and mapped, "
                             "or mapped twice")
        unknown = sorted((set(self.properties.values()) - set(PROPERTY_DOCS))
                         | (set(self.temporal.values()) - set(_temporal_docs())))
        if unknown:
            raise ValueError(f"preset {self.name}: kafka.eos has no property {unknown[0]!r}")

    @property
    def model_name(self) -> str:
        return f"kafka.eos.{self.name}"

    def eos_bounds(self, bounds: Mapping[str, int]) -> dict[str, int]:
        """Complete kafka.eos bounds for the older machine's ``bounds`` (ValueError, one line: a bound the
        preset does not have, or one whose kafka.eos value is out of range)."""
        unknown = sorted(set(bounds) - set(self.bounds))
        if unknown:
            raise ValueError(f"preset {self.name} has no bound {unknown[0]!r}; its bounds: "
                             f"{', '.join(sorted(self.bounds))}")
        out = {name: b.default for name, b in EOS_BOUNDS.items()}
        out.update(self.fixed)
        for older, value in bounds.items():
            out.update({t.bound: value + t.plus for t in _targets(self.bounds[older])})
        for name, value in out.items() if self.within_eos_ranges else ():
            b = EOS_BOUNDS[name]
            if not b.min <= value <= b.max:
                raise ValueError(f"preset {self.name}: kafka.eos bound {name}={value} is outside {b.min}..{b.max}")
        return out

    def protocol(self, switches: Mapping[str, SwitchValue]) -> Protocol:
        """The ``Protocol`` of the older machine's switch values over ``base`` (the decisions it does not
        read keep ``base``'s, which do not reach its mechanisms)."""
        names = {older: decision for decision, older in _LEGACY_NAMES[self.legacy].items()}
        unknown = sorted(set(switches) - set(names))
        if unknown:
            raise ValueError(f"preset {self.name} has no switch {unknown[0]!r}; its switches: "
                             f"{', '.join(sorted(names))}")
        decisions = {names[k]: self.switch_values.get(names[k], _same)(v) for k, v in switches.items()}
        protocol = self.base.with_(**decisions)
        return self.derive(protocol) if self.derive is not None else protocol

    def build(self, switches: Mapping[str, SwitchValue], bounds: Mapping[str, int]) -> PresetMachine:
        return PresetMachine(self.protocol(switches), self.eos_bounds(bounds), self.properties, self.temporal,
                             lanes=self.lanes)

    def model_def(self, older: ModelDef, name: str | None = None) -> ModelDef:
        """The preset as a model: the older machine's variants, switches, bound declarations and property
        names (with the docs of the kafka.eos properties they name); ``name`` registers it under another
        name (an alias, e.g. the older machine's)."""
        missing = sorted(set(older.bounds) ^ set(self.bounds))
        if missing:
            raise ValueError(f"preset {self.name}: bounds {missing} are not both {older.name}'s and mapped")
        temporal = _temporal_docs()
        return ModelDef(name=name or self.model_name, doc=f"{self.doc} (kafka.eos preset of {older.name})",
                        variants=older.variants, default_variant=older.default_variant, switches=older.switches,
                        bounds=older.bounds, properties={k: PROPERTY_DOCS[v] for k, v in self.properties.items()},
                        build=self.build, temporal={k: temporal[v] for k, v in self.temporal.items()})

    # --- twins: the same configuration as a plain kafka.eos spec

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


def _same(value: SwitchValue) -> Any:
    return value


def preset_of(md: Any) -> Preset | None:
    """The preset a registered model runs on, if it is one."""
    owner = getattr(getattr(md, "build", None), "__self__", None)
    return owner if isinstance(owner, Preset) else None


#: bounds the idempotent machine and kafka.eos share or name alike
_SAME_NAMES = ("acked_prefix", "max_in_flight", "delivery_timeout", "producer_id_expiration", "max_ticks", "max_seq",
               "max_epoch", "lost_responses", "transient_errors", "delete_records", "leader_failovers",
               "restarted_replica_failovers", "snapshot_restored_failovers", "late_delivery", "clock_skew",
               "new_producer_ids")

IDEMPOTENT_PRODUCE = Preset(
    name="idempotent_produce",
    legacy=IDEMPOTENT,
    doc="Idempotent producers writing to one partition, with its follower: kafka.eos without transactional "
        "producers",
    fixed={"producers": 0, "partitions": 0, "input_records": 0, "produce_timeouts": 0, "txn_timeouts": 0,
           "coordinator_failovers": 0, "restarts": 0},
    bounds={"clients": "idempotent_producers", "records": "idempotent_records", **{n: n for n in _SAME_NAMES}},
    properties={"NoDuplicates": "IdempotentNoDuplicates", "SendOrderNoLoss": "IdempotentSendOrderNoLoss",
                "OutOfOrderOnlyOnDataLoss": "IdempotentOutOfOrderOnlyOnDataLoss",
                "FencedEpochNeverWrites": "IdempotentFencedEpochNeverWrites"},
    temporal={"SendsEventuallyComplete": "IdempotentSendsEventuallyComplete"},
    lanes={"client": "producer[]", "idem_leader": "leader", "idem_follower": "leader", "leader_epoch": "leader"},
)


__all__ = ["IDEMPOTENT_PRODUCE", "Preset", "PresetMachine", "Target", "To", "preset_of"]
