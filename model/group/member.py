"""A consumer group member as the exactly-once loop's application instance sees itself (classic
protocol, ``ConsumerCoordinator``): its member id, the generation and assignment of its last
SyncGroup, and how often it rejoined with a new member id.

The member's view is what a zombie keeps: a member removed by its session timeout does not know it,
keeps its generation and partitions, and sends them with its TxnOffsetCommit (KIP-447's
``ConsumerGroupMetadata``) until its next heartbeat or commit fails. A KIP-447 group coordinator
fences it there; before KIP-447 (TxnOffsetCommit v0-2 carries no group metadata) nothing does.

``deployment`` decides which producer serves an input partition: ``per-thread`` (KIP-447,
``exactly_once_v2``) one producer per member, kept across rebalances; ``per-partition`` (Streams
``exactly_once`` before 2.6) one producer per input partition with a static transactional id,
re-created by each new owner, whose InitProducerId fences the previous owner's.
"""

from __future__ import annotations

from typing import NamedTuple

from ..errors import Errors
from .membership import join_group, rebalance, remove_member
from .metadata import NO_GENERATION, NO_MEMBER_ID, GroupMeta, GroupState, new_group

#: the input partition of the exactly-once loop with membership (one, as in ``kafka.eos_pipeline``)
INPUT_PARTITION = 0
#: an int, for can_rebalance (run on memo misses: an IntEnum member costs ~100 ns to read and compare)
_PREPARING_REBALANCE = int(GroupState.PREPARING_REBALANCE)


class Member(NamedTuple):
    """One application instance's consumer: its own idea of its membership."""

    member_id: int
    #: the generation of its last assignment (what its TxnOffsetCommit carries)
    generation: int
    #: it believes it owns the input partition (its last assignment gave it)
    owns: bool
    #: times it rejoined with a new member id (a new member id each time)
    incarnation: int
    #: its tasks were lost (Streams' TaskMigratedException: a commit refused by the group coordinator):
    #: it owns nothing and must rejoin, whatever the group says meanwhile
    lost: bool = False


def member_id_of(instance: int, incarnation: int, members: int) -> int:
    """Member ids are positive (0 is Kafka's empty member id) and never reused by another instance."""
    return 1 + instance + members * incarnation


def initial_group(members: int) -> tuple[GroupMeta, tuple[Member, ...]]:
    """Every instance joined and the first rebalance completed (generation 1): the lowest member id
    owns the input partition."""
    group = new_group(1)
    for i in range(members):
        group = join_group(group, member_id_of(i, 0, members))
    group = rebalance(group)
    return group, tuple(Member(member_id_of(i, 0, members), group.generation_id,
                               group.assignment[INPUT_PARTITION] == member_id_of(i, 0, members), 0)
                        for i in range(members))


def is_current_owner(member: Member, group: GroupMeta) -> bool:
    """The group coordinator agrees with the member: still in the group, same generation, and the
    input partition is assigned to it."""
    return (member.member_id in group.members and member.generation == group.generation_id
            and group.assignment[INPUT_PARTITION] == member.member_id)


def can_rebalance(group: GroupMeta, members: tuple[Member, ...], between: tuple[bool, ...]) -> bool:
    """JoinGroup + SyncGroup complete once every member still in the group is between transactions
    (eager revocation commits or aborts first): ``between[i]`` for instance ``i``."""
    if group.state != _PREPARING_REBALANCE:
        return False
    live = group.members
    return all(ok for m, ok in zip(members, between) if m.member_id in live)


def session_timeout(group: GroupMeta, member: Member) -> GroupMeta | None:
    """The coordinator removes a member whose session expired (None: it is not in the group)."""
    if member.member_id not in group.members:
        return None
    return remove_member(group, member.member_id)


