"""Symmetry of ``kafka.idempotent_produce``: the idempotent clients are interchangeable.

Every client runs the same code with the same bounds and starts with the producer id equal to its
index (``init_states``). Renaming clients by a permutation ``perm`` therefore maps a run to a run
when it renames, together with each client's slot, every reference to a client (``LogRecord.client``,
``ProduceRequest.client``, ``ProduceResponse.client``) and every *initial* producer id
(``0 .. clients-1``; ``ProducerBatch``, ``LogRecord``, ``ProduceRequest`` and the leader's and
follower's ``ProducerStateEntry``). Producer ids allocated later (InitProducerId takes the
allocator's ``next_producer_id``) are *not* renamed: the allocator hands them out in order, so the
same id goes to the renamed client in the renamed run. Nothing in the model orders producer ids
except the producer-state tables, which are kept sorted by id and are re-sorted after renaming.

The canonical form sorts clients by a rename-invariant key (the client's own state with its
initial producer id written as one marker) and breaks ties exactly by trying the permutations
within tie groups (``checker.symmetry.canonicalize``). It returns a packed state, whose parts are
renamed once per (part, permutation) and memoised, like the machine's part rules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from eoscheck.checker.intern import Interner
from eoscheck.checker.symmetry import Permutation, Scalarset, Symmetry, canonicalize

from ..partition.producer_state import Producers
from ..state import FollowerState, IdempotentClient, PartitionState, ProduceRequest, ProduceResponse
from .idempotent_packed import (
    CLIENT0,
    CLIENTS,
    FOLLOWER,
    FOLLOWERS,
    PART,
    PARTITIONS,
    REQS,
    REQUESTS,
    RESPONSES,
    RESPS,
    PackedIdempotentState,
)

_new = tuple.__new__
#: what an initial producer id reads as in a client's sort key (any value no producer id takes)
_OWN_INITIAL_PID = -7


def rename_pid(pid: int, perm: Permutation) -> int:
    """An initial producer id (``0 .. clients-1``) follows its client; later ones and -1 stay."""
    return perm[pid] if 0 <= pid < len(perm) else pid


def rename_client(c: IdempotentClient, perm: Permutation) -> IdempotentClient:
    return c._replace(producer_id=rename_pid(c.producer_id, perm),
                      batches=tuple(b._replace(producer_id=rename_pid(b.producer_id, perm)) for b in c.batches))


def rename_producers(producers: Producers, perm: Permutation) -> Producers:
    return tuple(sorted(e._replace(producer_id=rename_pid(e.producer_id, perm)) for e in producers))


def rename_partition(p: PartitionState, perm: Permutation) -> PartitionState:
    log = tuple(r._replace(client=perm[r.client], producer_id=rename_pid(r.producer_id, perm)) for r in p.log)
    return p._replace(log=log, producers=rename_producers(p.producers, perm))


def rename_follower(f: tuple[FollowerState, ...], perm: Permutation) -> tuple[FollowerState, ...]:
    return tuple(x._replace(producers=rename_producers(x.producers, perm)) for x in f)


def rename_requests(reqs: tuple[ProduceRequest, ...], perm: Permutation) -> tuple[ProduceRequest, ...]:
    return tuple(r._replace(client=perm[r.client], producer_id=rename_pid(r.producer_id, perm)) for r in reqs)


def rename_responses(resps: tuple[ProduceResponse, ...], perm: Permutation) -> tuple[ProduceResponse, ...]:
    return tuple(r._replace(client=perm[r.client]) for r in resps)


def client_key(c: IdempotentClient, n_clients: int) -> int:
    """A sort key equal for clients that differ only by their index (and initial producer id)."""
    mark = (lambda pid: _OWN_INITIAL_PID if 0 <= pid < n_clients else pid)
    return hash(c._replace(producer_id=mark(c.producer_id),
                           batches=tuple(b._replace(producer_id=mark(b.producer_id)) for b in c.batches)))


# (table, renaming rule, position in the packed state) of each renamed part
_PARTS: tuple[tuple[Interner[Any], Callable[[Any, Permutation], Any], int], ...] = (
    (PARTITIONS, rename_partition, PART), (FOLLOWERS, rename_follower, FOLLOWER),
    (REQUESTS, rename_requests, REQS), (RESPONSES, rename_responses, RESPS))


class ClientSymmetry:
    """Renaming and the canonical form of packed states, memoised per part and permutation.

    A class in an importable module (not a closure) so that Spark ships it by reference and it
    reads the executor's interning tables (see ``checker.intern``)."""

    def __init__(self, n_clients: int) -> None:
        self.n = n_clients
        self.identity: Permutation = tuple(range(n_clients))
        self.clear()

    def clear(self) -> None:
        #: perm -> one memo per entry of ``_PARTS`` and one for clients: part id -> renamed part id
        self._renamed: dict[Permutation, tuple[dict[int, int], ...]] = {}
        self._keys: dict[int, int] = {}

    def __getstate__(self) -> dict[str, Any]:
        # the memos hold ids of parts the receiving process has not interned
        return {"n": self.n, "identity": self.identity}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.clear()

    def declared(self) -> Symmetry:
        """The ``Symmetry`` that ``check_symmetry`` counts orbits with."""
        return Symmetry((Scalarset("client", self.n),), self.apply_all)

    def apply_all(self, s: PackedIdempotentState, perms: tuple[Permutation, ...]) -> PackedIdempotentState:
        return self.apply(s, perms[0])

    def apply(self, s: PackedIdempotentState, perm: Permutation) -> PackedIdempotentState:
        """Client ``i`` becomes client ``perm[i]`` (slot and every reference)."""
        if perm == self.identity:
            return s
        memos = self._renamed.get(perm)
        if memos is None:
            memos = self._renamed[perm] = tuple({} for _ in range(len(_PARTS) + 1))
        out = list(s)
        for (table, rule, pos), memo in zip(_PARTS, memos):
            ident = s[pos]
            new = memo.get(ident)
            if new is None:
                new = memo[ident] = table.intern(rule(table.values[ident], perm))
            out[pos] = new
        memo = memos[-1]
        clients = CLIENTS.values
        for i in range(self.n):
            ident = s[CLIENT0 + i]
            new = memo.get(ident)
            if new is None:
                new = memo[ident] = CLIENTS.intern(rename_client(clients[ident], perm))
            out[CLIENT0 + perm[i]] = new
        return _new(PackedIdempotentState, out)

    def canonical(self, s: PackedIdempotentState) -> PackedIdempotentState:
        keys_memo = self._keys
        keys = []
        for ident in s[CLIENT0:]:
            key = keys_memo.get(ident)
            if key is None:
                key = keys_memo[ident] = client_key(CLIENTS.values[ident], self.n)
            keys.append(key)
        return canonicalize(s, keys, self.apply)
