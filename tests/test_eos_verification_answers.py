"""kafka.eos with the transaction coordinator's answer to a leader's KIP-890 verification as a step of its own
(``verification_answers``, ``eos_verification.SplitVerification.answer_verification_rule``): the request
awaits the answer, the coordinator answers from its metadata when it handles the request (after a failover:
NOT_COORDINATOR), a TV2 leader's add is written then, and the append takes the answer; the bound at 0 keeps
the answer at the start."""

from __future__ import annotations

import pytest
from eoscheck.checker.compose.testing import reachable_steps
from eoscheck.model.errors import Errors
from eoscheck.model.machines.eos import EosMachine, machine
from eoscheck.model.machines.eos_model import BOUNDS
from eoscheck.model.partition.txn_produce import (
    AWAITED,
    answer_verification,
    begin_verified_produce,
    finish_verified_produce,
)
from eoscheck.model.protocol import VARIANTS
from eoscheck.model.state import ProduceRequest, TxnPartitionState
from eoscheck.model.transactions.codes import TxnState
from spec_pairs import check_spec_pair_member

EMPTY = TxnPartitionState((), 0, ())
_ROOM = {"max_seq": 2**31 - 1, "cache_size": 5, "unknown_producer": "accept", "old_duplicate_error": False,
         "stale_epoch_first": False}
_REQ = ProduceRequest(client=0, connection=0, record=0, producer_id=7, epoch=0, seq=0, created=0)


def test_an_awaited_request_takes_the_answer_later_and_only_then_appends() -> None:
    leader = begin_verified_produce(EMPTY, _REQ, AWAITED, 0, sent_to=3)
    item = leader.pending[0]
    assert item.answer == AWAITED and item.sent_to == 3 and leader.verifications
    with pytest.raises(AssertionError):
        finish_verified_produce(leader, item, value=0, **_ROOM)
    answered = answer_verification(leader, item, int(Errors.NONE))
    assert [p.answer for p in answered.pending] == [Errors.NONE] and answered.verifications == leader.verifications
    out = finish_verified_produce(answered, answered.pending[0], value=0, **_ROOM)
    assert out.error == Errors.NONE and len(out.partition.log) == 1


def test_the_bound_needs_the_split_and_zero_keeps_the_answer_at_the_start() -> None:
    values = {name: b.default for name, b in BOUNDS.items()} | {"verification_answers": 1}
    with pytest.raises(ValueError, match="needs verification_steps") as info:
        EosMachine(VARIANTS["kafka-3.8-3.9"].protocol, values)
    assert "\n" not in str(info.value)
    off = machine("kafka-3.8-3.9", verification_steps=1)
    on = machine("kafka-3.8-3.9", verification_steps=1, verification_answers=1)
    assert "AnswerVerification" not in off.actions and "AnswerVerification" in on.actions
    assert not any(p.answer == AWAITED for s, _, _ in reachable_steps(off, limit=3_000)
                   for leader in off.view(s).leader for p in leader.pending)


def _steps(variant: str, **bounds: int) -> tuple[EosMachine, list[tuple]]:
    m = machine(variant, verification_steps=1, verification_answers=1, **bounds)
    return m, list(reachable_steps(m))


def test_the_coordinator_answers_from_its_state_when_it_handles_the_request() -> None:
    m, steps = _steps("kafka-3.8-3.9", transactions=2, produce_timeouts=1, txn_timeouts=1)
    moved = 0
    for s, step, t in steps:
        before = m.view(s)
        if step[0] == "AppendVerifiedProduce":  # the callback runs only once the answer arrived
            item = next(p for p in before.leader[step[1]].pending
                        if p.request.client == step[2] and p.request.record == step[3])
            assert item.answer != AWAITED
        if step[0] != "AnswerVerification":
            continue
        _, client, p, record, answer = step
        item = next(x for x in before.leader[p].pending if x.request.client == client and x.request.record == record)
        assert item.answer == AWAITED
        # the answer is the one-step rule's check on the coordinator's metadata now
        assert answer == m.produce_verification(p, EMPTY, before.txn[client], item.request.producer_id,
                                                item.request.epoch)
        if answer == Errors.INVALID_PRODUCER_EPOCH:  # a timeout abort bumped the epoch after the leader started
            moved += 1
    assert moved


