"""kafka.eos with KIP-890 part 1's verification and append as two steps (``verification_steps``,
``eos_verification``): the VerificationGuard a marker clears, the SENTINEL batch a timeout abort's marker
overtakes (KAFKA-19690's window), the muted connection, and the one-step rule kept at bound 0."""

from __future__ import annotations

import pytest
from eoscheck.checker.compose.testing import reachable_steps
from eoscheck.model.errors import Errors
from eoscheck.model.machines.eos import EosMachine, machine
from eoscheck.model.machines.eos_model import BOUNDS
from eoscheck.model.machines.eos_symmetry import rename_leader
from eoscheck.model.partition.producer_state import find_entry
from eoscheck.model.partition.txn_produce import (
    begin_verified_produce,
    finish_verified_produce,
    handle_txn_produce,
    write_marker,
)
from eoscheck.model.partition.verification import GUARDED, SENTINEL, STALE
from eoscheck.model.protocol import VARIANTS
from eoscheck.model.state import ProduceRequest, TxnPartitionState
from eoscheck.model.transactions.codes import TxnResult
from eoscheck.model.transactions.markers import TxnMarker

EMPTY = TxnPartitionState((), 0, ())
_ROOM = {"max_seq": 2**31 - 1, "cache_size": 5, "unknown_producer": "accept", "old_duplicate_error": False}


def _request(record: int, seq: int, epoch: int = 0, connection: int = 0) -> ProduceRequest:
    return ProduceRequest(client=0, connection=connection, record=record, producer_id=7, epoch=epoch, seq=seq,
                          created=0)


def _append(leader: TxnPartitionState, req: ProduceRequest, *, stale_epoch_first: bool = False,
            check_guard: bool = True) -> tuple[int, TxnPartitionState]:
    item = next(p for p in leader.pending if p.request == req)
    out = finish_verified_produce(leader, item, value=req.record, stale_epoch_first=stale_epoch_first,
                                  check_guard=check_guard, **_ROOM)
    return out.error, out.partition


def _abort(leader: TxnPartitionState, epoch: int) -> TxnPartitionState:
    error, after = write_marker(leader, TxnMarker(0, 7, epoch, int(TxnResult.ABORT), 0), timestamp=0,
                                check_coordinator_epoch=True)
    assert error == Errors.NONE
    return after


def test_a_marker_between_the_verification_and_the_append_makes_the_guard_stale() -> None:
    req = _request(0, 0)
    leader = begin_verified_produce(EMPTY, req, int(Errors.NONE), 0)
    assert [p.guard for p in leader.pending] == [GUARDED] and leader.verifications
    leader = _abort(leader, 0)  # the coordinator aborted the transaction after it verified the partition
    assert [p.guard for p in leader.pending] == [STALE] and not leader.verifications
    error, after = _append(leader, req)
    assert error == Errors.INVALID_TXN_STATE and after.log == leader.log and not after.pending
    # the counterfactual append that trusts the verification opens a transaction nobody will end
    error, after = _append(leader, req, check_guard=False)
    assert error == Errors.NONE and find_entry(after.producers, 7).current_txn_first_offset == 1


def test_a_guard_kept_is_appended_and_its_entry_cleared() -> None:
    first, second = _request(0, 0), _request(1, 1, connection=1)
    leader = begin_verified_produce(EMPTY, first, int(Errors.NONE), 0)
    leader = begin_verified_produce(leader, second, int(Errors.NONE), 0)  # the same entry: the same guard
    error, leader = _append(leader, first)
    assert error == Errors.NONE and not leader.verifications
    # the transactional append cleared the entry: the other request's guard is stale, but the transaction is
    # ongoing now, so it is not checked (phase 2 of UnifiedLog's comment)
    assert [p.guard for p in leader.pending] == [STALE]
    error, leader = _append(leader, second)
    assert error == Errors.NONE and len(leader.log) == 2


def test_a_failed_verification_leaves_its_entry_bounding_the_next_sequence() -> None:
    failed = _request(0, 0)
    leader = begin_verified_produce(EMPTY, failed, int(Errors.NOT_ENOUGH_REPLICAS), 0)
    error, leader = _append(leader, failed)
    assert error == Errors.NOT_ENOUGH_REPLICAS and leader.verifications and not leader.log
    later = _request(1, 1)
    leader = begin_verified_produce(leader, later, int(Errors.NONE), 0)
    error, _ = _append(leader, later)  # checkSequence: above the lowest sequence still being verified
    assert error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER


