"""Network semantics of a ``Channel``, chosen as a parameter (as in Stateright's ``ActorModel``).

``Network(delivery, loss=..., duplication=...)``:

- ``Delivery.ORDERED``: per connection in send order (TCP); only the oldest message of each
  connection can be delivered. The channel is kept grouped by connection (connections sorted,
  each in send order), so two states that differ only in how connections interleave are one state;
  ``interleaving=True`` keeps the global send order instead (as hand-written machines that store
  one tuple in send order do, for identical state counts).
- ``Delivery.UNORDERED``: a multiset; any message can be delivered next (and is consumed).
- ``Delivery.DUPLICATING``: a set; delivering a message leaves it in flight, so it can be
  delivered again at any later point (Stateright's ``UnorderedDuplicating``).
- ``loss``: messages may be lost. ``None``: never; ``True``: any message, any number of times;
  the name of a ``Budget`` part: at most that many losses. A generated rule (``Channel.drop``,
  default ``Drop_<channel>``) removes one message.
- ``duplication``: the name of a ``Budget`` part: a generated rule (``Channel.duplicate``, default
  ``Duplicate_<channel>``) adds one more copy of a message in flight (a retransmission the
  receiver cannot tell apart); under ``ORDERED`` the copy sits right behind its original, so the
  connection's order is kept. Unbounded duplication is only finite as ``DUPLICATING``.

The channel's messages are one interned tuple, and every operation on it (send, the deliverable
messages, drops, copies) is memoised on the channel's id.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from ..intern import Interner
from .declare import ComposeError


class Delivery(Enum):
    ORDERED = "ordered"
    UNORDERED = "unordered"
    DUPLICATING = "duplicating"


@dataclass(frozen=True)
class Network:
    delivery: Delivery = Delivery.ORDERED
    loss: bool | str | None = None
    duplication: str | None = None
    interleaving: bool = False


ORDERED = Network(Delivery.ORDERED)
UNORDERED = Network(Delivery.UNORDERED)
DUPLICATING = Network(Delivery.DUPLICATING)

_MISS = object()


class ChannelOps:
    """One channel's operations in one machine, memoised on the channel's id.

    ``deliverable(id)``: ``((msg, rest id), ...)`` for every message that may be delivered next
    (``rest``: the channel once it is delivered; the same id under ``DUPLICATING``).
    ``droppable(id)``: ``((msg, rest id), ...)`` for every distinct message that may be lost.
    ``duplicable(id)``: ``((msg, id with one more copy), ...)``.
    ``send(id, msg)``: the id of the channel with ``msg`` added.
    ``sender(msgs)``: (cache, fold) for sending ``msgs`` in order: ``cache`` maps a channel id to
    the id after the sends, ``fold(id)`` computes (and caches) a missing one."""

    __slots__ = ("_deliver", "_drop", "_dup", "_send", "_senders", "key", "memoize", "name", "net", "table")

    def __init__(self, name: str, net: Network, table: Interner[Any],
                 connection: tuple[str, ...] | Callable[[Any], Hashable], memoize: bool) -> None:
        self.name, self.net, self.table, self.memoize = name, net, table, memoize
        if callable(connection):
            self.key: Callable[[Any], Any] = connection
        elif connection:
            names = tuple(connection)
            self.key = lambda m: tuple(getattr(m, n) for n in names)
        else:
            self.key = lambda m: ()
        self.clear()

    def clear(self) -> None:
        self._deliver: dict[int, tuple[tuple[Any, int], ...]] = {}
        self._drop: dict[int, tuple[tuple[Any, int], ...]] = {}
        self._dup: dict[int, tuple[tuple[Any, int], ...]] = {}
        self._send: dict[tuple[int, Any], int] = {}
        self._senders: dict[tuple[Any, ...], tuple[dict[int, int], Callable[[int], int]]] = {}

    def __repr__(self) -> str:  # no cache contents (``run_key`` reads the machine's attributes)
        return f"ChannelOps({self.name!r}, {self.net!r})"

    # ---- values

    def normalize(self, msgs: tuple[Any, ...]) -> tuple[Any, ...]:
        """The canonical form of a channel holding ``msgs``."""
        delivery = self.net.delivery
        if delivery is Delivery.UNORDERED:
            return tuple(sorted(msgs))
        if delivery is Delivery.DUPLICATING:
            return tuple(sorted(set(msgs)))
        if self.net.interleaving:
            return tuple(msgs)
        key = self.key
        return tuple(sorted(msgs, key=key))  # stable: each connection keeps its send order

    def added(self, msgs: tuple[Any, ...], msg: Any) -> tuple[Any, ...]:
        delivery = self.net.delivery
        if delivery is Delivery.ORDERED:
            if self.net.interleaving:
                return msgs + (msg,)
            key = self.key
            k = key(msg)
            i = len(msgs)
            while i and key(msgs[i - 1]) > k:  # after the last message of a connection <= k
                i -= 1
            return msgs[:i] + (msg,) + msgs[i:]
        if delivery is Delivery.DUPLICATING and msg in msgs:
            return msgs
        i = bisect.bisect_right(msgs, msg)
        return msgs[:i] + (msg,) + msgs[i:]

    def empty(self) -> int:
        """The id of the channel holding nothing (the one int object for it)."""
        return self.table.intern(())

    # ---- memoised operations on ids

    def value(self, ident: int) -> tuple[Any, ...]:
        try:
            return self.table.values[ident]
        except KeyError:
            raise ComposeError(f"a state holds channel id {ident} ({self.name}) that this process never interned: "
                               "states of a composed machine cross processes only through export_states/"
                               "import_states (the parallel engine does; the Spark engine pickles states and "
                               "cannot run composed machines)") from None

    def send(self, ident: int, msg: Any) -> int:
        k = (ident, msg)
        out = self._send.get(k)
        if out is None:
            table = self.table
            out = table.intern(self.added(self.value(ident), msg))
            if self.memoize:
                self._send[k] = out
        return out

    def sender(self, msgs: tuple[Any, ...]) -> tuple[dict[int, int], Callable[[int], int]]:
        """What a rule's outcome that sends ``msgs`` applies per successor: one dict lookup on the
        channel's id instead of a ``send`` call (and its (id, message) key) per message. On a
        miss ``fold`` makes the same ``send`` calls in the same order as before, so the table's
        ids are assigned in the same order."""
        entry = self._senders.get(msgs)
        if entry is not None:
            return entry
        cache: dict[int, int] = {}
        send = self.send
        memoize = self.memoize

        def fold(ident: int) -> int:
            out = ident
            for m in msgs:
                out = send(out, m)
            if memoize:
                cache[ident] = out
            return out

        entry = (cache, fold)
        if memoize:
            self._senders[msgs] = entry
        return entry

    def deliverable(self, ident: int) -> tuple[tuple[Any, int], ...]:
        out = self._deliver.get(ident)
        if out is None:
            out = self._deliverable(self.value(ident))
            if self.memoize:
                self._deliver[ident] = out
        return out

    def droppable(self, ident: int) -> tuple[tuple[Any, int], ...]:
        out = self._drop.get(ident)
        if out is None:
            out = self._droppable(self.value(ident))
            if self.memoize:
                self._drop[ident] = out
        return out

    def duplicable(self, ident: int) -> tuple[tuple[Any, int], ...]:
        out = self._dup.get(ident)
        if out is None:
            intern = self.table.intern
            msgs = self.value(ident)
            seen: set[Any] = set()
            moves = []
            ordered = self.net.delivery is Delivery.ORDERED
            for i, m in enumerate(msgs):
                if m not in seen:
                    seen.add(m)
                    # ordered: the copy right behind its original (a link that delivers twice keeps
                    # the connection's order; a copy sent later would be a reordering)
                    copy = msgs[:i + 1] + msgs[i:] if ordered else self.added(msgs, m)
                    moves.append((m, intern(copy)))
            out = tuple(moves)
            if self.memoize:
                self._dup[ident] = out
        return out

    def _deliverable(self, msgs: tuple[Any, ...]) -> tuple[tuple[Any, int], ...]:
        intern = self.table.intern
        delivery = self.net.delivery
        if delivery is Delivery.DUPLICATING:
            same = intern(msgs)
            return tuple((m, same) for m in msgs)
        moves = []
        if delivery is Delivery.ORDERED:
            key = self.key
            heads: set[Hashable] = set()
            for i, m in enumerate(msgs):
                k = key(m)
                if k not in heads:
                    heads.add(k)
                    moves.append((m, intern(msgs[:i] + msgs[i + 1:])))
            return tuple(moves)
        previous = _MISS
        for i, m in enumerate(msgs):  # sorted: equal messages are adjacent
            if m != previous:
                moves.append((m, intern(msgs[:i] + msgs[i + 1:])))
            previous = m
        return tuple(moves)

    def _droppable(self, msgs: tuple[Any, ...]) -> tuple[tuple[Any, int], ...]:
        intern = self.table.intern
        moves = []
        seen: set[tuple[Any, ...]] = set()
        for i, m in enumerate(msgs):
            rest = msgs[:i] + msgs[i + 1:]
            if rest not in seen:  # equal copies of a message: one loss, not one per copy
                seen.add(rest)
                moves.append((m, intern(rest)))
        return tuple(moves)
