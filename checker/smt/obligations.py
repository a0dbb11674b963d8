"""What a proof obligation is, independent of any protocol.

A model package writes its obligations over ``checker.ops`` (never over Z3 directly) as one of two
problem shapes, and publishes them as a ``ProofSet`` that a spec names by import path:

* ``ValidProblem`` — "for all inputs of these widths, the premises imply the claim": one query per
  configuration of the rules (e.g. one per protocol variant). Proved directly by one solver call.
* ``TransitionSystem`` — state variables of fixed widths, an initial predicate, guarded actions
  with free parameters, an inductive invariant given as named conjuncts, and the claim: a state
  claim (must hold in every reachable state) and/or a step claim (must hold on every transition).
  Proved by induction on the invariant; refuted by bounded unrolling from the initial states.

``Obligation.kind`` says how an obligation is meant to be discharged: ``valid`` (direct),
``inductive`` (induction, then bounded unrolling for a counterexample, then k-induction), or
``bmc`` (bounded unrolling only: finding nothing within k steps is "unknown", never "proved").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Term = Any
Vars = Mapping[str, Term]
#: name -> width in bits; width 0 declares a boolean
Widths = Mapping[str, int]

ObligationKind = Literal["valid", "inductive", "bmc"]
Status = Literal["proved", "counterexample", "unknown"]


@dataclass(frozen=True)
class Shown:
    """One step of a counterexample as it will be shown: the terms are evaluated in the solver's
    model. ``action`` None marks the initial (input) state."""

    action: str | None
    label: str
    params: Mapping[str, Term]
    state: Mapping[str, Term]


@dataclass(frozen=True)
class Query:
    """For every input: ``premises`` imply ``claim``. ``steps`` describe a counterexample."""

    label: str
    premises: Sequence[Term]
    claim: Term
    steps: Sequence[Shown] = ()


@dataclass(frozen=True)
class ValidProblem:
    label: str
    inputs: Widths
    #: (ops, input variables) -> queries; Python-valued configuration may be branched on
    queries: Callable[[Any, Vars], Sequence[Query]]


@dataclass(frozen=True)
class Action:
    """A guarded transition. ``step(ops, state, params)`` returns (guard, changed fields); fields
    not returned keep their value. A value wider than its field is stored as Java stores it (the
    low bits: ``(short) 32768 == -32768``), so an overflow shows up as a wrapped value."""

    params: Widths
    step: Callable[[Any, Vars, Vars], tuple[Term, Mapping[str, Term]]]
    doc: str = ""


@dataclass(frozen=True)
class TransitionSystem:
    label: str
    state: Widths
    init: Callable[[Any, Vars], Term]
    actions: Mapping[str, Action]
    #: the strengthening invariant, as named conjuncts (the names appear in "not inductive" notes)
    invariant: Callable[[Any, Vars], Mapping[str, Term]]
    #: must hold in every reachable state
    claim: Callable[[Any, Vars], Term] | None = None
    #: must hold on every transition: (ops, state, action name, params, next state) -> condition
    step_claim: Callable[[Any, Vars, str, Vars, Vars], Term] | None = None
    #: extra facts that hold in every state by construction (e.g. value ranges of a field)
    axioms: Callable[[Any, Vars], Sequence[Term]] | None = None


Problem = ValidProblem | TransitionSystem


@dataclass(frozen=True)
class Obligation:
    name: str
    doc: str
    kind: ObligationKind
    problems: Sequence[Problem]
    #: bound for bounded unrolling and k-induction
    max_k: int = 4

    def __post_init__(self) -> None:
        want = ValidProblem if self.kind == "valid" else TransitionSystem
        for p in self.problems:
            if not isinstance(p, want):
                raise TypeError(f"obligation {self.name} of kind {self.kind} needs {want.__name__} problems, "
                                f"got {type(p).__name__}")
        if self.max_k < 1:
            raise ValueError(f"obligation {self.name}: max_k must be at least 1")


@dataclass(frozen=True)
class ProofSet:
    """The obligations a model publishes. ``build(mutation)`` returns them evaluated over the real
    rules (``None``) or over a named mutation of the rules (a deliberately broken rule set that
    some obligation must refute)."""

    name: str
    doc: str
    #: obligation name -> one-line doc (known without building)
    obligations: Mapping[str, str]
    #: mutation name -> what it breaks
    mutations: Mapping[str, str]
    build: Callable[[str | None], Mapping[str, Obligation]]
    #: obligation name -> kind, for listings
    kinds: Mapping[str, ObligationKind] = field(default_factory=dict)
