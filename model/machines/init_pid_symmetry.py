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

from ..state import InitPidRequest, InitPidResponse, InitPidState, PendingAppend

_new = tuple.__new__
#: the message types renaming touches; each names its slot in its first field
MESSAGE_TYPES = (InitPidRequest, InitPidResponse, PendingAppend)
#: ``rename`` builds the state positionally
STATE_FIELDS = ("next_producer_id", "metadata", "txn_log", "pending", "clients", "requests", "responses", "faults")


def _renamed(messages: tuple, perm: Permutation) -> tuple:
    # every message type names its slot first (``client``); tuple.__new__ skips NamedTuple's
    # Python-level constructor, on the hot path of the canonical form
    return tuple([_new(type(m), (perm[m[0]], *m[1:])) for m in messages]) if messages else messages


def rename(s: InitPidState, perm: Permutation) -> InitPidState:
    """Slot ``i`` becomes slot ``perm[i]``: its client state and every message that names it."""
    return _new(InitPidState, (s.next_producer_id, s.metadata, s.txn_log, _renamed(s.pending, perm),
                               permute_slots(s.clients, perm), _renamed(s.requests, perm),
                               _renamed(s.responses, perm), s.faults))


def rename_all(s: InitPidState, perms: tuple[Permutation, ...]) -> InitPidState:
    return rename(s, perms[0])


def slot_symmetry(n_clients: int) -> Symmetry:
    return Symmetry((Scalarset("client", n_clients),), rename_all)


def canonical(s: InitPidState) -> InitPidState:
    return canonicalize(s, s.clients, rename)
