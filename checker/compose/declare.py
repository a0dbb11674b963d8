"""The decorators that declare a composed machine's rules and properties (Hypothesis style).

A rule's name, parameters, the parts it reads and writes, its guard and its effect sit in one
place; the machine compiles them into a memoised successor function. See ``checker.compose``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

#: a parameter's domain: an int n (0..n-1), the name of a configuration entry holding one or of an
#: ``Actors`` part (its indices), an explicit tuple/range of values, ``fn(machine) -> iterable``,
#: or ``None`` for a receive rule's parameter read from the message (``getattr(msg, name)``)
Domain = int | str | tuple[Any, ...] | range | Callable[[Any], Any] | None


class ComposeError(ValueError):
    """A declaration that cannot be compiled, or an effect that breaks its declaration."""


def _params(params: Mapping[str, Domain] | tuple[str, ...] | None) -> dict[str, Domain]:
    if params is None:
        return {}
    if isinstance(params, Mapping):
        return dict(params)
    return {p: None for p in params}


@dataclass(frozen=True)
class RuleSpec:
    """What ``@rule`` records; see ``rule``."""

    action: str
    params: dict[str, Domain]
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    sends: tuple[str, ...]
    receive: str | None
    results: tuple[str, ...]
    spends: str | None
    show: dict[str, Callable[[Any], str]]
    memo: bool
    match: Callable[[Any], bool] | None = None
    #: the effect may mark an outcome ``OUTSIDE`` the state constraint (see ``rule``)
    outside: bool = False
    #: read key -> a predicate on the rule's parameters: the bindings where it is false do not read
    #: that part (see ``rule``)
    read_if: dict[str, Callable[..., bool]] = field(default_factory=dict)
    #: the writes and sends of the outcomes most successors take, most frequent first: each built in
    #: place by the generated successors (see ``rule``)
    shapes: tuple[tuple[str, ...], ...] = ()
    #: read key -> ``f(read value, **some params)``: a write of that same term computed apart from
    #: the effect, per state (see ``rule``)
    passed: dict[str, Callable[..., Any]] = field(default_factory=dict)


#: the key an effect's outcome sets (to True) to say that every successor it makes lies outside the
#: machine's state constraint (``rule``'s ``outside``); no part, channel or result should take its name
OUTSIDE = "__outside__"


@dataclass(frozen=True)
class PropertySpec:
    name: str
    kind: str  # "invariant" or "transition"
    reads: tuple[str, ...]
    params: dict[str, Domain]
    actions: tuple[str, ...]
    doc: str = field(default="")
    #: transition properties: a predicate on the step alone; steps it refuses pass without a lookup
    when: Callable[[tuple], bool] | None = None
    #: transition properties: a step that leaves every read slot as it was passes without a lookup
    #: (True), or every one of these reads (a tuple of ``reads``-style terms)
    stuttering: bool | tuple[str, ...] = False
    #: transition properties: ``f`` judges one actor of its one read part (``transition(each=True)``)
    each: bool = False


def rule(action: str, *, params: Mapping[str, Domain] | tuple[str, ...] | None = None,
         reads: tuple[str, ...] = (), writes: tuple[str, ...] = (), sends: tuple[str, ...] = (),
         receive: str | None = None, results: tuple[str, ...] = (), spends: str | None = None,
         show: Mapping[str, Callable[[Any], str]] | None = None, memo: bool = True,
         match: Callable[[Any], bool] | None = None, outside: bool = False,
         read_if: Mapping[str, Callable[..., bool]] | None = None,
         shapes: tuple[tuple[str, ...], ...] = (),
         passed: Mapping[str, Callable[..., Any]] | None = None) -> Callable[[F], F]:
    """Declare a method as a rule whose steps are ``(action, *params, *results)``.

    - ``params``: name -> domain (see ``Domain``); the rule is tried for every combination, in
      order. A receive rule's parameters default to attributes of the message.
    - ``reads``: the parts the effect and its guard see, as keyword arguments named after the part:
      ``"log"``, ``"client[c]"`` (actor ``c`` of ``client``, passed as ``client``), ``"client"``
      (all actors, a tuple), ``"src=client[a]"`` (under another name, to read two actors of one
      kind), and any of these through one of the part's ``projections`` (``parts.Part``):
      ``"client[c]:phase"`` passes ``fn(client value)`` only. The rule is memoised on exactly these
      parts, or their projections (and its parameters).
    - ``writes``: the parts the effect may replace (same syntax).
    - ``sends``: channels the effect may add messages to (a message, or a list of messages).
    - ``receive``: a channel; the rule runs once per deliverable message (passed as ``msg``), and
      the message is consumed as the network semantics say. A read of that channel sees it
      without the message. ``match(msg) -> bool`` picks the messages this rule handles (decided once
      per message; the others are not offered to it).
    - ``results``: further step fields the effect returns (e.g. an error code).
    - ``spends``: a ``Budget`` part; see ``Budget``.
    - ``show``: field name -> formatter for ``format_step``.
    - ``memo=False``: recompute on every state (for a rule cheaper than a lookup).
    - ``outside=True``: an outcome may carry ``OUTSIDE: True``, the model's word that every successor
      it makes, from every state it is an outcome of, is outside the state constraint
      (``within_bounds`` is False: a bound the outcome itself passes, such as a counter it writes past
      its limit). Performance only: the BFS then counts such a successor as generated and cut
      without building or fingerprinting it (it cannot be a visited state); everywhere else it is
      built as usual. Checked on the state of each memo miss (``ComposeError`` if that successor is
      within the constraint).
    - ``read_if``: read key -> ``pred(**some params) -> bool``, decided once per binding (a receive
      rule's: once per distinct message). Where it is false the binding does not read that part:
      its memo key leaves the part out, and the effect and guards receive a stand-in that raises
      ``ComposeError`` on any use. For reads only some messages need (a request that carries an id
      needs no field that only a fresh request reads): states that differ there share an entry.
    - ``shapes``: the writes and sends (names from ``writes`` and ``sends``) of the outcomes most of
      the rule's successors take, most frequent first. Performance only: the generated successors
      build a successor of one of these shapes in place, in this order, and any other by a call of
      its builder (about 1.1k-1.6k instructions more each, perf28); given, they replace the shapes the machine
      picks from the declaration alone (an outcome that writes and sends everything declared, a
      receive rule's message taken alone, ...). For an effect whose outcomes write few of many
      declared parts: the subsets are too many to try them all on every successor.
    - ``passed``: read key -> ``f(value, **some params)``, for a part the rule reads only to write
      a function of it back (a ghost's bookkeeping that every outcome carries, and nothing else the
      effect decides depends on). The key names a read and a write of the same term (``"client:rank"``
      in both ``reads`` and ``writes``); the effect neither receives it (a stand-in that raises
      ``ComposeError`` on use) nor returns it, the memo keys leave it out, and every outcome of a
      binding that reads it (``read_if``) writes ``f(value read, **params)`` there, computed per
      state by the successors (memoised per binding on the slots' contents). States that differ only
      there share their memo entries; ``f`` must be pure. No other write may name the same part.

    The effect ``f(self, **params, **reads[, msg])`` returns ``None`` (not enabled), a dict of
    {written part / channel sent to / result: value}, or a list of such dicts (a choice: one
    successor each). It may name only some of its keyword arguments."""

    def mark(fn: F) -> F:
        specs = list(getattr(fn, "__compose_rules__", ()))
        specs.append(RuleSpec(action, _params(params), tuple(reads), tuple(writes), tuple(sends), receive,
                              tuple(results), spends, dict(show or {}), memo, match, outside,
                              dict(read_if or {}), tuple(tuple(x) for x in shapes), dict(passed or {})))
        fn.__compose_rules__ = specs  # type: ignore[attr-defined]
        return fn

    return mark


def precondition(guard: Callable[..., bool]) -> Callable[[F], F]:
    """The rule is enabled only where ``guard(self, **some of the rule's arguments)`` holds.
    Evaluated with the effect and memoised with it; may sit above or below ``@rule``."""

    def mark(fn: F) -> F:
        guards = list(getattr(fn, "__compose_guards__", ()))
        guards.append(guard)
        fn.__compose_guards__ = guards  # type: ignore[attr-defined]
        return fn

    return mark


def invariant(name: str | None = None, *, reads: tuple[str, ...] = (),
              params: Mapping[str, Domain] | None = None) -> Callable[[F], F]:
    """Declare ``f(self, **reads[, **params]) -> bool`` as an invariant named ``name`` (default: the
    function's name), documented by its docstring's first line, memoised on the parts it reads.
    With ``params`` it must hold for every combination (e.g. every client), memoised on each."""

    def mark(fn: F) -> F:
        doc = (fn.__doc__ or "").strip().splitlines()
        fn.__compose_property__ = PropertySpec(name or fn.__name__, "invariant", tuple(reads),  # type: ignore[attr-defined]
                                               _params(params), (), doc[0] if doc else "")
        return fn

    return mark


def constraint(name: str | None = None, *, reads: tuple[str, ...] = (),
               params: Mapping[str, Domain] | None = None) -> Callable[[F], F]:
    """Declare ``f(self, **reads[, **params]) -> bool`` as part of the state constraint (TLC's
    CONSTRAINT, ``Machine.within_bounds``): a successor outside it is neither checked nor kept.
    Compiled like an ``@invariant``, memoised on the parts it reads (per parameter combination); the
    machine's ``within_bounds`` is the conjunction of its constraints, one generated check memoised
    on the union of their slots, unless the class defines ``within_bounds`` itself (it may then call
    ``self.declared_within_bounds(state)``)."""

    def mark(fn: F) -> F:
        doc = (fn.__doc__ or "").strip().splitlines()
        fn.__compose_property__ = PropertySpec(name or fn.__name__, "constraint", tuple(reads),  # type: ignore[attr-defined]
                                               _params(params), (), doc[0] if doc else "")
        return fn

    return mark


def transition(name: str | None = None, *, reads: tuple[str, ...] = (),
               actions: tuple[str, ...] = (), when: Callable[[tuple], bool] | None = None,
               stuttering: bool | tuple[str, ...] = False, each: bool = False) -> Callable[[F], F]:
    """Declare ``f(self, step, before, after) -> bool`` as a transition property: ``before`` and
    ``after`` have the parts in ``reads`` as attributes. Memoised on (step, those parts before and
    after). With ``actions``, checked only on steps of those actions (others pass); with ``when``,
    only on steps for which ``when(step)`` holds (the others pass without building a memo key: ``f``
    must hold on every step ``when`` refuses).

    ``stuttering=True`` declares the property a TLA+ ``[A]_reads``: a step that leaves every part in
    ``reads`` as it was passes, without a memo key (the step that last changed them was checked on
    every path, so a state that breaks it is found at that step, which is nearer the start).
    ``stuttering=(terms)`` is ``[A]_terms`` for terms written as ``reads`` are (``part`` or
    ``part:projection``, every actor of a kind): a step that leaves each of them as it was passes
    without a memo key. Cheaper than ``reads`` when the property can fail only where a
    narrow projection moves (kafka.eos's NoSpuriousFencing: a producer's fatal error), since that test
    is a few id lookups per step and the key is built only where it fails.

    ``each=True``: the property is the conjunction over the actors of its one read (a whole
    ``Actors`` part, ``reads=("part",)`` or ``("part:projection",)``) of ``f(self, step, before,
    after)`` with ``before.part`` / ``after.part`` ONE actor's value; an actor the step leaves as it
    was passes (per actor stuttering; it implies ``stuttering=True``). Memoised per actor on (step,
    its value before, after). A rule outcome that writes one actor whole, from a memo key that holds
    it whole, fixes both values, so the engine decides that actor's conjunct once per outcome rather
    than once per successor (``_Plan.check_index``)."""

    def mark(fn: F) -> F:
        doc = (fn.__doc__ or "").strip().splitlines()
        if each and (len(reads) != 1 or stuttering not in (False, True)):
            raise ComposeError(f"transition {name or fn.__name__}: each=True reads one part and is stuttering per actor")
        fn.__compose_property__ = PropertySpec(name or fn.__name__, "transition", tuple(reads),  # type: ignore[attr-defined]
                                               {}, tuple(actions), doc[0] if doc else "", when,
                                               True if each else stuttering, each)
        return fn

    return mark
