"""Presets of ``kafka.eos``: named configurations (switches, bounds, properties) through which a
spec written for one of the older machines runs on the one machine; and the preset of
``kafka.init_producer_id``.

A ``Preset`` keeps the older machine's face (its variant names, switch names, bound names and
defaults, properties), so its specs are unchanged, and builds ``kafka.eos`` from them:

- switches: the older machine's switches are protocol decisions under the same names
  (``protocol._LEGACY_NAMES``), applied to ``base``, a ``Protocol`` whose other decisions the
  preset's mechanisms do not read; every legacy variant therefore gives the ``Protocol`` of
  ``protocol.LEGACY_ALIASES`` on the decisions that matter;
- bounds: each of the preset's bounds is renamed to a ``kafka.eos`` bound (``bound_map``), the
  ``kafka.eos`` bounds it does not name are ``fixed`` or take their defaults;
- properties: the built machine checks and lists only the preset's (``PresetMachine``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from eoscheck.checker.machine import Machine, Property
from eoscheck.checker.registry import Bound, ModelDef, Switch, SwitchValue, Variant

from ..protocol import INIT, LEGACY_ALIASES, Protocol
from ..variants import INIT_SWITCHES, INIT_VARIANTS
from .eos import EosMachine
from .eos_instances import TEMPORAL_DOCS
from .eos_model import BOUNDS as EOS_BOUNDS
from .init_producer_id import PROPERTY_DOCS as INIT_PROPERTY_DOCS


class PresetMachine(EosMachine):
    """``kafka.eos`` under a preset: it lists and checks the preset's properties only."""

    def __init__(self, protocol: Protocol, bounds: Mapping[str, int], checked: tuple[str, ...],
                 memoize: bool = True) -> None:
        self.checked = checked
        super().__init__(protocol, bounds, memoize=memoize)

    def properties(self) -> dict[str, Property]:
        return {name: p for name, p in super().properties().items() if name in self.checked}


@dataclass(frozen=True)
class Preset:
    """A named configuration of ``kafka.eos`` (module doc)."""

    name: str
    doc: str
    base: Protocol
    variants: Mapping[str, Variant]
    default_variant: str
    switches: Mapping[str, Switch]
    bounds: Mapping[str, Bound]
    #: preset bound -> the kafka.eos bound it sets
    bound_map: Mapping[str, str]
    #: kafka.eos bounds the preset fixes (the others take kafka.eos's defaults)
    fixed: Mapping[str, int] = field(default_factory=dict)
    properties: Mapping[str, str] = field(default_factory=dict)
    temporal: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = (set(self.bound_map.values()) | set(self.fixed)) - set(EOS_BOUNDS)
        if unknown or set(self.bound_map) != set(self.bounds):
            raise ValueError(f"preset {self.name}: bounds {sorted(unknown or set(self.bounds) ^ set(self.bound_map))} "
                             "do not map onto kafka.eos")

    def eos_bounds(self, bounds: Mapping[str, int]) -> dict[str, int]:
        """The kafka.eos bounds for the preset's (complete, validated) bounds."""
        out = {name: b.default for name, b in EOS_BOUNDS.items()}
        out.update(self.fixed)
        out.update({self.bound_map[name]: value for name, value in bounds.items()})
        return out

    def protocol(self, switches: Mapping[str, SwitchValue]) -> Protocol:
        """The Protocol for the preset's (complete, validated) switch values."""
        return self.base.with_(**dict(switches))

    def build(self, switches: Mapping[str, SwitchValue], bounds: Mapping[str, int]) -> Machine:
        return PresetMachine(self.protocol(switches), self.eos_bounds(bounds),
                             tuple(self.properties) + tuple(self.temporal))

    def model_def(self, name: str | None = None) -> ModelDef:
        """The preset as a model; ``name`` registers it under another name (an alias)."""
        return ModelDef(name=name or self.name, doc=self.doc, variants=self.variants,
                        default_variant=self.default_variant, switches=self.switches, bounds=self.bounds,
                        properties=self.properties, build=self.build, temporal=self.temporal)


#: kafka.init_producer_id's bounds (names, defaults, ranges) and the kafka.eos bound each one sets
_INIT_BOUNDS: dict[str, tuple[Bound, str]] = {
    "clients": (Bound("producer instance slots sharing the transactional id", 1, 1, 3), "instances"),
    "max_epoch": (Bound("largest epoch (Short.MAX_VALUE); exhausted at max_epoch - 1", 32767, 2, 32767), "max_epoch"),
    "lost_responses": (Bound("InitProducerId responses the network may lose", 1, 0, 4), "lost_responses"),
    "failovers": (Bound("transaction coordinator failovers (metadata reloaded from the log)", 1, 0, 3),
                  "coordinator_failovers"),
    "abortable_errors": (Bound("abortable errors inside a transaction (a failed batch): EndTxn(ABORT), then "
                               "InitProducerId with the client's producer id/epoch (KIP-360); each needs a "
                               "transaction", 1, 0, 4), "abortable_errors"),
    "restarts": (Bound("new producer instances started in a slot after its first", 0, 0, 3), "restarts"),
    "expirations": (Bound("transactional-id expirations (transactional.id.expiration.ms)", 0, 0, 2),
                    "txn_id_expirations"),
    "transactions": (Bound("transactions begun (AddPartitionsToTxn) in total", 0, 0, 3), "instance_transactions"),
    "new_producer_ids": (Bound("producer ids the allocator may hand out", 3, 1, 6), "instance_producer_ids"),
}

#: ``kafka.init_producer_id`` as a preset of ``kafka.eos``: no data producers, one partition (idle:
#: the instances' transactions carry no data), the instances of one transactional id.
INIT_PRODUCER_ID = Preset(
    name="kafka.eos/init_producer_id",
    doc="kafka.eos preset: transactional producer instances sharing one transactional id and its coordinator: "
        "InitProducerId (every KIP-360 case), epoch overflow to a new producer id, retries, lost responses, the "
        "transaction log, coordinator failover, transactional-id expiry and fencing of an open transaction.",
    base=LEGACY_ALIASES[(INIT, "kafka-shipped")],
    variants=INIT_VARIANTS,
    default_variant="kafka-shipped",
    switches=INIT_SWITCHES,
    bounds={name: b for name, (b, _) in _INIT_BOUNDS.items()},
    bound_map={name: eos for name, (_, eos) in _INIT_BOUNDS.items()},
    fixed={"producers": 0, "partitions": 1},
    properties=INIT_PROPERTY_DOCS,
    temporal=TEMPORAL_DOCS,
)


def preset_of(md: Any) -> Preset | None:
    """The preset a registered model runs on, if it is one."""
    build = getattr(md, "build", None)
    owner = getattr(build, "__self__", None)
    return owner if isinstance(owner, Preset) else None


__all__ = ["INIT_PRODUCER_ID", "Preset", "PresetMachine", "preset_of"]
