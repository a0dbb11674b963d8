"""Symmetry of ``kafka.eos``: the transactional producers (each with its own transactional id, and with
``input_records`` the consumer of its own input partition) are interchangeable identities, the
scalarset ``producer``; the producer instances of ``eos_instances`` are another, ``instance``.

Every producer starts alike and runs the same rules; producer ids and epochs come from the
coordinator's allocator, not from the index. What names a producer's index besides its own actors
(``producer``, ``zombie``, ``txn``, ``txn_log``, all permuted together):

- the value of a data entry in a leader's log, ``properties.record_value(t, r)``;
- the produce requests and responses in flight (``Routed.client`` and the message's ``client``);
- without members, the group's committed offsets (one per input partition, indexed by ``t``) and
  its pending offsets' ``partition``;
- with members (``eos_group``): member ``i`` is instance ``i`` together with ``producer[i]``, so the
  ``member`` actors are renamed with the producers; the group's one input partition is the
  group's, and the group names members by member id, which is data: nothing in it is renamed.

Member ids are ranks: ``1..members``, the order in which the range assignor sorts the members'
current ids (``group.member.rejoin_ranked``). Kafka gives a joining member ``clientId + "-" + UUID``
(``GroupMetadata.generateMemberId``) and ``RangeAssignor`` sorts member ids, so which instance
sorts first is arbitrary: the initial states are every assignment of the first ids to the instances
(one orbit), and a rejoin's new id may take any rank. Before, a member id encoded the instance's
index (``1 + instance + members * incarnation``): instance 0 always owned the partition first and,
of two members with the same number of rejoins, the lower index sorted first, so renaming instances
did not map a run to a run.

Markers, the transaction log, ``__consumer_offsets`` entries and producer-state entries name
producer ids, not indices; the read_committed consumers (``readers``, ``eos_readers``) hold a fetch
position and the log offsets they delivered, which renaming a record's producer leaves in place.
Renaming by a permutation therefore maps a run to a run and keeps every property's verdict (NoLoss
and ExactlyOnce hold per producer, the others over all of them).

Output partitions are another scalarset, ``partition`` (``eos_partition_symmetry``): their renaming
moves a producer's per-partition state and ``added`` bits, so the producers' sort keys change under
it, and the leaders (the partitions' sort keys) hold producers' records; the canonical form of both
is the least of one's form over the other's renamings (``checker.compose``'s ``_Plan.product``),
still one state per orbit.
"""

from __future__ import annotations

from typing import Any

from .. import properties as props
from ..group.metadata import GroupMeta
from ..state import TxnPartitionState
from ..transactions.log import EntryKind
from .eos_verification import rename_pending

Permutation = tuple[int, ...]


def rename_leader(leader: TxnPartitionState, perm: Permutation) -> TxnPartitionState:
    """A leader whose log holds producer ``t``'s records holds ``perm[t]``'s."""
    log = []
    for e in leader.log:
        if e.kind == EntryKind.TXN_DATA:
            t, r = props.record_of(e.value)
            e = e._replace(value=props.record_value(perm[t], r))
        log.append(e)
    return rename_pending(leader._replace(log=tuple(log)), perm)


def rename_routed(messages: tuple[Any, ...], perm: Permutation) -> tuple[Any, ...]:
    """Produce requests and responses name their producer in the routing and in the message."""
    return tuple(m._replace(client=perm[m.client], message=m.message._replace(client=perm[m.client]))
                 for m in messages)


def rename_group(group: GroupMeta, perm: Permutation) -> GroupMeta:
    """Without members, input partition ``t`` (producer ``t``'s) becomes ``perm[t]``: committed
    offsets and the assignment move, pending offsets are renamed and kept sorted by (producer id,
    partition). With members (a group with membership starts at generation 1, ``eos_group``) the
    input partition is the group's, not a producer's, and the group names members by member id:
    nothing in it names an instance's index."""
    if group.generation_id:
        return group
    def moved(values: tuple[Any, ...]) -> tuple[Any, ...]:
        out: list[Any] = list(values)
        for t, v in enumerate(values):
            out[perm[t]] = v
        return tuple(out)

    pending = tuple(sorted((e._replace(partition=perm[e.partition]) for e in group.pending),
                           key=lambda e: (e.producer_id, e.partition)))
    return group._replace(offsets=moved(group.offsets), assignment=moved(group.assignment), pending=pending)


__all__ = ["rename_group", "rename_leader", "rename_routed"]
