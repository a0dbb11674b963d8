"""kafka.eos's group with per-partition producers (model/machines/eos_alpha.py, Streams ``exactly_once``):
one transactional id shared by every member's instance of the task's producer, created by the task's
owner, fencing by InitProducerId, and TxnOffsetCommit without group metadata."""

from __future__ import annotations

import subprocess
import sys

import pytest
from eoscheck.checker.compose.testing import compare_memo, reachable_steps
from eoscheck.model.errors import Errors
from eoscheck.model.group.member import is_current_owner
from eoscheck.model.machines.eos import EosMachine, machine
from eoscheck.model.machines.eos_alpha import closed
from eoscheck.model.machines.eos_group import between_transactions
from eoscheck.model.producer import transactional as tx
from eoscheck.model.producer.transactional import FENCING_ERRORS
from eoscheck.model.protocol import VARIANTS
from eoscheck.model.state import TXN_CLOSED, TXN_INIT, TXN_READY

ALPHA = {"producers": 2, "members": 2, "input_records": 1, "partitions": 1, "rebalances": 1, "transactions": 2,
         "txn_timeouts": 0, "max_epoch": 4}


def _alpha(variant: str = "kafka-3.0-3.5", metadata: bool = False, **bounds: int) -> EosMachine:
    from eoscheck.model.machines.eos_model import BOUNDS
    protocol = VARIANTS[variant].protocol.with_(deployment="per-partition", per_partition_group_metadata=metadata)
    return EosMachine(protocol, {**{k: b.default for k, b in BOUNDS.items()}, **ALPHA, **bounds})




def test_only_the_tasks_owner_starts_with_a_producer() -> None:
    m = _alpha()
    # the first of the two initial states: instance 0's member id sorts first (the other swaps them)
    s, swapped = m.init_states()
    assert [mem.owns for mem in m.view(swapped).member] == [False, True]
    v = m.view(s)
    assert [p.phase for p in v.producer] == [TXN_INIT, TXN_CLOSED]
    assert [mem.owns for mem in v.member] == [True, False]
    first = {step[:2] for step, _ in m.successors(s) if step[0] == "InitProducerId"}
    assert first == {("InitProducerId", 0)}


def test_per_thread_members_each_start_with_a_producer() -> None:
    m = machine("kafka-3.0-3.5", **ALPHA)
    s, _ = m.init_states()
    assert not m.alpha and [p.phase for p in m.view(s).producer] == [TXN_INIT, TXN_INIT]


def test_every_instance_sees_the_one_transactional_ids_metadata() -> None:
    m = _alpha()
    seen = 0
    for _, _, t in reachable_steps(m, 20_000):
        v = m.view(t)
        assert len(set(v.txn)) == 1 and len(set(v.txn_log)) == 1
        seen += 1
    assert seen > 1000


def test_the_new_owners_init_producer_id_fences_the_previous_owner() -> None:
    m = _alpha()
    fenced_by_init = fencing_errors = 0
    for s, step, t in reachable_steps(m, 60_000):
        before, after = m.view(s), m.view(t)
        if step[0] == "InitProducerId" and step[-1] == Errors.NONE:
            i = step[1]
            others = [p for j, p in enumerate(before.producer) if j != i and p.producer_id >= 0]
            # the other instance held the transactional id's producer id: the new epoch is above its epoch
            for p in others:
                assert after.producer[i].producer_id == p.producer_id and after.producer[i].epoch > p.epoch
                fenced_by_init += 1
        if step[0] in ("EndTxn", "AddPartitionsToTxn", "AddOffsetsToTxn") and step[-1] in FENCING_ERRORS:
            fencing_errors += 1
    assert fenced_by_init and fencing_errors


def test_on_assignment_creates_the_owners_producer_and_closes_the_others() -> None:
    m = _alpha(rebalances=2, rejoins=1, transactions=1)  # the removed member rejoins and learns it lost the task
    outcomes = set()
    for s, step, t in reachable_steps(m, 150_000):
        if step[0] == "OnAssignment":
            i = step[1]
            p = m.view(t).producer[i]
            owns = m.view(t).member[i].owns
            assert p.phase == (TXN_INIT if owns else TXN_CLOSED) and p.producer_id == -1
            assert between_transactions(m.view(s).producer[i])
            outcomes.add(owns)
    assert outcomes == {True, False}


def test_closing_keeps_the_ghosts_and_leaves_the_connection() -> None:
    p = tx.new_producer(1)._replace(phase=TXN_READY, producer_id=3, epoch=1, committed=1, txn=1, position=1)
    c = closed(p)
    assert c.phase == TXN_CLOSED and c.producer_id == -1 and c.committed == 1 and c.txn == 1
    assert c.parts[0].connection == p.parts[0].connection + 1 and between_transactions(c)


def _zombie_commit_errors(m: EosMachine) -> set[int]:
    errors = set()
    for s, step, _ in reachable_steps(m, 100_000):
        if step[0] == "TxnOffsetCommit":
            v = m.view(s)
            if not is_current_owner(v.member[step[1]], v.group):
                errors.add(step[-1])
    return errors


def test_streams_eos_alpha_sends_no_group_metadata_so_kip447_does_not_fence_its_offset_commit() -> None:
    # StreamsProducer downgrades the group metadata for EOS v1: the KIP-447 check has nothing to check
    assert Errors.NONE in _zombie_commit_errors(_alpha(transactions=1))
    with_metadata = _zombie_commit_errors(_alpha(metadata=True, transactions=1))
    assert Errors.NONE not in with_metadata and with_metadata & {Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION}


def test_memoised_and_unmemoised_agree_with_per_partition_producers() -> None:
    compare_memo(lambda memoize: EosMachine(
        VARIANTS["kafka-2.4"].protocol, {**_alpha("kafka-2.4").bounds, "rejoins": 1}, memoize=memoize), 3000)


@pytest.mark.parametrize(("args", "needle"), [
    (["--variant", "kafka-2.4", "--bound", "members=2", "--bound", "producers=1", "--bound", "input_records=1"],
     "deployment=per-partition gives each member its own instance of the task's producer"),
    (["--variant", "kafka-2.4", "--set", "per_partition_group_metadata=true", "--bound", "members=1",
      "--bound", "producers=1", "--bound", "input_records=1"],
     "per_partition_group_metadata needs client_version=kip360"),
])
def test_a_per_partition_group_the_machine_cannot_model_is_refused(args: list[str], needle: str) -> None:
    done = subprocess.run([sys.executable, "-m", "eoscheck.checker.cli", "check", "--model", "kafka.eos", *args,
                           "--no-progress"], capture_output=True, text=True, check=False, timeout=120)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and needle in lines[0] and "Traceback" not in done.stderr
