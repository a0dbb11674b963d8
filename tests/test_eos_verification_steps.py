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
    expire_producer_state,
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
    """An append of a SENTINEL batch the leader let through (no early error: KAFKA-18042's refusal of a batch already
    stale at the verification's start also carries SENTINEL) whose epoch the leader's entry has moved past since."""
    _, partition, client, record, guard, _ = step
    leader = m.view(s).leader[partition]
    item = next(p for p in leader.pending if p.request.client == client and p.request.record == record)
    entry = find_entry(leader.producers, item.request.producer_id)
    return guard == SENTINEL and item.answer == Errors.NONE and entry is not None and item.request.epoch < entry.epoch


@pytest.mark.parametrize(("variant", "answer"), [("kafka-3.8-3.9", Errors.INVALID_TXN_STATE),
                                                 ("kafka-3.9-kafka-19690", Errors.INVALID_PRODUCER_EPOCH),
                                                 # TV2 at the tags: KAFKA-19690's 4.1 PR 20618 is in 4.1.1, not 4.1.0
                                                 ("kafka-4.1.0", Errors.INVALID_TXN_STATE),
                                                 ("kafka-4.1.1", Errors.INVALID_PRODUCER_EPOCH)])
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


# --- fid17: expiry, output leader failover, the TV2 leader's add ----------------------------------------


def test_expiry_drops_entries_as_old_as_the_expiration_and_stales_their_guards() -> None:
    req = _request(0, 0)
    leader = begin_verified_produce(EMPTY, req, int(Errors.NONE), 1)  # the entry is created at tick 1
    assert expire_producer_state(leader, 1, 1) is None  # 0 ticks old: kept
    expired = expire_producer_state(leader, 2, 1)  # removeExpiredProducers: now - timestamp >= expiration
    assert expired is not None and not expired.verifications and [p.guard for p in expired.pending] == [STALE]
    error, _ = _append(expired, req)  # verificationGuard(producerId) is SENTINEL now: no handed-out guard matches
    assert error == Errors.INVALID_TXN_STATE
    # an update (a lower sequence, a higher epoch) does not renew the entry's time
    renewed = begin_verified_produce(leader._replace(pending=()), _request(1, 0, epoch=1), int(Errors.NONE), 2)
    assert expire_producer_state(renewed, 2, 1) is not None


def _split(variant: str, **bounds: int) -> tuple[EosMachine, list[tuple]]:
    m = machine(variant, verification_steps=1, **bounds)
    return m, list(reachable_steps(m))


def test_an_entry_expires_under_a_held_request_and_time_waits_for_awaited_ones() -> None:
    m, steps = _split("kafka-3.8-3.9", batches=2, produce_timeouts=1, max_ticks=2, producer_id_expiration=1)
    stale_by_expiry = 0
    for s, step, t in steps:
        before, after = m.view(s), m.view(t)
        if step[0] == "ExpireProducerIds":
            old, new = before.leader[step[1]], after.leader[step[1]]
            if any(p.guard == GUARDED for p in old.pending) and not new.verifications:
                stale_by_expiry += 1
                assert all(p.guard != GUARDED for p in new.pending)
        if step[0] == "Tick":  # no request a leader holds is still awaited by its producer
            for p, leader in enumerate(before.leader):
                for item in leader.pending:
                    part = before.producer[item.request.client].parts[p]
                    assert item.request.connection != part.connection or all(
                        b.record != item.request.record or b.status != 1 for b in part.batches)
    assert stale_by_expiry > 0


def test_a_failover_answers_the_held_requests_and_the_new_leader_has_no_entry() -> None:
    m, steps = _split("kafka-3.8-3.9", batches=2, produce_timeouts=1, output_leader_failovers=1)
    answers = set()
    for s, step, t in steps:
        if step[0] != "TxnLeaderFailover":
            continue
        old, new = m.view(s).leader[step[1]], m.view(t).leader[step[1]]
        assert not new.pending and not new.verifications
        fresh = [r for r in m.view(t).responses if r not in m.view(s).responses]
        for item in old.pending:
            got = next(r.message.error for r in fresh if r.client == item.request.client
                       and r.record == item.request.record and r.connection == item.request.connection)
            want = Errors.NOT_LEADER_OR_FOLLOWER if item.answer == Errors.NONE else item.answer
            assert got == want
            answers.add(Errors(got).name)
    assert "NOT_LEADER_OR_FOLLOWER" in answers and len(answers) > 1


def test_the_append_asks_for_the_transaction_at_the_batch_epoch_in_4_0() -> None:
    opened = handle_txn_produce(EMPTY, producer_id=7, epoch=0, seq=0, value=0, timestamp=0, **_ROOM).partition
    item_req = ProduceRequest(client=0, connection=0, record=1, producer_id=7, epoch=1, seq=0, created=0)
    leader = begin_verified_produce(opened, item_req, None, 0)  # SENTINEL: the leader skipped the add
    item = leader.pending[0]
    blind = finish_verified_produce(leader, item, value=1, stale_epoch_first=False, **_ROOM)
    aware = finish_verified_produce(leader, item, value=1, stale_epoch_first=False, ongoing_at_epoch=True, **_ROOM)
    # 3.x / the epoch-blind counterfactual: an open transaction at any epoch lets the SENTINEL batch through (it
    # then joins that transaction); every trunk with the leader's add (KAFKA-14563's commit) asks for its guard,
    # which a SENTINEL is not
    assert blind.error == Errors.NONE and aware.error == Errors.INVALID_TXN_STATE


def test_tv2_leaders_add_with_the_steps_apart() -> None:
    m, steps = _split("kafka-4.0-leader-add", transactions=2, txn_timeouts=1)
    assert "HandleProduce" not in m.actions and "VerifyProduce" in m.actions
    adds = [(s, t) for s, step, t in steps if step[0] == "VerifyProduce" and step[-2] == GUARDED and step[-1] == 0]
    # the leader's request added the partition: the coordinator's metadata moved in the same step
    assert any(set(m.view(t).txn[0].partitions) - set(m.view(s).txn[0].partitions) for s, t in adds)


def _sentinel_overtaken(variant: str, **bounds: int) -> set[int]:
    m = machine(variant, **bounds)
    return {step[-1] for s, step, _ in reachable_steps(m)
            if step[0] == "AppendVerifiedProduce" and step[-2] == SENTINEL and step[-1] != Errors.NONE}


def test_only_the_epoch_blind_counterfactual_lets_the_marker_overtake_a_skipped_add() -> None:
    # the counterfactual skips the add for a batch of the next transaction while the previous one is open at
    # the old epoch; that transaction's marker can land before the append, which then has no transaction and a
    # SENTINEL guard: INVALID_TXN_STATE. With the epoch-aware check (every trunk with the leader's add) a batch
    # skips the add only at its own transaction's epoch, whose marker cannot come before its batches are acked
    bounds = {"transactions": 2, "batches": 1, "verification_steps": 1}
    assert int(Errors.INVALID_TXN_STATE) in _sentinel_overtaken("tv2-leader-add-epoch-blind", **bounds)
    assert not _sentinel_overtaken("kafka-4.0-dev-2025-01", **bounds)
    assert not _sentinel_overtaken("kafka-4.0-leader-add", **bounds)
