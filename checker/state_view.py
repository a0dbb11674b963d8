"""Views (TLC's ``VIEW``): a projection of the state that deduplication uses instead of the state.

Two states with the same view are one state for the visited set: the first reached is kept and
expanded, the other is counted as generated and dropped. Used to ignore a field that only records
history (a counter, an auxiliary variable) so that it does not multiply the state space. Unlike
symmetry, a view may merge states that behave differently, so it is an explicit choice: a machine
declares its views (``Machine.views``), may make one its default (``Machine.default_view``), and a
spec or ``--view`` names the one a run uses (``"none"`` turns the default off). ``--no-symmetry``
does not touch the view. The report names the view in force.

A view applies after symmetry (the projection of the canonical state) and is fingerprinted with
the ``encoded`` kind (``checker.fingerprint``), whatever it returns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .machine import Machine

#: the name that turns a machine's default view off
NO_VIEW = "none"


@dataclass(frozen=True)
class View:
    name: str
    doc: str
    project: Callable[[Any], Any]

    def describe(self) -> str:
        return f"{self.name} ({self.doc})" if self.doc else self.name


class UnknownViewError(ValueError):
    """A run names a view its machine does not declare."""


def resolve_view(machine: Machine, name: str | None) -> View | None:
    """The view a run uses: ``name``, else the machine's default; None for no view."""
    views = machine.views()
    if name is None:
        name = machine.default_view
    if name is None or name == NO_VIEW:
        return None
    if name not in views:
        valid = ", ".join([*views, NO_VIEW])
        raise UnknownViewError(f"unknown view {name!r}; valid views: {valid}")
    return views[name]
