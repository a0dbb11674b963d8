"""Group membership: join, session timeout, generations and the assignment that moves partitions."""

from eoscheck.model.group.membership import (
    complete_join,
    complete_sync,
    join_group,
    range_assignment,
    rebalance,
    remove_member,
)
from eoscheck.model.group.metadata import NO_MEMBER_ID, GroupState, new_group, partitions_of, static_member_id

G = GroupState


def test_join_prepares_rebalance_and_sync_assigns():
    g = join_group(new_group(2), 1)
    assert (g.state, g.members) == (G.PREPARING_REBALANCE, (1,))
    g = complete_join(g)
    assert (g.state, g.generation_id) == (G.COMPLETING_REBALANCE, 1)
    g = complete_sync(g)
    assert (g.state, g.assignment) == (G.STABLE, (1, 1))


def test_second_member_takes_a_partition_in_the_next_generation():
    g = rebalance(join_group(rebalance(join_group(new_group(2), 1)), 2))
    assert g.generation_id == 2 and partitions_of(g, 1) == (0,) and partitions_of(g, 2) == (1,)


def test_session_timeout_removes_member_and_moves_its_partitions():
    g = rebalance(join_group(join_group(new_group(2), 1), 2))
    g = remove_member(g, 1)
    assert (g.state, g.members) == (G.PREPARING_REBALANCE, (2,))
    g = rebalance(g)
    assert (g.generation_id, partitions_of(g, 2)) == (2, (0, 1))


def test_last_member_leaving_empties_the_group():
    g = rebalance(remove_member(rebalance(join_group(new_group(1), 1)), 1))
    assert (g.state, g.generation_id, g.assignment) == (G.EMPTY, 2, (NO_MEMBER_ID,))


def test_removing_unknown_member_changes_nothing():
    g = rebalance(join_group(new_group(1), 1))
    assert remove_member(g, 5) == g


def test_static_member_rejoining_with_new_member_id_replaces_mapping():
    g = join_group(join_group(new_group(1), 1, instance_id=7), 4, instance_id=7)
    assert static_member_id(g, 7) == 4


def test_assignment_deterministic():
    assert range_assignment((2, 5), 3) == (2, 5, 2)
    assert range_assignment((), 2) == (NO_MEMBER_ID, NO_MEMBER_ID)
