"""Conformance of the group coordinator with kafka-semantics.md §4 (OffsetFetch with require_stable)
and §5 (TxnOffsetCommit validation in three versions, pending transactional offsets by log order)."""

from __future__ import annotations

import pytest
from eoscheck.model.group.metadata import NO_INSTANCE_ID, NO_MEMBER_ID, CommittedOffset, GroupState, new_group
from eoscheck.model.group.offset_fetch import FetchReaction, offset_fetch, on_offset_fetch_answer, sends_require_stable
from eoscheck.model.group.pending_offsets import (
    complete_pending_txn_offset_commit,
    fail_pending_txn_offset_commit,
    on_txn_offset_commit_append,
    prepare_txn_offset_commit,
)
from eoscheck.model.group.txn_offset_commit import validate_txn_offset_commit
from eoscheck.model.transactions.codes import Errors

G = GroupState
M1, M2 = 1, 2
INST = 5


def group(state: G = G.STABLE, generation: int = 3, members: tuple[int, ...] = (M1, M2),
          statics: tuple[tuple[int, int], ...] = ()):
    return new_group(2)._replace(state=int(state), generation_id=generation, members=members, static_members=statics)


def toc(g, check: str = "current", gen: int = 3, member: int = M1, inst: int = NO_INSTANCE_ID) -> int:
    return validate_txn_offset_commit(g, check=check, generation_id=gen, member_id=member, instance_id=inst)


# --- §5.1 current (3.0+) ---------------------------------------------------------------------------------

def test_dead_group_coordinator_not_available() -> None:
    for check in ("pre-kip447", "2.5", "current"):
        assert toc(group(G.DEAD), check) == Errors.COORDINATOR_NOT_AVAILABLE


def test_negative_generation_on_empty_group_accepted() -> None:
    assert toc(group(G.EMPTY, members=()), gen=-1, member=NO_MEMBER_ID) == Errors.NONE
    assert toc(group(G.EMPTY, members=()), gen=-1, member=99) == Errors.NONE  # Empty: accepted before member checks


def test_current_member_and_generation_accepted() -> None:
    assert toc(group()) == Errors.NONE


def test_unknown_instance_id() -> None:
    assert toc(group(), inst=INST) == Errors.UNKNOWN_MEMBER_ID


def test_instance_mapped_to_other_member_fenced() -> None:
    assert toc(group(statics=((INST, M2),)), inst=INST, member=M1) == Errors.FENCED_INSTANCE_ID


def test_unknown_member() -> None:
    assert toc(group(), member=77) == Errors.UNKNOWN_MEMBER_ID


@pytest.mark.parametrize("gen", [2, 4])
def test_generation_mismatch(gen: int) -> None:
    assert toc(group(), gen=gen) == Errors.ILLEGAL_GENERATION


def test_unknown_member_before_generation() -> None:
    assert toc(group(), member=77, gen=1) == Errors.UNKNOWN_MEMBER_ID


def test_generation_with_empty_member_id_is_unknown_member() -> None:
    # gen >= 0 forces validateCurrentMember: memberId "" is not in the group
    assert toc(group(), gen=3, member=NO_MEMBER_ID) == Errors.UNKNOWN_MEMBER_ID


def test_legacy_request_on_non_empty_group_accepted() -> None:
    assert toc(group(), gen=-1, member=NO_MEMBER_ID) == Errors.NONE


def test_member_id_without_generation_is_checked() -> None:
    # memberId != "" forces validateCurrentMember; gen -1 != group generation -> ILLEGAL_GENERATION
    assert toc(group(), gen=-1, member=M1) == Errors.ILLEGAL_GENERATION


@pytest.mark.parametrize("state", [G.COMPLETING_REBALANCE, G.PREPARING_REBALANCE])
def test_no_rebalance_in_progress_for_txn_offset_commit(state: G) -> None:
    assert toc(group(state)) == Errors.NONE


# --- §5.1 2.5-2.8 --------------------------------------------------------------------------------------------

def test_25_generation_with_empty_member_only_generation_checked() -> None:
    assert toc(group(), "2.5", gen=3, member=NO_MEMBER_ID) == Errors.NONE
    assert toc(group(), "2.5", gen=2, member=NO_MEMBER_ID) == Errors.ILLEGAL_GENERATION


