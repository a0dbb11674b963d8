"""Temporal properties and fairness, as a machine declares them.

A ``TemporalProperty`` is one of three forms over state predicates (functions of one state):

* ``eventually(P)``         ``<>P``      every fair behaviour reaches a P-state;
* ``leads_to(P, Q)``        ``P ~> Q``   after every P-state, every fair behaviour reaches a Q-state
  (the P-state itself counts);
* ``always_eventually(P)``  ``[]<>P``    every fair behaviour visits P-states infinitely often.

A ``Fairness`` constraint names actions by the names the machine's steps carry (``step[0]``); a
constraint over several names treats them as one action (``WF(A \\/ B)``), and a name covers every
parameter instance (``WF(\\E c: A(c))``):

* ``WF`` (weak fairness): an action continuously enabled from some point on is taken infinitely
  often;
* ``SF`` (strong fairness): an action enabled infinitely often is taken infinitely often.

Behaviours may stutter (stay in a state forever) wherever no fair action is enabled: that is TLA+'s
reading, and how a protocol that simply stops without reaching P is caught.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

TemporalKind = Literal["eventually", "leads_to", "always_eventually"]
FairnessKind = Literal["WF", "SF"]

Predicate = Callable[[Any], bool]

OPERATORS: dict[str, str] = {"eventually": "<>P", "leads_to": "P ~> Q", "always_eventually": "[]<>P"}


@dataclass(frozen=True)
class TemporalProperty:
    """A named liveness property; ``q`` is used only by ``leads_to``."""

    name: str
    doc: str
    kind: TemporalKind
    p: Predicate
    q: Predicate | None = None

    def formula(self) -> str:
        return OPERATORS[self.kind]


def eventually(name: str, doc: str, p: Predicate) -> TemporalProperty:
    return TemporalProperty(name, doc, "eventually", p)


def leads_to(name: str, doc: str, p: Predicate, q: Predicate) -> TemporalProperty:
    return TemporalProperty(name, doc, "leads_to", p, q)


def always_eventually(name: str, doc: str, p: Predicate) -> TemporalProperty:
    return TemporalProperty(name, doc, "always_eventually", p)


@dataclass(frozen=True)
class Fairness:
    """``per``: split the constraint into one per value of ``per(step)`` (TLA+'s ``\\A m: WF(A(m))``),
    e.g. per request, so that serving one request does not count as serving another."""

    kind: FairnessKind
    actions: tuple[str, ...]
    per: Callable[[tuple], Any] | None = field(default=None, compare=False)
    per_name: str = ""

    def __post_init__(self) -> None:
        if self.kind not in ("WF", "SF"):
            raise ValueError(f"fairness kind must be WF or SF, got {self.kind!r}")
        if not self.actions:
            raise ValueError("a fairness constraint names at least one action")

    def __str__(self) -> str:
        per = f" per {self.per_name or 'instance'}" if self.per is not None else ""
        return f"{self.kind}({' | '.join(self.actions)}{per})"


def WF(*actions: str, per: Callable[[tuple], Any] | None = None, per_name: str = "") -> Fairness:
    return Fairness("WF", tuple(actions), per, per_name)


def SF(*actions: str, per: Callable[[tuple], Any] | None = None, per_name: str = "") -> Fairness:
    return Fairness("SF", tuple(actions), per, per_name)
