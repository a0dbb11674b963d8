"""§5.1: the TxnOffsetCommit decision in each Kafka version (pre-KIP-447, 2.5-2.8, current)."""

import pytest
from eoscheck.model.group.membership import join_group, rebalance, remove_member
from eoscheck.model.group.metadata import NO_INSTANCE_ID, NO_MEMBER_ID, GroupState, new_group
from eoscheck.model.group.txn_offset_commit import validate_txn_offset_commit
from eoscheck.model.transactions.codes import Errors

E = Errors


@pytest.fixture
def stable():
    """Generation 1, members 1 and 2, member 2 static with instance id 7."""
    g = join_group(join_group(new_group(2), 1), 2, instance_id=7)
    g = rebalance(g)
    assert (g.state, g.generation_id) == (GroupState.STABLE, 1)
    return g


# (generation, member, instance) -> expected error per version
CASES = [
    # current member, current generation
    ((1, 1, NO_INSTANCE_ID), {"pre-kip447": E.NONE, "2.5": E.NONE, "current": E.NONE}),
    # zombie: stale generation, still a member id it had
    ((0, 1, NO_INSTANCE_ID), {"pre-kip447": E.NONE, "2.5": E.ILLEGAL_GENERATION, "current": E.ILLEGAL_GENERATION}),
    # zombie removed by session timeout: unknown member id
    ((1, 3, NO_INSTANCE_ID), {"pre-kip447": E.NONE, "2.5": E.UNKNOWN_MEMBER_ID, "current": E.UNKNOWN_MEMBER_ID}),
    # generation >= 0 with empty member id: 2.5 checked only the generation
    ((1, NO_MEMBER_ID, NO_INSTANCE_ID), {"pre-kip447": E.NONE, "2.5": E.NONE, "current": E.UNKNOWN_MEMBER_ID}),
    ((0, NO_MEMBER_ID, NO_INSTANCE_ID),
     {"pre-kip447": E.NONE, "2.5": E.ILLEGAL_GENERATION, "current": E.UNKNOWN_MEMBER_ID}),
    # legacy request (no group metadata) on a non-empty group: accepted everywhere
    ((-1, NO_MEMBER_ID, NO_INSTANCE_ID), {"pre-kip447": E.NONE, "2.5": E.NONE, "current": E.NONE}),
    # static member: right instance, right member
    ((1, 2, 7), {"pre-kip447": E.NONE, "2.5": E.NONE, "current": E.NONE}),
    # static instance now mapped to another member id: fenced
    ((1, 1, 7), {"pre-kip447": E.NONE, "2.5": E.FENCED_INSTANCE_ID, "current": E.FENCED_INSTANCE_ID}),
    # unknown instance id: current -> UNKNOWN_MEMBER_ID; 2.5 ignores it (member 1 is known)
    ((1, 1, 8), {"pre-kip447": E.NONE, "2.5": E.NONE, "current": E.UNKNOWN_MEMBER_ID}),
    # instance checked before member and generation
    ((0, 3, 7), {"pre-kip447": E.NONE, "2.5": E.FENCED_INSTANCE_ID, "current": E.FENCED_INSTANCE_ID}),
    # member checked before generation
    ((0, 3, NO_INSTANCE_ID), {"pre-kip447": E.NONE, "2.5": E.UNKNOWN_MEMBER_ID, "current": E.UNKNOWN_MEMBER_ID}),
]


@pytest.mark.parametrize("check", ["pre-kip447", "2.5", "current"])
@pytest.mark.parametrize("req,expected", CASES)
def test_decision(stable, check, req, expected):
    gen, member, inst = req
    assert validate_txn_offset_commit(stable, check=check, generation_id=gen, member_id=member,
                                      instance_id=inst) == expected[check]


@pytest.mark.parametrize("check", ["pre-kip447", "2.5", "current"])
def test_dead_group_is_coordinator_not_available(stable, check):
    dead = stable._replace(state=int(GroupState.DEAD))
    assert validate_txn_offset_commit(dead, check=check, generation_id=1, member_id=1) == E.COORDINATOR_NOT_AVAILABLE


def test_empty_group_accepts_a_request_without_generation_but_checks_one_with():
    g = new_group(1)
    assert validate_txn_offset_commit(g, check="current", generation_id=-1, member_id=NO_MEMBER_ID) == E.NONE
    # generation < 0 on an Empty group is accepted before any member lookup
    assert validate_txn_offset_commit(g, check="current", generation_id=-1, member_id=4) == E.NONE
    # a generation on an Empty group is checked: the member is unknown
    assert validate_txn_offset_commit(g, check="current", generation_id=0, member_id=4) == E.UNKNOWN_MEMBER_ID


def test_never_rebalance_in_progress(stable):
    preparing = join_group(stable, 3)
    assert preparing.state == GroupState.PREPARING_REBALANCE
    assert validate_txn_offset_commit(preparing, check="current", generation_id=1, member_id=1) == E.NONE


def test_zombie_story_after_session_timeout(stable):
    """KIP-447's edge case: A paused past its session timeout, the group rebalanced, A commits."""
    after = rebalance(remove_member(stable, 1))
    assert after.generation_id == 2
    assert validate_txn_offset_commit(after, check="pre-kip447", generation_id=1, member_id=1) == E.NONE
    assert validate_txn_offset_commit(after, check="current", generation_id=1, member_id=1) == E.UNKNOWN_MEMBER_ID
    assert validate_txn_offset_commit(after, check="current", generation_id=2, member_id=2,
                                      instance_id=7) == E.NONE