@pytest.mark.parametrize(("fixed", "answer"), [(False, Errors.INVALID_TXN_STATE), (True, Errors.INVALID_PRODUCER_EPOCH)])
def test_a_sentinel_batch_overtaken_by_a_fencing_marker(fixed: bool, answer: Errors) -> None:
    opened = handle_txn_produce(EMPTY, producer_id=7, epoch=0, seq=0, value=0, timestamp=0, **_ROOM).partition
    req = _request(1, 1)
    leader = begin_verified_produce(opened, req, None, 0)  # the transaction is ongoing: nothing to verify
    assert [p.guard for p in leader.pending] == [SENTINEL]
    leader = _abort(leader, 1)  # a timeout abort bumped the epoch and its marker landed first
    error, _ = _append(leader, req, stale_epoch_first=fixed)
    assert error == answer


def _steps(variant: str, **bounds: int) -> list[tuple]:
    m = machine(variant, **bounds)
    return [(s, step, t) for s, step, t in reachable_steps(m) if step[0] == "AppendVerifiedProduce"]


def _stale_sentinel(s: tuple, step: tuple, m: EosMachine) -> bool:
    """An append of a SENTINEL batch whose epoch the leader's entry for its producer has moved past."""
    _, partition, client, record, guard, _ = step
    leader = m.view(s).leader[partition]
    item = next(p for p in leader.pending if p.request.client == client and p.request.record == record)
    entry = find_entry(leader.producers, item.request.producer_id)
    return guard == SENTINEL and entry is not None and item.request.epoch < entry.epoch


@pytest.mark.parametrize(("variant", "answer"), [("kafka-3.8-3.9", Errors.INVALID_TXN_STATE),
                                                 ("kafka-3.9-kafka-19690", Errors.INVALID_PRODUCER_EPOCH)])
def test_kafka_19690s_window_is_reachable_with_the_steps_apart(variant: str, answer: Errors) -> None:
    bounds = {"verification_steps": 1, "batches": 2, "txn_timeouts": 1}
    m = machine(variant, **bounds)
    stale = {step[-1] for s, step, _ in _steps(variant, **bounds) if _stale_sentinel(s, step, m)}
    assert stale == {answer}
    # the one-step rule never lets a marker in between: no such append, and no step of that name
    assert not _steps(variant, batches=2, txn_timeouts=1)


def test_a_connection_is_muted_while_its_request_is_verified_and_the_bound_holds() -> None:
    m = machine("kafka-3.8-3.9", verification_steps=1, producers=2, txn_timeouts=1, produce_timeouts=1)
    most = 0
    for s, _, _ in reachable_steps(m, limit=30_000):
        for leader in m.view(s).leader:
            keys = [(p.request.client, p.request.connection) for p in leader.pending]
            assert len(keys) == len(set(keys)) and len(keys) <= 1
            most = max(most, len(keys))
    assert most == 1


def test_bound_zero_keeps_the_one_step_rule() -> None:
    one = machine("kafka-3.8-3.9")
    two = machine("kafka-3.8-3.9", verification_steps=1)
    assert "HandleProduce" in one.actions and not {"VerifyProduce", "AppendVerifiedProduce"} & set(one.actions)
    assert "HandleProduce" not in two.actions and {"VerifyProduce", "AppendVerifiedProduce"} <= set(two.actions)
    assert all(not leader.pending and not leader.verifications
               for s, _, _ in reachable_steps(one, limit=5_000) for leader in one.view(s).leader)


@pytest.mark.parametrize(("variant", "bounds", "why"), [
    ("kafka-3.0-3.5", {}, "needs partition_verification"),
    ("kafka-3.8-3.9", {"max_ticks": 2}, "max_ticks"),
    ("kafka-3.8-3.9", {"output_leader_failovers": 1}, "output_leader_failovers"),
    ("kafka-4.0-leader-add", {}, "tv2_partition_add=leader"),
])
def test_configurations_the_split_cannot_honour_are_refused(variant: str, bounds: dict[str, int], why: str) -> None:
    values = {name: b.default for name, b in BOUNDS.items()} | bounds | {"verification_steps": 1}
    with pytest.raises(ValueError, match=why) as info:
        EosMachine(VARIANTS[variant].protocol, values)
    assert "\n" not in str(info.value)


def test_producer_symmetry_renames_the_waiting_requests() -> None:
    leader = begin_verified_produce(EMPTY, _request(0, 0), int(Errors.NONE), 0)
    renamed = rename_leader(leader, (1, 0))
    assert [p.request.client for p in renamed.pending] == [1]
    assert rename_leader(renamed, (1, 0)) == leader