def test_a_request_to_a_coordinator_that_failed_over_is_answered_not_coordinator() -> None:
    m, steps = _steps("kafka-3.8-3.9", batches=2, produce_timeouts=1, coordinator_failovers=1)
    stale = [step for s, step, _ in steps if step[0] == "AnswerVerification"
             and any(p.sent_to != m.view(s).coordinator_epoch for p in m.view(s).leader[step[2]].pending)]
    # NOT_COORDINATOR, converted by ReplicaManager to the NOT_ENOUGH_REPLICAS every producer retries
    assert stale and {step[-1] for step in stale} == {Errors.NOT_ENOUGH_REPLICAS}


def test_a_tv2_leaders_add_is_written_when_the_coordinator_answers() -> None:
    m, steps = _steps("kafka-4.0-leader-add", transactions=2)
    starts = [(s, t) for s, step, t in steps if step[0] == "VerifyProduce" and step[-1] == AWAITED]
    assert starts and all(m.view(s).txn == m.view(t).txn for s, t in starts)  # nothing written at the start
    adds = [(s, t) for s, step, t in steps if step[0] == "AnswerVerification" and step[-1] == Errors.NONE
            and set(m.view(t).txn[0].partitions) - set(m.view(s).txn[0].partitions)]
    assert adds and all(m.view(t).txn[0].state == TxnState.ONGOING for _, t in adds)


def test_an_awaited_request_is_answered_not_leader_at_a_failover() -> None:
    m, steps = _steps("kafka-3.8-3.9", batches=2, produce_timeouts=1, output_leader_failovers=1)
    seen = 0
    for s, step, t in steps:
        if step[0] != "TxnLeaderFailover":
            continue
        old = m.view(s).leader[step[1]]
        fresh = [r for r in m.view(t).responses if r not in m.view(s).responses]
        for item in old.pending:
            if item.answer == AWAITED:
                seen += 1
                assert any(r.record == item.request.record and r.message.error == Errors.NOT_LEADER_OR_FOLLOWER
                           for r in fresh)
    assert seen


def test_the_tv2_leader_add_spec() -> None:
    check_spec_pair_member("eos-verification-answer-tv2-leader-add-kafka-4.0", "NoSpuriousTxnStateRefusal", None)


def test_renaming_producers_and_partitions_commutes_with_the_answer_step() -> None:
    m = machine("kafka-3.8-3.9", producers=2, partitions=2, verification_steps=1, verification_answers=1)
    assert m.has_symmetry() and m.symmetry.exact
    apply = m.symmetry.apply
    sizes = [ss.size for ss in m.symmetry.scalarsets]
    perms = [tuple(tuple(reversed(range(n))) if i == k else tuple(range(n)) for i, n in enumerate(sizes))
             for k in range(len(sizes))]
    awaited = 0
    for s, _, _ in reachable_steps(m, limit=3_000):
        awaited += any(p.answer == AWAITED for leader in m.view(s).leader for p in leader.pending)
        for perm in perms:
            image = apply(s, perm)
            assert {apply(t, perm) for _, t in m.successors(s)} == {t for _, t in m.successors(image)}
    assert awaited


def test_the_split_add_at_the_start_waits_for_a_completing_transaction_in_4_0() -> None:
    # 4.0.0's handleAddPartitionsToTransaction answers CONCURRENT_TRANSACTIONS for a transaction still
    # completing before it checks the epoch (KAFKA-18660), whoever sends the add: the leader's add at the start
    # too (before fid18 it skipped the switch there and answered the next transaction's batch PRODUCER_FENCED)
    m = machine("kafka-4.0-leader-add", transactions=2, batches=2, produce_timeouts=1, txn_timeouts=1,
                verification_steps=1)
    answers = {step[-1] for s, step, _ in reachable_steps(m) if step[0] == "VerifyProduce" and step[-2] == 1
               and m.view(s).txn[step[2]].state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT)}
    assert answers == {Errors.NOT_ENOUGH_REPLICAS}