def test_25_unknown_member_and_generation() -> None:
    assert toc(group(), "2.5", member=77) == Errors.UNKNOWN_MEMBER_ID
    assert toc(group(), "2.5", gen=2) == Errors.ILLEGAL_GENERATION
    assert toc(group(), "2.5", gen=-1, member=M1) == Errors.NONE


def test_25_static_member_fenced_first() -> None:
    assert toc(group(statics=((INST, M2),)), "2.5", inst=INST, member=77, gen=1) == Errors.FENCED_INSTANCE_ID


# --- §5.1 before 2.5 -------------------------------------------------------------------------------------------

def test_pre_kip447_zombie_commits() -> None:
    assert toc(group(), "pre-kip447", gen=1, member=77) == Errors.NONE


# --- §5.1 pending transactional offsets ---------------------------------------------------------------------

def test_commit_marker_materialises_by_log_order() -> None:
    g = group()
    g = prepare_txn_offset_commit(g, 10, ((0, 5),))
    g = on_txn_offset_commit_append(g, 10, 0, 5, 100)
    g = prepare_txn_offset_commit(g, 20, ((0, 9),))
    g = on_txn_offset_commit_append(g, 20, 0, 9, 101)
    # producer 20 (written later in the log) commits first, then producer 10's commit must not win
    g = complete_pending_txn_offset_commit(g, 20, True)
    assert g.offsets[0] == CommittedOffset(9, 101)
    g = complete_pending_txn_offset_commit(g, 10, True)
    assert g.offsets[0] == CommittedOffset(9, 101)
    assert g.pending == ()


def test_commit_replaces_older_offset() -> None:
    g = group()._replace(offsets=(CommittedOffset(3, 50), CommittedOffset(-1, -1)))
    g = on_txn_offset_commit_append(prepare_txn_offset_commit(g, 10, ((0, 5),)), 10, 0, 5, 60)
    assert complete_pending_txn_offset_commit(g, 10, True).offsets[0] == CommittedOffset(5, 60)


def test_abort_marker_drops_pending() -> None:
    g = on_txn_offset_commit_append(prepare_txn_offset_commit(group(), 10, ((0, 5),)), 10, 0, 5, 60)
    g = complete_pending_txn_offset_commit(g, 10, False)
    assert g.offsets[0].offset == -1 and g.pending == ()


def test_marker_for_producer_without_pending_is_noop() -> None:
    g = on_txn_offset_commit_append(prepare_txn_offset_commit(group(), 10, ((0, 5),)), 10, 0, 5, 60)
    assert complete_pending_txn_offset_commit(g, 99, True) == g


def test_failed_append_removes_pending() -> None:
    g = prepare_txn_offset_commit(group(), 10, ((0, 5),))
    g = fail_pending_txn_offset_commit(g, 10, 0)
    assert g.pending == ()


# --- §4 OffsetFetch with require_stable --------------------------------------------------------------------

def _pending_group():
    g = group()._replace(offsets=(CommittedOffset(3, 50), CommittedOffset(-1, -1)))
    return on_txn_offset_commit_append(prepare_txn_offset_commit(g, 10, ((0, 5),)), 10, 0, 5, 60)


def test_require_stable_with_pending_is_unstable_88() -> None:
    ans = offset_fetch(_pending_group(), 0, require_stable=True)
    assert (ans.error, ans.offset) == (88, -1)


def test_without_require_stable_pending_is_invisible() -> None:
    ans = offset_fetch(_pending_group(), 0, require_stable=False)
    assert (ans.error, ans.offset) == (Errors.NONE, 3)


def test_other_partition_not_affected_by_pending() -> None:
    ans = offset_fetch(_pending_group(), 1, require_stable=True)
    assert (ans.error, ans.offset) == (Errors.NONE, -1)


@pytest.mark.parametrize("g", [None, group(G.DEAD)])
def test_unknown_or_dead_group_minus_one_none(g) -> None:
    ans = offset_fetch(g, 0, require_stable=True)
    assert (ans.error, ans.offset) == (Errors.NONE, -1)


def test_consumer_retries_on_unstable() -> None:
    reaction, _ = on_offset_fetch_answer(offset_fetch(_pending_group(), 0, require_stable=True))
    assert reaction == FetchReaction.RETRY


def test_shipped_consumer_always_sets_require_stable() -> None:
    assert sends_require_stable("always", read_committed=False)
    assert not sends_require_stable("never", read_committed=True)
