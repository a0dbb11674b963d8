"""One way to compose a machine: parts, guarded rules and properties, declared (Kafka-free).

API summary (full reference: ``docs/compose.md``)::

    from eoscheck.checker.compose import (Composed, Scalar, Part, Actors, Channel, Clock, Budget,
                                          Network, Delivery, rule, precondition, invariant, transition)

    class Msg(NamedTuple):
        src: int
        dst: int

    class Ping(Composed):
        # parts, in slot order: a state is a flat tuple of these (interned parts by id)
        node = Actors(count="nodes", init=0, interned=False)   # one int per node
        log = Part(init=())                                     # an interned value
        net = Channel(network="network", connection=("src", "dst"), drop="Lose")
        lost = Budget("max_lost")                               # a fault budget (0: no Lose rule)
        now = Clock(max="max_ticks", tick="Tick", reads=("net",), when=lambda m, net: not net)

        @precondition(lambda self, node: node == 0)
        @rule("Send", params={"n": "node"}, reads=("node[n]",), writes=("node[n]",), sends=("net",))
        def send(self, n, node):
            return {"node": 1, "net": Msg(n, (n + 1) % self.n)}

        @rule("Receive", receive="net", params=("src", "dst"), reads=("log",), writes=("log",),
              results=("outcome",))
        def receive(self, src, dst, msg, log):
            return {"log": log + (src,), "outcome": 1}

        @invariant("Bounded", reads=("log",))
        def bounded(self, log):
            "the log holds at most one entry per node"
            return len(log) <= self.n

        def __init__(self, nodes=2, network=ORDERED, max_lost=0, max_ticks=0, memoize=True):
            self.n = nodes
            super().__init__(dict(nodes=nodes, network=network, max_lost=max_lost,
                                  max_ticks=max_ticks), memoize=memoize)

- Parts (``parts``): ``Scalar`` (inline int/bool), ``Part`` (interned value), ``Actors`` (``count``
  slots), ``Channel`` (messages under a ``Network``), ``Clock`` (bounded time, optional Tick rule),
  ``Budget`` (fault counter; a rule ``spends`` it; bound 0 removes the rule). Sizes and bounds are
  ints or names of configuration entries.
- Rules (``declare.rule``): the effect gets its parameters and the parts it ``reads`` as keyword
  arguments (``"client[c]"`` is passed as ``client``), and returns None (disabled), a dict
  ``{written part | channel sent to | result: value}`` or a list of dicts (a choice). Steps are
  ``(action, *params, *results)``; ``Machine.actions`` and ``format_step`` come from the
  declarations. ``receive=`` makes a handler of a channel's deliverable messages.
- Projections: ``projections={"phase": fn}`` on a part (or ``Projection(get, put)``, writable); a
  read ``"client[c]:phase"`` passes ``fn(value)`` only and is memoised on it.
- Memoisation: every rule binding is memoised on exactly the slots it reads (the effect cannot see
  anything else of the state), channels on their ids, invariants on the parts they read,
  transition properties on (step, parts before, parts after). ``memoize=False`` recomputes all
  (``compose.testing.compare_memo`` checks both agree).
- Network semantics (``network``): ``Network(Delivery.ORDERED | UNORDERED | DUPLICATING,
  loss=None | True | budget name, duplication=None | budget name)``.
- Symmetry: ``Actors(symmetric="scalarset")`` and ``rename={"scalarset": fn}`` on the parts that
  mention those identities give ``canonical`` and ``symmetry`` (for ``check_symmetry``).
- Handled once: pickling (the compiled plan and memos stay behind), ``clear_caches``,
  ``export_states``/``import_states`` (each interned part once per batch), ``fields`` (every
  part by name), ``view(state)`` (parts by name), ``state(**parts)`` (encode), ``slot(name)`` and
  ``part_values(name)`` (fast reads in ``within_bounds``/``canonical``), and ``property_docs()``
  for ``ModelDef.properties``.
- Constant slots (``pack_constants``, on by default): a state leaves out the slots no compiled rule
  writes that every initial state agrees on; generated code reads them as constants and memo keys
  drop them. ``slot`` names logical slots: read a state by them through ``slot_reader``,
  ``slot_source``, ``slot_place`` or ``logical`` (docs/compose.md, "Constant slots").
"""

from __future__ import annotations

from .declare import OUTSIDE, ComposeError, constraint, invariant, precondition, rule, transition
from .machine import TABLES, Composed, View
from .network import DUPLICATING, ORDERED, UNORDERED, Delivery, Network
from .parts import Actors, Budget, Channel, Clock, Part, Projection, Scalar

__all__ = [
           "DUPLICATING",
           "ORDERED",
           "OUTSIDE",
           "TABLES",
           "UNORDERED",
           "Actors",
           "Budget",
           "Channel",
           "Clock",
           "ComposeError",
           "Composed",
           "Delivery",
           "Network",
           "Part",
           "Projection",
           "Scalar",
           "View",
           "constraint",
           "invariant",
           "precondition",
           "rule",
           "transition",
]