def on_assignment(member: Member, group: GroupMeta) -> Member | None:
    """``onJoinComplete``: a member of a Stable group whose generation is older learns its new
    assignment (None: nothing new to learn; a member that lost its tasks is leaving the group)."""
    if member.member_id not in group.members or group.state != GroupState.STABLE \
            or member.generation == group.generation_id or member.lost:
        return None
    return member._replace(generation=group.generation_id,
                           owns=group.assignment[INPUT_PARTITION] == member.member_id)


def must_rejoin(member: Member, group: GroupMeta) -> bool:
    """The member learns it is no longer in the group (UNKNOWN_MEMBER_ID on a heartbeat), or it lost its
    tasks (it unsubscribes and subscribes again)."""
    return member.member_id not in group.members or member.lost


#: TxnOffsetCommit errors that Streams turns into TaskMigratedException (a CommitFailedException from the
#: group coordinator's fencing; INVALID_TXN_STATE as ``kafka.eos_pipeline`` treats it)
TASK_MIGRATED = frozenset(int(e) for e in (Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID,
                                            Errors.FENCED_INSTANCE_ID, Errors.INVALID_TXN_STATE))


def lose_tasks(member: Member) -> Member:
    """``StreamThread.handleTaskMigrated``: the tasks are closed as lost (the open transaction is
    aborted) and the consumer unsubscribes and subscribes again, with a new member id."""
    return member._replace(owns=False, lost=True)


def rejoin(member: Member, group: GroupMeta, instance: int, members: int) -> tuple[Member, GroupMeta]:
    """The consumer resets its member id and joins again (its old id leaves the group if still there);
    it owns nothing until the next assignment. The new id sorts after every id of a lower incarnation
    and, at the same incarnation, by instance; ``kafka.eos`` uses ``rejoin_ranked`` instead."""
    incarnation = member.incarnation + 1
    new_id = member_id_of(instance, incarnation, members)
    group = join_group(remove_member(group, member.member_id), new_id)
    return Member(new_id, NO_GENERATION, False, incarnation), group


def rejoin_ranked(members: tuple[Member, ...], group: GroupMeta, instance: int,
                  rank: int) -> tuple[tuple[Member, ...], GroupMeta]:
    """``rejoin`` where member ids are ranks: the members' current ids are ``1..len(members)`` in the
    order the range assignor sorts them, and the new id's place among them is ``rank`` (1: lowest).

    Kafka's new member id is ``clientId + "-" + UUID`` (``GroupMetadata.generateMemberId``), so where it
    sorts among the other members' ids is arbitrary: every rank is a successor. The others keep their
    order (renumbered around the new id); an assignment that named the old id names nobody until the
    next rebalance (no rule reads the assignment of a member outside the group)."""
    old = members[instance].member_id

    def moved(b: int) -> int:
        c = b - (b > old)
        return c + (c >= rank)

    group = remove_member(group, old)
    group = group._replace(members=tuple(sorted(moved(b) for b in group.members)),
                           assignment=tuple(NO_MEMBER_ID if a in (old, NO_MEMBER_ID) else moved(a)
                                            for a in group.assignment))
    group = join_group(group, rank)
    joined = tuple(Member(rank, NO_GENERATION, False, m.incarnation + 1) if j == instance
                   else m._replace(member_id=moved(m.member_id)) for j, m in enumerate(members))
    return joined, group


def commit_metadata(member: Member) -> tuple[int, int]:
    """(generation, member id) a KIP-447 client sends with TxnOffsetCommit (``groupMetadata()``);
    a member that never joined sends none."""
    if member.member_id == NO_MEMBER_ID:
        return NO_GENERATION, NO_MEMBER_ID
    return member.generation, member.member_id


__all__ = ["INPUT_PARTITION", "TASK_MIGRATED", "Member", "can_rebalance", "commit_metadata", "initial_group",
           "is_current_owner", "lose_tasks", "member_id_of", "must_rejoin", "on_assignment", "rejoin",
           "rejoin_ranked", "session_timeout"]
