"""The interface a model implements: everything the engine knows about a protocol.

A state is an immutable, hashable value built only from ``int``, ``bool`` and (nested) ``tuple``
(NamedTuples included). No ``str``, ``None``, ``float`` or ``bytes`` inside a state: their
``hash`` differs between processes, and fingerprints must agree across runs, processes and
Spark executors (see ``fingerprint``).

A step is a tuple whose first element is the action name and the rest its parameters, e.g.
``("InitProducerId", 0, 1)``. ``Machine.actions`` names the parameters, so a trace reads
``InitProducerId(client=0, tid=1)``. Steps are plain tuples because one is built for every
generated state.
"""

from __future__ import annotations

import pickle
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NamedTuple

if TYPE_CHECKING:
    from .chart import ChartEvent
    from .liveness.temporal import Fairness, TemporalProperty
    from .state_view import View

State = Any  # a hashable tuple of ints/bools/tuples; see the module docstring
Step = tuple  # (action name, *parameters)

PropertyKind = Literal["invariant", "transition"]


class Dedup(NamedTuple):
    """A machine's successors fused with the engine's duplicate test (``Machine.dedup_successors``).

    ``bind(seen, known, actions, cut, fps, parents, states, steps)`` hands the function the engine's
    containers (again whenever they change). ``expand(state, ref)`` then goes through ``successors(state)``
    in its order and, for each successor ``t`` of a step: appends the step's action to ``actions``;
    takes ``h = hash(canonical(t))`` (``hash(t)`` without a canonical form); when ``h`` is in
    neither ``seen`` nor ``known``, appends the action to ``cut`` if ``within`` was given and rejects
    ``t``, else adds ``h`` to ``seen`` and appends ``h``, ``ref``, ``t`` and the step to ``fps``,
    ``parents``, ``states`` and ``steps``. It checks the transition properties it was made for on
    every step as ``checked_successors`` does, appending to ``failed`` where a step may fail one
    (the caller empties it, forgets what the call recorded and takes that state again)."""

    expand: Callable[[State, Any], None]
    failed: list[Any]
    bind: Callable[..., None]


class PlaceTest(NamedTuple):
    """A test of a few places of a state that a machine's generated successors may evaluate inline
    in place of calling a function of the whole state (``Machine.dedup_successors`` may use it).
    ``test`` is a Python expression with ``{0}``, ``{1}``, ... standing for the contents of
    ``places``, reading only the names of ``env`` (each starts with ``OWN_``); it has no effect of
    its own and raises nothing but ``KeyError`` (unknown: a content the function has not seen yet),
    and nothing at all when ``env`` is empty. Two uses, as an optional attribute of the function:

    - ``canonical.own_form``: where the test is true, ``canonical(t)`` is ``t``; where it is false
      or unknown, the caller calls ``canonical``.
    - ``within.place_test``: its truth is ``within(t)``'s answer; where unknown, the caller calls
      ``within``."""

    places: tuple[int, ...]
    test: str
    env: dict[str, Any]


@dataclass(frozen=True)
class Property:
    """A named safety property.

    ``invariant``: ``check(state) -> bool`` must hold in every reachable state.
    ``transition``: ``check(state, step, next_state) -> bool`` must hold on every step
    (e.g. "the coordinator's epoch never decreases").
    """

    name: str
    doc: str
    kind: PropertyKind
    check: Callable[..., bool]


