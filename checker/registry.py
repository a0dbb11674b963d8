"""How the engine finds a model without importing it by name.

A model package publishes ``ModelDef`` objects, either through the ``eoscheck.models`` entry-point
group (an entry point names a module attribute holding a list of ModelDefs) or through an import
path ``"package.module:ATTR"`` written in the spec's ``model`` field, or from a file
``"path/to/file.py:ATTR"`` (``checker.pathmodel``: no PYTHONPATH, no installation). A ModelDef declares its
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


def derive_model(base: ModelDef, *, name: str, doc: str, switches: Mapping[str, Switch],
                 variants: Mapping[str, Variant],
                 build: Callable[[Mapping[str, SwitchValue], Mapping[str, int]], Machine],
                 properties: Mapping[str, str] | None = None) -> ModelDef:
    """``base`` with extra switches and variants, built by ``build`` (which gets the base's switches
    and the new ones): how a design review declares a proposed change without editing the model.

    Every variant of ``base`` keeps its meaning (the new switches take their defaults in it); a new
    variant lists the switches it sets, new and old. Bounds are the base's. ``properties`` defaults
    to the base's (give them when the new machine declares more)."""
    clash = sorted(set(switches) & set(base.switches))
    if clash:
        raise ValueError(f"{name}: switch {clash[0]!r} is already a switch of {base.name}")
    taken = sorted(set(variants) & set(base.variants))
    if taken:
        raise ValueError(f"{name}: variant {taken[0]!r} is already a variant of {base.name}")
    every = {**base.switches, **switches}
    for vname, variant in variants.items():
        unknown = sorted(set(variant.switches) - set(every))
        if unknown:
            raise ValueError(f"{name}: variant {vname!r} sets unknown switch {unknown[0]!r}")
    return ModelDef(name=name, doc=doc, variants={**base.variants, **variants},
                    default_variant=base.default_variant, switches=every, bounds=base.bounds,
                    properties=dict(base.properties if properties is None else properties),
                    build=build, temporal=base.temporal)


def find_model(name: str) -> ModelDef:
    """A model by registered name, by import path ``module:ATTR`` (a ModelDef or a list of one), or
    by file ``path/file.py:ATTR`` (relative to the working directory; a spec resolves its own
    relative paths first, ``checker.pathmodel.resolve``)."""
    from .pathmodel import PathModelError, is_file_reference, lookup

    if is_file_reference(name):
        try:
            found = lookup(name)
        except PathModelError as exc:
            raise UnknownModelError(str(exc)) from None
        assert isinstance(found, ModelDef)
        return found
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
