"""Membership and rebalance of a classic group, reduced to what moves input partitions.

JoinGroup adds a member and moves the group to PreparingRebalance; a member whose session times out
(a paused process: GC, network partition) is removed and, in Stable or CompletingRebalance, the group
prepares a rebalance. Completing the join (``initNextGeneration``) bumps the generation and moves to
CompletingRebalance (or Empty with no members); the leader's SyncGroup installs the assignment and
moves to Stable. The removed process does not know it was removed: until it next talks to the
coordinator it is a zombie that still holds its old generation and partitions.
"""

from __future__ import annotations

from .metadata import NO_INSTANCE_ID, NO_MEMBER_ID, GroupMeta, GroupState

G = GroupState


def join_group(group: GroupMeta, member_id: int, instance_id: int = NO_INSTANCE_ID) -> GroupMeta:
    """A (new or rejoining) member joins: the group prepares a rebalance."""
    members = tuple(sorted(set(group.members) | {member_id}))
    statics = group.static_members
    if instance_id != NO_INSTANCE_ID:
        statics = tuple(sorted({(i, m) for i, m in statics if i != instance_id} | {(instance_id, member_id)}))
    return group._replace(state=int(G.PREPARING_REBALANCE), members=members, static_members=statics)


def remove_member(group: GroupMeta, member_id: int) -> GroupMeta:
    """Session timeout or LeaveGroup (``removeMemberAndUpdateGroup``)."""
    if member_id not in group.members:
        return group
    members = tuple(m for m in group.members if m != member_id)
    statics = tuple((i, m) for i, m in group.static_members if m != member_id)
    state = group.state
    if state in (G.STABLE, G.COMPLETING_REBALANCE):
        state = int(G.PREPARING_REBALANCE)
    return group._replace(state=state, members=members, static_members=statics)


def complete_join(group: GroupMeta) -> GroupMeta:
    """``onCompleteJoin`` -> ``initNextGeneration``: generation + 1, CompletingRebalance (Empty if no member)."""
    state = G.COMPLETING_REBALANCE if group.members else G.EMPTY
    assignment = group.assignment if group.members else (NO_MEMBER_ID,) * len(group.assignment)
    return group._replace(state=int(state), generation_id=group.generation_id + 1, assignment=assignment)


def range_assignment(members: tuple[int, ...], num_partitions: int) -> tuple[int, ...]:
    """A deterministic assignor: partition p goes to the (p mod n)-th member in member-id order."""
    if not members:
        return (NO_MEMBER_ID,) * num_partitions
    return tuple(members[p % len(members)] for p in range(num_partitions))


def complete_sync(group: GroupMeta) -> GroupMeta:
    """The leader's SyncGroup: the assignment is installed and the group is Stable."""
    if group.state != G.COMPLETING_REBALANCE:
        return group
    return group._replace(state=int(G.STABLE), assignment=range_assignment(group.members, len(group.assignment)))


def rebalance(group: GroupMeta) -> GroupMeta:
    """Join and sync completed in one step (every live member rejoined in time)."""
    return complete_sync(complete_join(group))
