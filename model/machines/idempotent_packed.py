"""The flat form in which ``kafka.idempotent_produce`` keeps its states.

``state.IdempotentState`` nests the partition (log, producer state), the follower, the requests and
responses in flight and each client. Hashing that nest costs about a microsecond per state, and a
step rebuilds every level it touches. The machine keeps instead a flat tuple of the scalars and the
*ids* of interned parts (``checker.intern``): a state hashes in a tenth of the time, and a rule
applied to a part is memoised on the part's id (the machine's successor caches).

``PackedIdempotentState`` reads like an ``IdempotentState`` (``s.partition.log``,
``s.clients[0].batches``, ``s.faults.lost_responses``): properties, traces and tests use the
same attribute names on either form. It pickles as its unpacked ``IdempotentState`` and is
packed again on load, so a state moved to another process (parallel rebalancing, Spark) is read
with that process's tables.
"""

from __future__ import annotations

from typing import Any

from eoscheck.checker.intern import Interner

from ..state import (
    FollowerState,
    IdempotentClient,
    IdempotentFaults,
    IdempotentState,
    PartitionState,
    ProduceRequest,
    ProduceResponse,
)

# Process-wide tables: the content of a part does not depend on the machine's configuration, so
# every machine of a process shares them (a state stays readable after its machine is gone).
PARTITIONS: Interner[PartitionState] = Interner("partition")
FOLLOWERS: Interner[tuple[FollowerState, ...]] = Interner("follower")
REQUESTS: Interner[tuple[ProduceRequest, ...]] = Interner("requests")
RESPONSES: Interner[tuple[ProduceResponse, ...]] = Interner("responses")
CLIENTS: Interner[IdempotentClient] = Interner("client")

# positions in the flat tuple
NOW, NEXT_PID, LEADER_EPOCH = 0, 1, 2
LOST, TRANSIENT, DELETES, FAILOVERS, REBUILT, SNAPSHOT = 3, 4, 5, 6, 7, 8  # IdempotentFaults, in its order
PART, FOLLOWER, REQS, RESPS = 9, 10, 11, 12
CLIENT0 = 13  # then one id per client

_new = tuple.__new__


class PackedIdempotentState(tuple):
    """``(now, next_producer_id, leader_epoch, *faults, partition id, follower id, requests id,
    responses id, *client ids)``; see the module docstring."""

    __slots__ = ()

    @property
    def now(self) -> int:
        return self[NOW]

    @property
    def next_producer_id(self) -> int:
        return self[NEXT_PID]

    @property
    def leader_epoch(self) -> int:
        return self[LEADER_EPOCH]

    @property
    def faults(self) -> IdempotentFaults:
        return IdempotentFaults(*self[LOST:PART])

    @property
    def partition(self) -> PartitionState:
        return PARTITIONS.values[self[PART]]

    @property
    def follower(self) -> tuple[FollowerState, ...]:
        return FOLLOWERS.values[self[FOLLOWER]]

    @property
    def requests(self) -> tuple[ProduceRequest, ...]:
        return REQUESTS.values[self[REQS]]

    @property
    def responses(self) -> tuple[ProduceResponse, ...]:
        return RESPONSES.values[self[RESPS]]

    @property
    def clients(self) -> tuple[IdempotentClient, ...]:
        values = CLIENTS.values
        return tuple(values[c] for c in self[CLIENT0:])

    def unpack(self) -> IdempotentState:
        return IdempotentState(self.now, self.next_producer_id, self.partition, self.follower, self.leader_epoch,
                               self.clients, self.requests, self.responses, self.faults)

    def __reduce__(self) -> tuple[Any, tuple[IdempotentState]]:
        return pack, (self.unpack(),)

    def __repr__(self) -> str:
        return f"Packed{self.unpack()!r}"


def pack(s: IdempotentState) -> PackedIdempotentState:
    """The flat form of ``s`` (its parts interned in this process's tables)."""
    return _new(PackedIdempotentState, (
        s.now, s.next_producer_id, s.leader_epoch, *s.faults, PARTITIONS.intern(s.partition),
        FOLLOWERS.intern(s.follower), REQUESTS.intern(s.requests), RESPONSES.intern(s.responses),
        *(CLIENTS.intern(c) for c in s.clients)))


# the interned parts of a state, by table: (table, positions in the flat tuple)
_PART_TABLES: tuple[tuple[Interner[Any], int], ...] = ((PARTITIONS, PART), (FOLLOWERS, FOLLOWER),
                                                        (REQUESTS, REQS), (RESPONSES, RESPS))

#: a batch of states in transit: (flat tuples, one {id: part} per table of ``_PART_TABLES`` + clients)
Exported = tuple[list[tuple[int, ...]], list[dict[int, Any]]]


def export_batch(states: list[PackedIdempotentState]) -> Exported:
    """States for another process: the flat tuples, and each part they refer to once (a batch of
    10,000 states refers to a few thousand parts). Pickling each state as its unpacked form would
    send every part once per state and re-intern it on arrival."""
    flat = [tuple(s) for s in states]  # plain tuples: no ``__reduce__`` to unpack them
    parts: list[dict[int, Any]] = []
    for table, pos in _PART_TABLES:
        values = table.values
        parts.append({i: values[i] for i in {s[pos] for s in states}})
    clients = CLIENTS.values
    parts.append({i: clients[i] for i in {c for s in states for c in s[CLIENT0:]}})
    return flat, parts


def import_batch(exported: Exported) -> list[PackedIdempotentState]:
    """The states of ``export_batch``, their parts interned in this process's tables."""
    flat, parts = exported
    for table, values in zip((*(t for t, _ in _PART_TABLES), CLIENTS), parts):
        table.adopt(values)
    return [_new(PackedIdempotentState, s) for s in flat]
