"""The parts a composed machine's state is made of, as class-level declarations.

A part occupies one or more *slots* of the flat state tuple, in declaration order. A scalar part
keeps its value in its slot; an interned part keeps the *id* of its value (``checker.intern``), so
the state stays a flat tuple of small ints however large the part, and a rule applied to the part
is memoised on that id.

Sizes and budgets may be given as ints or as the *name* of a configuration entry (a bound), which
the machine resolves when it is built: ``Actors(count="clients")``, ``Budget("lost_responses")``.

Symmetry: ``Actors(symmetric="client")`` puts the actors' indices in a scalarset (interchangeable
identities; every Actors part naming the same scalarset is permuted together), and
``rename={"client": fn}`` on any part says how its value mentions those identities:
``fn(value, perm) -> value`` with identity ``i`` renamed ``perm[i]``. ``Actors(order=fn)`` sorts the
identities by ``fn(value)`` first (ties by the slots' contents): it picks which state of an orbit is
its canonical form, never how many there are.

Projections: ``projections={"phase": fn}`` on a ``Scalar``, ``Part``, ``Actors`` or ``Channel`` names
a pure function of the part's value; a rule or property that reads ``"name[p]:phase"`` (or
``"name:phase"``) receives ``fn(value)`` instead of the value and is memoised on it, so states that
differ only in fields the projection drops share a memo entry. A ``Projection(get, put)`` may also
be written: a rule that writes ``"name:phase"`` returns the new projected value, and the part becomes
``put(old value, new projected value)``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .network import Network

#: an int, or the name of a configuration entry that holds one
Size = int | str


@dataclass(frozen=True)
class Projection:
    """A projection that can be written back: ``get(value)`` is what a reader sees (and is memoised
    on), ``put(value, projected)`` the part's value after a rule writes ``projected`` to it. The two
    must agree (``get(put(v, p)) == p`` and ``put(v, get(v)) == v``): a rule that writes the
    projection then changes only the fields ``get`` keeps."""

    get: Callable[[Any], Hashable]
    put: Callable[[Any, Any], Any]


#: a part's named projections: name -> a pure function of the part's value (a hashable result), or a
#: ``Projection`` that can also be written
Projections = Mapping[str, "Callable[[Any], Hashable] | Projection"]


class Decl:
    """Base of every part declaration; ``name`` is the class attribute it is assigned to."""

    name: str = ""
    #: whether the slot holds an interned id (True) or the value itself
    interned: bool = False

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def initial(self, machine: Any, index: int | None = None) -> Hashable:
        init = getattr(self, "init", 0)
        if callable(init):
            return init(machine) if index is None else init(machine, index)
        return init


@dataclass(eq=False)
class Scalar(Decl):
    """One int/bool kept inline in the state (a phase, a counter, a bit set).

    ``init``: the initial value, or ``init(machine) -> value``."""

    init: Any = 0
    doc: str = ""
    rename: Mapping[str, Callable[[Any, tuple[int, ...]], Any]] | None = None
    projections: Projections | None = None


@dataclass(eq=False)
class Part(Decl):
    """One interned value (a log, a table, a NamedTuple of an actor's fields): the slot holds its
    id, rules see the value. Values are hashable ints, bools, strings-free tuples/NamedTuples.

    ``init``: the initial value, or ``init(machine) -> value``. ``show(value)`` renders it for
    traces (default: NamedTuples as dicts, tuples as lists)."""

    init: Any = ()
    doc: str = ""
    show: Callable[[Any], Any] | None = None
    interned: bool = True
    rename: Mapping[str, Callable[[Any, tuple[int, ...]], Any]] | None = None
    projections: Projections | None = None


@dataclass(eq=False)
class Actors(Decl):
    """``count`` interchangeable-shaped actors of one kind, one slot each (``count`` an int or a
    configuration name). A rule reads or writes one of them as ``"name[param]"`` and all of them as
    ``"name"`` (a tuple). ``interned=False`` keeps each actor's value inline (a small int state).

    ``init``: the initial value of every actor, or ``init(machine, index) -> value``."""

    count: Size = 1
    init: Any = 0
    interned: bool = True
    doc: str = ""
    show: Callable[[Any], Any] | None = None
    #: the scalarset these actors' indices belong to: interchangeable identities (symmetry)
    symmetric: str = ""
    rename: Mapping[str, Callable[[Any, tuple[int, ...]], Any]] | None = None
    projections: Projections | None = None
    #: ``order(value) -> int``: the canonical form sorts the identities by it first (the slots'
    #: contents break its ties, so the form stays one state per orbit). A pure function of the
    #: actor's value, which renaming leaves alone; it picks which state of an orbit is the form, so
    #: an order under which most successors of the states an engine keeps are their own form saves
    #: building their renamed image
    order: Callable[[Any], int] | None = None


@dataclass(eq=False)
class Budget(Decl):
    """A fault budget: a counter from 0 up to ``bound`` (an int or a configuration name). A rule
    declared with ``spends=<this part>`` is enabled only while the counter is below the bound and
    increments it; with a bound of 0 the rule is not compiled at all (not even listed in
    ``Machine.actions``), so a small spec stays small."""

    bound: Size = 0
    doc: str = ""


@dataclass(eq=False)
class Clock(Decl):
    """Abstract time: an int from ``init`` up to ``max`` (an int or a configuration name).

    With ``tick`` set (an action name), the machine gets that rule: ``tick(now)`` advances the clock
    by one while it is below ``max`` and ``when(machine, **reads)`` holds, ``when`` reading the parts
    named in ``reads`` (memoised on them, like any rule)."""

    max: Size = 0
    init: int = 0
    tick: str | None = None
    reads: tuple[str, ...] = ()
    when: Callable[..., bool] | None = None
    doc: str = ""


@dataclass(eq=False)
class Channel(Decl):
    """Messages in flight, under a network semantics (``network``: a ``Network`` or the name of a
    configuration entry holding one). The slot holds the id of the interned tuple of messages.

    - ``connection``: for ordered delivery, the attribute names (or a function ``msg -> key``) that
      identify a message's connection; messages of one connection are delivered in send order.
      Default: one connection for the whole channel.
    - ``label``: the message attributes that name a message in a Drop/Duplicate step (default:
      the whole message as one parameter ``msg``).
    - ``drop`` / ``duplicate``: the action names of the generated loss and duplication rules.

    Messages are hashable, mutually comparable values (NamedTuples of ints; give messages of
    different kinds a leading kind number so any two compare)."""

    network: Network | str = "network"
    connection: tuple[str, ...] | Callable[[Any], Hashable] = ()
    label: tuple[str, ...] = ()
    drop: str = ""
    duplicate: str = ""
    init: Any = ()
    doc: str = ""
    show: Callable[[Any], Any] | None = None
    interned: bool = True
    rename: Mapping[str, Callable[[Any, tuple[int, ...]], Any]] | None = None
    projections: Projections | None = None
