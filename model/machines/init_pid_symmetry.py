"""Symmetry of ``kafka.init_producer_id``: the producer instance slots are interchangeable.

Every slot runs the same client code against the one transactional id and starts idle; nothing but
the messages in flight names a slot (``InitPidRequest.client``, ``InitPidResponse.client``,
``PendingAppend.client``). Producer ids and epochs come from the coordinator, not from the slot, and
which instance is newer is a ghost counter (``TxnClient.started``), so renaming slots by a
permutation maps a run to a run and keeps every property's verdict.

The canonical form sorts the slots by their own state (a ``TxnClient`` holds no slot number) and
breaks ties exactly by trying the permutations within tie groups (``checker.symmetry.canonicalize``);
with two slots that is one swap at most.
"""

from __future__ import annotations

from eoscheck.checker.symmetry import Permutation, Scalarset, Symmetry, canonicalize, permute_slots

from ..state import InitPidState


def rename(s: InitPidState, perm: Permutation) -> InitPidState:
    """Slot ``i`` becomes slot ``perm[i]``: its client state and every message that names it."""
    return s._replace(clients=permute_slots(s.clients, perm),
                      requests=tuple(r._replace(client=perm[r.client]) for r in s.requests),
                      responses=tuple(r._replace(client=perm[r.client]) for r in s.responses),
                      pending=tuple(p._replace(client=perm[p.client]) for p in s.pending))


def rename_all(s: InitPidState, perms: tuple[Permutation, ...]) -> InitPidState:
    return rename(s, perms[0])


def slot_symmetry(n_clients: int) -> Symmetry:
    return Symmetry((Scalarset("client", n_clients),), rename_all)


_SWAP: Permutation = (1, 0)


def canonical(s: InitPidState) -> InitPidState:
    clients = s.clients
    if len(clients) == 2:
        first, second = clients
        if first < second:
            return s
        image = rename(s, _SWAP)
        return image if first > second or image < s else s
    if all(a < b for a, b in zip(clients, clients[1:])):
        return s
    return canonicalize(s, clients, rename)
