"""Declaring a proposed protocol change without editing the model: a design review's own module.

A reviewer's file (loaded by path, ``model = "my_review.py:MODEL"``) subclasses ``EosMachine``,
overrides the one rule hook the proposal changes, and derives a model from ``kafka.eos`` with the
proposal's switch and variants::

    class ProposedLeader(EosMachine):
        def produce_verification(self, partition, leader, txn, producer_id, epoch):
            if not self.extensions["my_switch"]:
                return super().produce_verification(partition, leader, txn, producer_id, epoch)
            ...  # the proposed rule

    MODEL = derive_eos(name="review.mine", doc="...", machine=ProposedLeader,
                       switches={"my_switch": Switch("what the proposal changes [KIP-n]", False)},
                       variants={"kafka-3.0-3.5+mine": variant_of("kafka-3.0-3.5", "...", my_switch=True)})

Every ``kafka.eos`` variant, switch, bound and property stays available under the derived model,
with the new switches at their defaults (so "before" is exactly ``kafka.eos``). The hooks a derived
machine may override are plain methods of ``EosMachine`` that a rule calls with what the rule reads
(today: ``produce_verification``, the leader's check before a transactional append); overriding a
whole ``@rule`` also works (``checker.compose`` takes a subclass's declaration), but must repeat its
declaration. docs/tutorial-design-review.md walks through a full review.
"""

from __future__ import annotations

from eoscheck.checker.registry import (
    ModelDef,
    Switch,
    SwitchValue,
    Variant,
    derive_model,
)

from .machines.eos import EosMachine, build_for
from .machines.eos_model import MODEL as EOS


def variant_of(base: str, doc: str, **switches: SwitchValue) -> Variant:
    """A ``kafka.eos`` variant (by name) with some switches changed, new ones included."""
    if base not in EOS.variants:
        raise ValueError(f"unknown kafka.eos variant {base!r}; valid variants: {', '.join(sorted(EOS.variants))}")
    return Variant(doc, {**EOS.variants[base].switches, **switches})


def derive_eos(*, name: str, doc: str, machine: type[EosMachine], switches: dict[str, Switch],
               variants: dict[str, Variant]) -> ModelDef:
    """``kafka.eos`` with ``switches`` added, built as ``machine`` (an ``EosMachine`` subclass that
    reads the new switches from ``self.extensions``), with ``variants`` added to kafka.eos's."""
    if not (isinstance(machine, type) and issubclass(machine, EosMachine)):
        raise TypeError(f"{name}: machine must be a subclass of EosMachine, got {machine!r}")
    return derive_model(EOS, name=name, doc=doc, switches=switches, variants=variants, build=build_for(machine),
                        properties=machine.property_docs())


__all__ = ["EosMachine", "Switch", "Variant", "derive_eos", "variant_of"]
