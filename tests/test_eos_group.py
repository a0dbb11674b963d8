"""kafka.eos's consumer group (model/machines/eos_group.py, model/group/member.py): the member's
decisions, the rules they drive, the bounds that switch them on, and bad configurations."""

from __future__ import annotations

import subprocess
import sys

import pytest
from eoscheck.checker.compose.testing import compare_memo, reachable_steps
from eoscheck.model.errors import Errors
from eoscheck.model.group.member import (
    Member,
    can_rebalance,
    commit_metadata,
    initial_group,
    is_current_owner,
    member_id_of,
    must_rejoin,
    on_assignment,
    rejoin,
    session_timeout,
)
from eoscheck.model.group.membership import rebalance
from eoscheck.model.group.metadata import NO_GENERATION, NO_MEMBER_ID, GroupState
from eoscheck.model.machines.eos import EosMachine, machine
from eoscheck.model.machines.eos_group import GROUP_ACTIONS
from eoscheck.model.protocol import VARIANTS

GROUP = {"producers": 2, "members": 2, "input_records": 1, "partitions": 1, "rebalances": 1, "transactions": 1,
         "max_epoch": 3}


def _grouped(variant: str = "kafka-3.0-3.5", **bounds: int) -> EosMachine:
    return machine(variant, **{**GROUP, **bounds})




# --- the member's room ------------------------------------------------------------------------------

def test_initial_group_gives_the_partition_to_the_first_member() -> None:
    group, members = initial_group(2)
    assert group.state == GroupState.STABLE and group.generation_id == 1
    assert [m.owns for m in members] == [True, False]
    assert all(is_current_owner(m, group) == m.owns for m in members)
    assert [m.member_id for m in members] == [member_id_of(0, 0, 2), member_id_of(1, 0, 2)]


def test_a_removed_member_keeps_its_view_until_it_learns() -> None:
    group, (first, second) = initial_group(2)
    removed = session_timeout(group, first)
    assert removed is not None and removed.state == GroupState.PREPARING_REBALANCE
    assert not is_current_owner(first, removed) and must_rejoin(first, removed)
    assert session_timeout(removed, first) is None  # already gone
    # the zombie still sends its old generation and member id
    assert commit_metadata(first) == (1, first.member_id)
    assert can_rebalance(removed, (first, second), (False, True))  # the zombie is not waited for
    assert not can_rebalance(removed, (first, second), (True, False))
    moved = rebalance(removed)
    learned = on_assignment(second, moved)
    assert learned is not None and learned.owns and learned.generation == 2 and is_current_owner(learned, moved)
    assert on_assignment(learned, moved) is None  # nothing new
    assert on_assignment(first, moved) is None  # not a member: it must rejoin


def test_rejoin_takes_a_new_member_id_and_owns_nothing_yet() -> None:
    group, (first, _) = initial_group(2)
    joined, after = rejoin(first, group, 0, 2)
    assert joined == Member(member_id_of(0, 1, 2), NO_GENERATION, False, 1)
    assert first.member_id not in after.members and joined.member_id in after.members
    assert after.state == GroupState.PREPARING_REBALANCE
    assert commit_metadata(Member(NO_MEMBER_ID, NO_GENERATION, False, 0)) == (NO_GENERATION, NO_MEMBER_ID)


# --- the rules --------------------------------------------------------------------------------------

def test_zero_bounds_remove_the_group_rules() -> None:
    plain = machine("kafka-3.0-3.5", input_records=1)
    assert not GROUP_ACTIONS & set(plain.actions)
    assert not any(k.startswith(("member", "zombie_offsets", "group.generation")) for k in
                   plain.fields(next(iter(plain.init_states()))))
    no_moves = _grouped(rebalances=0)
    assert not {"SessionTimeout", "Rebalance", "OnAssignment", "Rejoin"} & set(no_moves.actions)
    assert "Rejoin" in _grouped(rejoins=1).actions and "Rejoin" not in _grouped().actions


def test_kip447_fences_the_zombies_offset_commit_and_pre_kip447_does_not() -> None:
    def zombie_commits(m: EosMachine) -> set[int]:
        errors = set()
        for s, step, _ in reachable_steps(m):
            if step[0] == "TxnOffsetCommit":
                t = step[1]
                v = m.view(s)
                if not is_current_owner(v.member[t], v.group):
                    errors.add(step[-1])
        return errors

    fenced = zombie_commits(_grouped("kafka-3.0-3.5"))
    assert Errors.UNKNOWN_MEMBER_ID in fenced and Errors.NONE not in fenced
    assert Errors.NONE in zombie_commits(_pre_kip447())


def _pre_kip447() -> EosMachine:
    return EosMachine(VARIANTS["kafka-2.4"].protocol.with_(deployment="per-thread"), _bounds())


def _bounds(**changes: int) -> dict[str, int]:
    from eoscheck.model.machines.eos_model import BOUNDS
    return {**{k: b.default for k, b in BOUNDS.items()}, **GROUP, **changes}


def test_only_the_owner_begins_transactions_and_fetches() -> None:
    m = _grouped()
    for s, step, _ in reachable_steps(m):
        if step[0] in ("BeginTransaction", "OffsetFetch"):
            assert m.view(s).member[step[1]].owns


def test_a_rebalance_waits_for_open_transactions_of_members() -> None:
    m = _grouped()
    from eoscheck.model.machines.eos_group import between_transactions
    seen = 0
    for s, step, _ in reachable_steps(m):
        if step[0] == "Rebalance":
            v = m.view(s)
            assert all(between_transactions(p) for mem, p in zip(v.member, v.producer)
                       if mem.member_id in v.group.members)
            seen += 1
    assert seen


def test_states_past_the_last_generation_are_not_explored() -> None:
    m = _grouped()
    assert all(m.view(t).group.generation_id <= 2 for _, _, t in reachable_steps(m))


def test_memoised_and_unmemoised_agree_with_a_group() -> None:
    compare_memo(lambda memoize: EosMachine(VARIANTS["kafka-3.0-3.5"].protocol, _bounds(rejoins=1),
                                            memoize=memoize), 3000)


# --- bad configurations: one line each --------------------------------------------------------------

@pytest.mark.parametrize(("bounds", "variant", "needle"), [
    ({"members": 2, "producers": 1, "input_records": 1}, "kafka-2.4",
     "deployment=per-partition gives each member its own instance of the task's producer"),
    ({"members": 2, "input_records": 1}, "kafka-3.0-3.5", "producers must equal members"),
    ({"members": 1, "producers": 1}, "kafka-3.0-3.5", "needs input_records"),
    ({"members": 1, "producers": 1, "input_records": 1, "restarts": 1}, "kafka-3.0-3.5", "restarts needs members=0"),
])
def test_a_group_the_machine_cannot_model_is_refused(bounds: dict[str, int], variant: str, needle: str) -> None:
    args = [sys.executable, "-m", "eoscheck.checker.cli", "check", "--model", "kafka.eos", "--variant", variant,
            "--no-progress"]
    for k, v in bounds.items():
        args += ["--bound", f"{k}={v}"]
    done = subprocess.run(args, capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in done.stderr
