"""How the engine finds a model without importing it by name.

A model package publishes ``ModelDef`` objects, either through the ``eoscheck.models`` entry-point
group (an entry point names a module attribute holding a list of ModelDefs) or through an import
path ``"package.module:ATTR"`` written in the spec's ``model`` field. A ModelDef declares its
variants, switches, bounds and properties up front, so specs are validated and ``eoscheck list``
works without building a machine.

A **switch** is one protocol decision (e.g. ``persist_last_epoch``); a **variant** is a named set of
switch values (e.g. ``kip360-as-designed``). A spec picks a variant and may override single
switches. A **bound** is an integer that limits the model's size (clients, max epoch, ...).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points

from .machine import Machine

SwitchValue = bool | int | str


@dataclass(frozen=True)
class Bound:
    doc: str
    default: int
    min: int
    max: int


@dataclass(frozen=True)
class Switch:
    doc: str
    default: SwitchValue
    #: allowed values for a str switch (empty: any value of the default's type)
    choices: tuple[SwitchValue, ...] = ()


@dataclass(frozen=True)
class Variant:
    doc: str
    switches: Mapping[str, SwitchValue] = field(default_factory=dict)


@dataclass(frozen=True)
class ModelDef:
    name: str
    doc: str
    variants: Mapping[str, Variant]
    default_variant: str
    switches: Mapping[str, Switch]
    bounds: Mapping[str, Bound]
    #: property name -> one-line doc; must equal the names the built machine's properties() returns
    properties: Mapping[str, str]
    #: build(switches, bounds) -> Machine; both dicts are complete and validated
    build: Callable[[Mapping[str, SwitchValue], Mapping[str, int]], Machine]
    #: temporal property name -> one-line doc; the built machine's temporal_properties() names
    temporal: Mapping[str, str] = field(default_factory=dict)

    def resolve_switches(self, variant: str, overrides: Mapping[str, SwitchValue]) -> dict[str, SwitchValue]:
        values = {name: s.default for name, s in self.switches.items()}
        values.update(self.variants[variant].switches)
        values.update(overrides)
        return values

    def machine(self, variant: str | None = None, switches: Mapping[str, SwitchValue] | None = None,
                bounds: Mapping[str, int] | None = None) -> Machine:
        """Build a machine; for tests and tools. Specs go through ``checker.spec``, which validates."""
        resolved_bounds = {name: b.default for name, b in self.bounds.items()}
        resolved_bounds.update(bounds or {})
        return self.build(self.resolve_switches(variant or self.default_variant, switches or {}),
                          resolved_bounds)


class UnknownModelError(LookupError):
    pass


def installed_models() -> dict[str, ModelDef]:
    """Every model published through the ``eoscheck.models`` entry points, by name."""
    found: dict[str, ModelDef] = {}
    for ep in sorted(entry_points(group="eoscheck.models"), key=lambda e: e.name):
        for md in ep.load():
            found[md.name] = md
    return found


def find_model(name: str) -> ModelDef:
    """A model by registered name, or by import path ``module:ATTR`` (a ModelDef or a list)."""
    if ":" in name:
        module_name, _, attr = name.partition(":")
        try:
            obj = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise UnknownModelError(f"cannot import model {name!r}: {exc}") from None
        if isinstance(obj, ModelDef):
            return obj
        if isinstance(obj, (list, tuple)) and len(obj) == 1 and isinstance(obj[0], ModelDef):
            return obj[0]
        raise UnknownModelError(f"{name!r} is not a ModelDef")
    # Load the package whose entry point names the model's first dotted segment first, so that
    # one broken model package does not break specs over another.
    prefix = name.split(".", 1)[0]
    for ep in entry_points(group="eoscheck.models"):
        if ep.name == prefix:
            for md in ep.load():
                if md.name == name:
                    return md
    models = installed_models()
    if name not in models:
        valid = ", ".join(sorted(models)) or "(none installed)"
        raise UnknownModelError(f"unknown model {name!r}; valid models: {valid}")
    return models[name]
