"""LeaveGroup on a classic group: which of the leaving members are removed, and the error each gets.

A removed member's generation is no longer the group's member, so its next TxnOffsetCommit is refused
(UNKNOWN_MEMBER_ID); a LeaveGroup that names a static member's instance id with another member id is refused
(FENCED_INSTANCE_ID) and removes nothing, so the static member keeps committing. Two rules, chosen by ``rule``
(``Protocol.leave_group``):

* ``"2.4"`` (KAFKA-8221 74c90f46c34, first tag 2.4.0: the batch LeaveGroup v3 with each member's group.instance.id;
  2.4.0 .. 2.8.2 ``GroupCoordinator.handleLeaveGroup``): a non-empty member id whose instance id is a static member
  mapped to another member id -> FENCED_INSTANCE_ID; a member id not in the group with an instance id no static member
  has -> UNKNOWN_MEMBER_ID; otherwise the static member of the instance id (when there is one), else the member id,
  is removed. Before 2.4.0 a LeaveGroup names one member id and no instance id (2.3.0: UNKNOWN_MEMBER_ID unless it
  is a member), which this rule answers alike.
* ``"3.0"`` (MINOR PR 9958 5dae3648abd, first tag 3.0.0: ``validateCurrentMember``; the same in 4.0.0 .. 4.2.0-rc1
  ``GroupMetadataManager.classicGroupLeaveToClassicGroup`` / ``ClassicGroup.validateMember``): an empty member id
  removes the static member of its instance id (UNKNOWN_MEMBER_ID if there is none); otherwise an instance id must be
  a static member (UNKNOWN_MEMBER_ID) mapped to this member id (FENCED_INSTANCE_ID), and the member id a member
  (UNKNOWN_MEMBER_ID), before it is removed.

A Dead group answers COORDINATOR_NOT_AVAILABLE for the whole request. Pending members (a JoinGroup's member id before
its second JoinGroup, KIP-394, KAFKA-7824, 2.2.0) are not in the model's group, so the pending-member branch of both
rules is not here.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from ..errors import Errors
from .membership import complete_join, remove_member
from .metadata import NO_INSTANCE_ID, NO_MEMBER_ID, GroupMeta, GroupState, static_member_id

LeaveGroupRule = Literal["2.4", "3.0"]
LEAVE_GROUP_RULES: tuple[LeaveGroupRule, ...] = ("2.4", "3.0")


class LeavingMember(NamedTuple):
    """A LeaveGroup request's ``MemberIdentity``: NO_MEMBER_ID for an empty member id, NO_INSTANCE_ID for null."""

    member_id: int
    instance_id: int = NO_INSTANCE_ID


class LeaveGroupResult(NamedTuple):
    #: the request's top-level error
    error: int
    #: each leaving member's error, in request order (empty with a top-level error)
    member_errors: tuple[int, ...]
    group: GroupMeta


def _member_error(group: GroupMeta, leaving: LeavingMember, rule: LeaveGroupRule) -> tuple[int, int]:
    """(error, the member id to remove or NO_MEMBER_ID) for one leaving member."""
    static = static_member_id(group, leaving.instance_id) if leaving.instance_id != NO_INSTANCE_ID else NO_MEMBER_ID
    if rule == "2.4":
        if leaving.member_id != NO_MEMBER_ID and static != NO_MEMBER_ID and static != leaving.member_id:
            return int(Errors.FENCED_INSTANCE_ID), NO_MEMBER_ID
        if leaving.member_id not in group.members and static == NO_MEMBER_ID:
            return int(Errors.UNKNOWN_MEMBER_ID), NO_MEMBER_ID
        return int(Errors.NONE), static if static != NO_MEMBER_ID else leaving.member_id
    if leaving.member_id == NO_MEMBER_ID:
        return (int(Errors.NONE), static) if static != NO_MEMBER_ID else (int(Errors.UNKNOWN_MEMBER_ID), NO_MEMBER_ID)
    if leaving.instance_id != NO_INSTANCE_ID:
        if static == NO_MEMBER_ID:
            return int(Errors.UNKNOWN_MEMBER_ID), NO_MEMBER_ID
        if static != leaving.member_id:
            return int(Errors.FENCED_INSTANCE_ID), NO_MEMBER_ID
    if leaving.member_id not in group.members:
        return int(Errors.UNKNOWN_MEMBER_ID), NO_MEMBER_ID
    return int(Errors.NONE), leaving.member_id


def _remove(group: GroupMeta, member_id: int) -> GroupMeta:
    """``removeMemberAndUpdateGroup``: a Stable or CompletingRebalance group prepares a rebalance; once no member is
    left, every member has joined, so the join completes at once (``hasAllMembersJoined``, ``onCompleteJoin``): Empty at
    the next generation (1eb7644 GroupCoordinator; 4.2.0-rc1 ``removeMemberAndUpdateClassicGroup`` /
    ``maybeCompleteJoinPhase`` alike). With members left the model does not know which rejoined, and waits."""
    group = remove_member(group, member_id)
    if not group.members and group.state == GroupState.PREPARING_REBALANCE:
        group = complete_join(group)
    return group


def leave_group(group: GroupMeta, leaving: tuple[LeavingMember, ...], *, rule: LeaveGroupRule) -> LeaveGroupResult:
    """The members leave one after the other (a later one sees the group the earlier ones left); a removed member
    leaves the group's members and static members (``_remove``)."""
    if rule not in LEAVE_GROUP_RULES:
        raise ValueError(f"unknown LeaveGroup rule {rule!r}; one of {LEAVE_GROUP_RULES}")
    if group.state == GroupState.DEAD:
        return LeaveGroupResult(int(Errors.COORDINATOR_NOT_AVAILABLE), (), group)
    errors: list[int] = []
    for member in leaving:
        error, removed = _member_error(group, member, rule)
        if removed != NO_MEMBER_ID:
            group = _remove(group, removed)
        errors.append(error)
    return LeaveGroupResult(int(Errors.NONE), tuple(errors), group)
