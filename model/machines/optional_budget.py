"""Fault budgets of ``kafka.eos``'s mixins that stay at 0 unless a spec sets them, each declared once.

A mechanism such as a failed fence append or a failed send() is one budget and the rules it alone
enables. Declared as an ``OptionalBudget`` on its mixin, the budget gets from ``OptionalBudgets``
what each mixin used to write for itself:

- its bound, ``bounds.get(name, 0)``, as a configuration entry (``optional_budgets_setup``) and for the
  mixin's parameter ranges (``optional_bound``);
- its rules left out of ``actions`` while it is off (``optional_budgets_idle``), so coverage does not
  report them as never fired;
- its counter ``faults.<name>`` left out of a trace's fields while its bound is 0, so the
  counterexamples of configurations without the mechanism keep their form.

A new budget is then the declaration and its rules: nothing to add to ``EosMachine.__init__``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from eoscheck.checker.compose import Budget


@dataclass(eq=False)
class OptionalBudget(Budget):
    """A ``Budget`` on a configuration entry (``bound``, a name) that is 0 when a spec does not set it.

    ``actions``: the rules that have no bindings while the mechanism is off. ``live(machine)``: whether
    it is on, when that takes more than a bound above 0 (a switch, other bounds); it is asked after
    ``optional_budgets_setup``."""

    actions: tuple[str, ...] = ()
    live: Callable[[Any], object] | None = None

    def on(self, machine: OptionalBudgets) -> bool:
        """Whether the mechanism is on in ``machine``'s configuration."""
        if self.live is not None:
            return bool(self.live(machine))
        return machine.optional_bound(str(self.bound)) > 0


#: class -> its optional budgets (``declared``); read on every trace state's ``fields``
_DECLARED: dict[type, tuple[OptionalBudget, ...]] = {}


def declared(cls: type) -> tuple[OptionalBudget, ...]:
    """The optional budgets declared on ``cls`` and its bases, in method resolution order (a class's
    own declaration of a name wins)."""
    budgets = _DECLARED.get(cls)
    if budgets is None:
        found: dict[str, OptionalBudget] = {}
        for klass in cls.__mro__:
            for name, value in vars(klass).items():
                if isinstance(value, OptionalBudget):
                    found.setdefault(name, value)
        budgets = _DECLARED[cls] = tuple(found.values())
    return budgets


class OptionalBudgets:
    """The setup, idle actions and trace fields of every ``OptionalBudget`` of the machine's classes
    (module doc). The machine calls ``optional_budgets_setup`` before compiling."""

    #: each optional budget's bound by its configuration name (only ints: the machine pickles)
    optional_bounds: dict[str, int]

    def optional_budgets_setup(self, bounds: Mapping[str, int]) -> dict[str, int]:
        """Each optional budget's bound (0 where ``bounds`` does not set it), as configuration entries."""
        self.optional_bounds = {str(b.bound): bounds.get(str(b.bound), 0) for b in declared(type(self))}
        return dict(self.optional_bounds)

    def optional_bound(self, name: str) -> int:
        """The bound of the optional budget on configuration entry ``name``."""
        return self.optional_bounds[name]

    def optional_budgets_idle(self) -> set[str]:
        """The rules of every mechanism that is off (not listed)."""
        return {action for b in declared(type(self)) if not b.on(self) for action in b.actions}

    def fields(self, state: tuple) -> dict[str, Any]:
        out: dict[str, Any] = super().fields(state)  # type: ignore[misc]
        hidden = {f"faults.{b.name}" for b in declared(type(self)) if not self.optional_bounds[str(b.bound)]}
        return {k: v for k, v in out.items() if k not in hidden} if hidden else out


__all__ = ["OptionalBudget", "OptionalBudgets", "declared"]
