"""TxnOffsetCommit validation on the classic group coordinator (KIP-447 zombie fencing).

Four Kafka version ranges, chosen by ``check`` (a switch of the model):

* ``"pre-kip447"`` (before 2.5; TxnOffsetCommit v0-2 carries no group metadata): only a Dead group is
  refused (COORDINATOR_NOT_AVAILABLE). A zombie whose partitions moved still commits offsets.
* ``"2.5"`` (2.5.0 - 2.8.x: ``doTxnCommitOffsets`` as KAFKA-9365 ``ed7c071e07f``, 2.5.0, wrote it): Dead -> COORDINATOR_NOT_AVAILABLE; a
  static member whose instance id maps to another member id -> FENCED_INSTANCE_ID; a non-empty
  unknown member id -> UNKNOWN_MEMBER_ID; a generation >= 0 that is not the group's ->
  ILLEGAL_GENERATION (a generation >= 0 with an empty member id is only generation-checked).
* ``"3.0"`` (3.0.0 - 3.2.x: ``GroupCoordinator.validateOffsetCommit`` as ``5dae3648abd`` wrote it): as
  ``"current"`` without its Empty-group shortcut, so a generation < 0 with a member id or an instance id
  on an Empty group is checked as a member (UNKNOWN_MEMBER_ID) instead of accepted.
* ``"current"`` (``GroupCoordinator.validateOffsetCommit`` with isTransactional, 3.3.0+; the shortcut is
  KAFKA-14201 ``706adc39f6a``, in 3.3.0 and 3.4.0): Dead -> COORDINATOR_NOT_AVAILABLE; generation < 0 on
  an Empty group -> accepted; if generation >= 0,
  or a member id, or an instance id is given: the instance id must be a known static member
  (UNKNOWN_MEMBER_ID) mapped to this member id (FENCED_INSTANCE_ID), the member id must be in the
  group (UNKNOWN_MEMBER_ID) and the generation must be the group's (ILLEGAL_GENERATION); otherwise
  (the legacy v0-2 request on a non-empty group) accepted.

TxnOffsetCommit is never refused with REBALANCE_IN_PROGRESS (a plain OffsetCommit in
CompletingRebalance is). The decision is written over ``ops`` with the group lookups as booleans.
"""

from __future__ import annotations

from eoscheck.checker.ops import CONCRETE, Ops
from eoscheck.model.transactions.codes import Errors

from .metadata import NO_INSTANCE_ID, NO_MEMBER_ID, GroupMeta, GroupState, has_member, static_member_id

CHECKS = ("pre-kip447", "2.5", "3.0", "current")


def txn_offset_commit_error(ops: Ops, *, check: str, group_dead, group_empty, group_generation, req_generation,
                            req_member_empty, req_instance_defined, instance_known, instance_member_matches,
                            member_known):
    """The validation error (NONE: accept). ``check`` is a switch (one of ``CHECKS``), not a term.

    ``instance_known``: a static member is registered for the request's instance id;
    ``instance_member_matches``: that static member's member id is the request's member id;
    ``member_known``: the request's member id is a member of the group.
    """
    E = Errors
    c = lambda v: ops.const(int(v), 16)
    zero = ops.const(0, 32)
    if check == "pre-kip447":
        return ops.ite(group_dead, c(E.COORDINATOR_NOT_AVAILABLE), c(E.NONE))
    if check == "2.5":
        return ops.ite(group_dead, c(E.COORDINATOR_NOT_AVAILABLE),
               ops.ite(ops.and_(req_instance_defined, instance_known, ops.not_(instance_member_matches)),
                       c(E.FENCED_INSTANCE_ID),
               ops.ite(ops.and_(ops.not_(req_member_empty), ops.not_(member_known)), c(E.UNKNOWN_MEMBER_ID),
               ops.ite(ops.and_(ops.ge(req_generation, zero), ops.ne(req_generation, group_generation)),
                       c(E.ILLEGAL_GENERATION),
                       c(E.NONE)))))
    if check not in ("3.0", "current"):
        raise ValueError(f"unknown TxnOffsetCommit check {check!r}; one of {CHECKS}")
    member_checks = ops.ite(ops.and_(req_instance_defined, ops.not_(instance_known)), c(E.UNKNOWN_MEMBER_ID),
                    ops.ite(ops.and_(req_instance_defined, ops.not_(instance_member_matches)), c(E.FENCED_INSTANCE_ID),
                    ops.ite(ops.not_(member_known), c(E.UNKNOWN_MEMBER_ID),
                    ops.ite(ops.ne(req_generation, group_generation), c(E.ILLEGAL_GENERATION),
                            c(E.NONE)))))
    identified = ops.or_(ops.ge(req_generation, zero), ops.not_(req_member_empty), req_instance_defined)
    if check == "3.0":
        return ops.ite(group_dead, c(E.COORDINATOR_NOT_AVAILABLE), ops.ite(identified, member_checks, c(E.NONE)))
    return ops.ite(group_dead, c(E.COORDINATOR_NOT_AVAILABLE),
           ops.ite(ops.and_(ops.lt(req_generation, zero), group_empty), c(E.NONE),
           ops.ite(identified, member_checks,
                   c(E.NONE))))