class Machine(ABC):
    """A protocol as guarded transitions over immutable states."""

    #: action name -> parameter names, in the order they follow the name in a step
    actions: Mapping[str, tuple[str, ...]] = {}

    #: How states are fingerprinted (``checker.fingerprint``). ``"encoded"`` is sound for any
    #: int/bool/tuple state. ``"hash"`` is CPython's ``hash``, several times faster, and sound only
    #: when every leaf is an int ``x`` with ``|x| < 2**61 - 1`` and ``x != -2`` (or a bool in a
    #: position that never holds an int): a machine sets it when its encoding guarantees that.
    fingerprint_kind: ClassVar[str] = "encoded"

    #: Whether ``within_bounds`` gives one answer on a whole symmetry orbit: ``within_bounds(s) ==
    #: within_bounds(t)`` whenever ``canonical(s) == canonical(t)``. The engines then skip the
    #: constraint for a successor whose representative they kept before (its orbit is inside), as
    #: they do without symmetry. Declare it only when it holds (a bound on a global counter, or the
    #: same bound on every interchangeable actor); the default asks the constraint every time.
    symmetric_constraint: bool = False

    #: the view (``views()``) every run of this machine uses unless it names another or "none"
    default_view: ClassVar[str | None] = None

    @abstractmethod
    def init_states(self) -> Iterable[State]:
        """The initial states."""

    @abstractmethod
    def successors(self, state: State) -> Iterable[tuple[Step, State]]:
        """Every enabled step from ``state`` with the state it leads to.

        Must be deterministic: the same state yields the same steps in the same order, in every
        process (traces are rebuilt by re-executing this function).
        """

    @abstractmethod
    def properties(self) -> Mapping[str, Property]:
        """Every property this machine can check, by name."""

    def temporal_properties(self) -> Mapping[str, TemporalProperty]:
        """Liveness properties by name (``checker.liveness.temporal``: eventually, leads_to,
        always_eventually). Checked only when a spec names them."""
        return {}

    def fairness(self) -> Sequence[Fairness]:
        """The fairness the protocol assumes (``WF``/``SF`` over action names); it belongs to the
        model, not to the user: the temporal properties are true or false under it."""
        return ()

    def fused_invariants(self, names: Sequence[str]) -> Callable[[State], bool] | None:
        """One check that holds on a state exactly when every invariant named holds there (a faster
        path for the engines, which still report each property by its own check when it fails), or
        None: the engines call the checks one by one."""
        return None

    def fused_transitions(self, names: Sequence[str]
                          ) -> Mapping[str, Callable[[State, Step, State], bool]] | None:
        """action -> one check ``(before, step, after)`` that holds exactly when every transition
        property named holds on that step. A step whose action is absent satisfies them all (none
        of them can fail on it). None: the engines call the checks one by one."""
        return None

    def checked_successors(self, names: Sequence[str]) -> tuple[Callable[[State], Iterable[tuple[Step, State]]],
                                                                  list[Any]] | None:
        """(``successors`` that also checks the named transition properties on the steps it makes,
        ``failed``): the function returns the same successors in the same order, and appends to
        ``failed`` (which the caller empties) whenever a step may fail one of them. A state after
        which ``failed`` is empty has no step that fails one of them, so the engines skip their
        own checks of its steps; after any other state they check its steps as usual. None: the
        engines check every step (``fused_transitions``)."""
        return None

    def dedup_successors(self, names: Sequence[str], canonical: Callable[[State], State] | None,
                         within: Callable[[State], bool] | None) -> Dedup | None:
        """``successors`` fused with the engine's duplicate test (``Dedup``), checking the transition
        properties ``names`` (none when empty), fingerprinting by ``hash`` of ``canonical`` (None:
        of the state) and asking ``within`` (None: no constraint) of the successors not seen; or
        None (the default: the engines take every successor from ``successors``). An optional
        capability for a machine that generates its successor function: most successors are
        duplicates, and these then cost no pair, list entry or turn of the engine's loop."""
        return None

    def within_bounds(self, state: State) -> bool:
        """State constraint (TLC's CONSTRAINT): a state outside it is neither checked, counted nor
        expanded."""
        return True

    def is_terminal(self, state: State) -> bool:
        """True for a state that may legitimately have no successors (not a deadlock)."""
        return False

    def canonical(self, state: State) -> State:
        """Symmetry: the representative of ``state``'s orbit. Identity when there is no symmetry."""
        return state

    def export_states(self, states: list[State]) -> Any:
        """States on their way to another process of the same run (the parallel engine's
        rebalancing): any picklable value from which ``import_states`` rebuilds equal states there.
        The default sends the states themselves; a machine whose states hold ids of interned parts
        sends each part once per batch instead of once per state."""
        return states

    def import_states(self, exported: Any) -> list[State]:
        return exported

    def export_batch(self, states: list[State]) -> bytes:
        """``export_states`` as bytes, for an engine that moves batches between long-lived
        processes of one run (Spark's executors): a machine may keep what it already encoded
        (the composed machines keep each interned part's bytes) instead of encoding it again."""
        return pickle.dumps(self.export_states(states), protocol=5)

    def import_batch(self, blob: bytes) -> list[State]:
        return list(self.import_states(pickle.loads(blob)))

    def disabled_actions(self) -> frozenset[str]:
        """Actions this configuration switches off by design (a fault budget of 0, a feature switch
        that removes a request): they cannot fire, so a run does not warn that they never did. An
        action left out here that never fires is reported: usually a guard that is never true."""
        return frozenset()

    def views(self) -> Mapping[str, View]:
        """Projections a run may deduplicate on (TLC's VIEW), by name; see ``checker.state_view``."""
        return {}

    def has_symmetry(self) -> bool:
        """Whether ``canonical`` may differ from the identity; the engines call it only then. A
        machine whose symmetry depends on its bounds (one client: no permutation) says so here."""
        return type(self).canonical is not Machine.canonical

    @abstractmethod
    def fields(self, state: State) -> dict[str, Any]:
        """The state as named fields (JSON-serialisable values), for traces and the viewer.

        Dotted names group fields by actor, e.g. ``"client[0].epoch"``; the viewer filters on
        the prefix before the first dot.
        """

    def itf_fields(self, state: State) -> dict[str, Any] | None:
        """The fields of ``state`` as typed data for ITF traces (records as dicts with identifier
        keys, tuples, sets, ints), or None to write ``fields`` as they are. A machine whose
        ``fields`` describes parts in one-line strings for people gives the data here."""
        return None

    def chart_step(self, step: Step, before: State, after: State) -> Sequence[ChartEvent] | None:
        """The step as message sequence chart events (``checker.chart``: sends, receives, lost
        messages, faults, state changes on lanes), or None: the chart then derives them from the
        fields that change. Only for presentation; never called while exploring."""
        return None

    def chart_lanes(self) -> Sequence[str]:
        """The chart's lanes in the order to draw them, left to right (lanes not named here
        follow in the order they first appear)."""
        return ()

    def format_step(self, step: Step) -> str:
        """A human label such as ``InitProducerId(client=0, tid=1)``."""
        name, params = step[0], step[1:]
        names = self.actions.get(name, ())
        if len(names) == len(params):
            inner = ", ".join(f"{n}={v}" for n, v in zip(names, params))
        else:
            inner = ", ".join(repr(p) for p in params)
        return f"{name}({inner})"

    def step_params(self, step: Step) -> dict[str, Any]:
        """The step's parameters by name (for counterexample files)."""
        names = self.actions.get(step[0], ())
        params = step[1:]
        if len(names) == len(params):
            return dict(zip(names, params))
        return {f"arg{i}": p for i, p in enumerate(params)}