def validate_txn_offset_commit(group: GroupMeta, *, check: str, generation_id: int, member_id: int,
                               instance_id: int = NO_INSTANCE_ID) -> int:
    """The error for a TxnOffsetCommit carrying this group metadata (``ConsumerGroupMetadata``)."""
    inst_defined = instance_id != NO_INSTANCE_ID
    inst_member = static_member_id(group, instance_id) if inst_defined else NO_MEMBER_ID
    return int(txn_offset_commit_error(
        CONCRETE, check=check, group_dead=group.state == GroupState.DEAD, group_empty=group.state == GroupState.EMPTY,
        group_generation=group.generation_id, req_generation=generation_id,
        req_member_empty=member_id == NO_MEMBER_ID, req_instance_defined=inst_defined,
        instance_known=inst_member != NO_MEMBER_ID, instance_member_matches=inst_member == member_id,
        member_known=has_member(group, member_id)))


def unknown_group_error(*, new_coordinator: bool, generation_id: int) -> int | None:
    """TxnOffsetCommit for a group the coordinator does not know. The classic coordinator creates
    an Empty group and validates against it (None: go on); the new one (KIP-848,
    ``OffsetMetadataManager.validateTransactionalOffsetCommit``) creates it only for a generation
    < 0 and answers ILLEGAL_GENERATION otherwise."""
    if new_coordinator and generation_id >= 0:
        return int(Errors.ILLEGAL_GENERATION)
    return None


def consumer_group_error(member_epochs: dict[int, int], member_id: int, generation_id: int) -> int:
    """``ConsumerGroup.validateOffsetCommit`` for TxnOffsetCommit (KIP-848 group): no member epoch and
    no members -> accepted; an unknown member -> UNKNOWN_MEMBER_ID; another epoch -> ILLEGAL_GENERATION
    (STALE_MEMBER_EPOCH is converted: TxnOffsetCommit has no such error). The instance id is not checked."""
    if generation_id < 0 and not member_epochs:
        return int(Errors.NONE)
    if member_id not in member_epochs:
        return int(Errors.UNKNOWN_MEMBER_ID)
    if member_epochs[member_id] != generation_id:
        return int(Errors.ILLEGAL_GENERATION)
    return int(Errors.NONE)


#: codes ``maybeConvertOffsetCommitError`` maps that ``Errors`` does not list (no rule produces them)
_NETWORK_EXCEPTION, _INVALID_FETCH_SIZE, _INVALID_COMMIT_OFFSET_SIZE = 13, 4, 28


def offset_commit_error_answer(error: int) -> int:
    """What a TxnOffsetCommit answers when its ``__consumer_offsets`` append fails, or when the
    KIP-890 verification that precedes the append does (``GroupMetadataManager.
    maybeConvertOffsetCommitError``): the client must see a coordinator error it retries (or
    re-discovers the coordinator on), not a partition-level storage error; the verification's own
    answers (INVALID_PRODUCER_ID_MAPPING, INVALID_TXN_STATE, ...) pass through. The pending offsets
    are dropped (``failPendingTxnOffsetCommit``), so the caller leaves the group unchanged."""
    if error == _NETWORK_EXCEPTION:
        # verification timed out talking to the transaction coordinator: retried without a lookup
        return int(Errors.COORDINATOR_LOAD_IN_PROGRESS)
    if error in (Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.NOT_ENOUGH_REPLICAS, Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND):
        return int(Errors.COORDINATOR_NOT_AVAILABLE)
    if error in (Errors.NOT_LEADER_OR_FOLLOWER, Errors.KAFKA_STORAGE_ERROR):
        return int(Errors.NOT_COORDINATOR)
    if error in (Errors.MESSAGE_TOO_LARGE, Errors.RECORD_LIST_TOO_LARGE, _INVALID_FETCH_SIZE):
        return _INVALID_COMMIT_OFFSET_SIZE
    return int(error)
