"""KAFKA-18202 (``tv2_new_producer_sequence_zero``) and KAFKA-18042 (``verification_rejects_lower_epoch``), the two
leader checks of June 2025 first released in 4.1.0: the rules, the variants that have them, and what kafka.eos
reaches with them."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from eoscheck.checker.compose.testing import reachable_steps
from eoscheck.checker.spec import build_machine, load_spec
from eoscheck.model import properties as props
from eoscheck.model.errors import Errors
from eoscheck.model.machines.eos import EosMachine
from eoscheck.model.machines.eos_model import BOUNDS
from eoscheck.model.partition.producer_state import find_entry
from eoscheck.model.partition.txn_produce import NO_GUARD_CHECK, handle_txn_produce
from eoscheck.model.partition.verification import (
    GUARDED,
    SENTINEL,
    VerificationEntry,
    find_verification,
    new_producer_refuses,
)
from eoscheck.model.producer import transactional as tx
from eoscheck.model.producer.client import RETRIED
from eoscheck.model.protocol import KAFKA_4_0, KAFKA_4_0_LEADER_ADD, VARIANTS
from eoscheck.model.state import (
    CachedBatch,
    ProduceRequest,
    ProducerStateEntry,
    Routed,
    TxnMetadata,
    TxnPartitionState,
)
from eoscheck.model.transactions.codes import TxnState
from spec_pairs import REPO, check_spec_pair_member

SWITCHES = ("tv2_new_producer_sequence_zero", "verification_rejects_lower_epoch")


def _eos(protocol, **bounds: int) -> EosMachine:  # type: ignore[no-untyped-def]
    values = {name: b.default for name, b in BOUNDS.items()}
    values.update(bounds)
    return EosMachine(protocol, values)


def test_the_variants_after_june_2025_have_both_and_no_earlier_one_has_either() -> None:
    later = {"kafka-java-coordinator", "kafka-trunk-2025-12", "kafka-trunk-2026-01", "kafka-trunk-2026", "kafka-4.1.0",
             "kafka-4.1.1", "kafka-4.2.0-rc1"}
    for name, v in VARIANTS.items():
        for switch in SWITCHES:
            assert getattr(v.protocol, switch) == (name in later), (name, switch)


def test_kafka_18202_needs_the_entrys_flag_of_kafka_18654() -> None:
    assert KAFKA_4_0.with_(tv2_new_producer_sequence_zero=True).consistency_error() is None
    error = KAFKA_4_0.with_(tv2_new_producer_sequence_zero=True, tv2_marker_keeps_verification=False).consistency_error()
    assert error is not None and "KAFKA-18654" in error


def test_only_a_producer_without_a_cached_batch_must_start_at_0() -> None:
    cached = ProducerStateEntry(0, 1, (CachedBatch(0, 0),), 0)
    emptied = ProducerStateEntry(0, 2, (), 0)  # a TV2 marker's new epoch emptied the cache
    assert new_producer_refuses(None, 1) and new_producer_refuses(emptied, 1)
    assert not new_producer_refuses(None, 0) and not new_producer_refuses(cached, 1)


def _unknown_producer(flag: bool) -> TxnPartitionState:
    """A leader with no state for producer 0 and its verification entry at lowest sequence 1 (``flag``: a TV2
    client's, supportsEpochBump)."""
    return TxnPartitionState((), 0, (), verifications=(VerificationEntry(0, 1, 0, 0, flag),))


@pytest.mark.parametrize(("switch", "flag", "refused"), [(True, True, True), (False, True, False), (True, False, False)])
def test_the_guarded_append_of_a_first_sequence_1(switch: bool, flag: bool, refused: bool) -> None:
    out = handle_txn_produce(_unknown_producer(flag), producer_id=0, epoch=0, seq=1, value=1, timestamp=0, max_seq=7,
                             cache_size=5, unknown_producer="accept", old_duplicate_error=False, guard=GUARDED,
                             new_producer_seq_zero=switch)
    if refused:
        assert (out.error, out.offset) == (Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, -1)
        assert out.partition == _unknown_producer(flag)
    else:
        assert out.error == Errors.NONE and len(out.partition.log) == 1 and not out.partition.verifications


@pytest.mark.parametrize(("tv2_verified", "refused"), [(True, True), (False, False)])
def test_the_one_step_append_of_a_first_sequence_1(tv2_verified: bool, refused: bool) -> None:
    out = handle_txn_produce(TxnPartitionState((), 0, ()), producer_id=0, epoch=0, seq=1, value=1, timestamp=0,
                             max_seq=7, cache_size=5, unknown_producer="accept", old_duplicate_error=False,
                             guard=NO_GUARD_CHECK, new_producer_seq_zero=True, tv2_verified=tv2_verified)
    assert (out.error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER) == refused


def test_a_stale_epoch_is_told_so_before_the_sequence() -> None:
    # checkProducerEpoch runs before checkSequence: a batch below the producer's epoch is INVALID_PRODUCER_EPOCH
    leader = TxnPartitionState((), 0, (ProducerStateEntry(0, 2, (), 0),),
                               verifications=(VerificationEntry(0, 1, 1, 0, True),))
    out = handle_txn_produce(leader, producer_id=0, epoch=1, seq=1, value=1, timestamp=0, max_seq=7, cache_size=5,
                             unknown_producer="accept", old_duplicate_error=False, guard=GUARDED,
                             new_producer_seq_zero=True)
    assert out.error == Errors.INVALID_PRODUCER_EPOCH


@pytest.mark.parametrize("protocol", [KAFKA_4_0, KAFKA_4_0_LEADER_ADD])
@pytest.mark.parametrize("switch", [False, True])
def test_kafka_18042_refuses_a_stale_batch_before_its_verification(protocol, switch: bool) -> None:  # type: ignore[no-untyped-def]
    m = _eos(protocol.with_(verification_rejects_lower_epoch=switch), transactions=2, verification_steps=1)
    leader = TxnPartitionState((), 0, (ProducerStateEntry(0, 2, (), 0),))
    req = ProduceRequest(0, 0, 0, 0, 1, 0, 0)
    # the coordinator has the producer's transaction at epoch 2 open with the partition in it
    txn = TxnMetadata(True, 0, -1, 2, -1, int(TxnState.ONGOING), False, partitions=(0,), tv=2)
    extra = {"producer": tx.new_producer(2)._replace(tv=2)} if protocol.tv2_partition_add.value == "leader" else {}
    out = m.verify_produce(partition=0, client=0, msg=Routed(0, 0, 0, 0, req), leader=leader, txn=txn,
                           now=0, coordinator_epoch=0, **extra)
    (item,) = out["leader"].pending
    if switch:
        assert (out["answer"], out["guard"], item.adds) == (Errors.INVALID_PRODUCER_EPOCH, SENTINEL, 0)
        assert not out["leader"].verifications
    else:
        assert out["guard"] == GUARDED and [v.epoch for v in out["leader"].verifications] == [1]


def _reorder_bounds() -> dict[str, int]:
    # two batches in flight; the partition's leadership moves while the first (sequence 0) is on its way to the old
    # leader, which answers it NOT_LEADER_OR_FOLLOWER, and the second (sequence 1) goes to the new leader first:
    # the new leader has no state for the producer (KAFKA-15591's reorder, for a TV2 transactional producer)
    return {"transactions": 1, "batches": 2, "max_in_flight": 2, "output_leader_failovers": 1, "verification_steps": 1}


@pytest.mark.parametrize("switch", [False, True])
def test_kafka_18202_is_reached_when_a_failover_reorders_the_first_two_batches(switch: bool) -> None:
    m = _eos(KAFKA_4_0.with_(tv2_new_producer_sequence_zero=switch), **_reorder_bounds())
    appends, oos_answers = set(), set()
    for state, step, _ in reachable_steps(m):
        if step[0] == "HandleProduceResponse" and step[-2] == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER:
            oos_answers.add((step[3], step[-1]))  # (record, outcome)
        if step[0] != "AppendVerifiedProduce":
            continue
        leader = m.view(state).leader[step[1]]
        item = next(p for p in leader.pending if (p.request.client, p.request.record) == step[2:4])
        entry = find_entry(leader.producers, item.request.producer_id)
        verification = find_verification(leader.verifications, item.request.producer_id)
        if (item.request.seq != 0 and (entry is None or not entry.batches) and verification is not None
                and item.request.seq <= verification.lowest_sequence and step[4] != SENTINEL):
            appends.add(step[-1])
    # before 4.1.0 the new leader appends sequence 1 of a producer it has no state for (KIP-360's accept), and the
    # retried sequence 0 is out of order there again and again (the client retries it: it is not the next one);
    # from 4.1.0 sequence 1 is refused and retried, and sequence 0 is appended first
    assert appends == ({Errors.OUT_OF_ORDER_SEQUENCE_NUMBER} if switch else {Errors.NONE})
    assert {record for record, _ in oos_answers} == ({1} if switch else {0})
    assert {outcome for _, outcome in oos_answers} == {RETRIED}


# --- KAFKA-18042's 4.0.x bug: a zombie's stale entry refuses the live producer's next sequence -------------------

ZOMBIE_PAIR = "eos-kafka-18042-zombie-batch-blocks-next-seq-kafka-"


def test_an_entry_at_a_lower_epoch_refuses_a_sentinel_batch_that_follows_its_producers_last() -> None:
    # ProducerAppendInfo.checkSequence's first test reads the entry's lowest sequence whatever its epoch (4.0.1 to
    # 4.2.0-rc1 alike): the live producer (epoch 1, sequence 0 appended, transaction open) sends sequence 1
    live = ProducerStateEntry(0, 1, (CachedBatch(0, 0),), 0, current_txn_first_offset=0)
    for entry_epoch in (0, 1):
        leader = TxnPartitionState((), 0, (live,), verifications=(VerificationEntry(0, 0, entry_epoch, 0, True),))
        out = handle_txn_produce(leader, producer_id=0, epoch=1, seq=1, value=1, timestamp=0, max_seq=7, cache_size=5,
                                 unknown_producer="accept", old_duplicate_error=False, guard=SENTINEL,
                                 ongoing_at_epoch=True)
        assert out.error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER
    out = handle_txn_produce(TxnPartitionState((), 0, (live,)), producer_id=0, epoch=1, seq=1, value=1, timestamp=0,
                             max_seq=7, cache_size=5, unknown_producer="accept", old_duplicate_error=False,
                             guard=SENTINEL, ongoing_at_epoch=True)
    assert out.error == Errors.NONE


def _oos_appends(variant: str) -> tuple[EosMachine, list[tuple[tuple, tuple, tuple]]]:
    """The pair's machine on ``variant`` and (state, step, successor) of every append it refuses
    OUT_OF_ORDER_SEQUENCE_NUMBER."""
    m = build_machine(load_spec(REPO / "specs" / f"{ZOMBIE_PAIR}{variant}.toml"))
    assert isinstance(m, EosMachine)
    return m, [(s, step, t) for s, step, t in reachable_steps(m)
               if step[0] == "AppendVerifiedProduce" and step[-1] == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER]


def test_before_kafka_18042_the_refusal_comes_from_an_entry_of_a_lower_epoch() -> None:
    m, steps = _oos_appends("4.0.1")
    spurious = [(s, step, t) for s, step, t in steps if not props.eos_no_spurious_out_of_order(step, m.view(s),
                                                                                                m.view(t))]
    assert spurious
    for s, step, _ in spurious:
        before = m.view(s)
        leader = before.leader[step[1]]
        item = next(p for p in leader.pending if (p.request.client, p.request.record) == step[2:4])
        entry = find_verification(leader.verifications, item.request.producer_id)
        assert entry is not None and entry.epoch < item.request.epoch and item.guard == SENTINEL
        # the same step behind an entry of the batch's own epoch is a legitimate refusal
        own = leader._replace(verifications=(entry._replace(epoch=item.request.epoch),))
        moved = SimpleNamespace(leader=tuple(own if i == step[1] else x for i, x in enumerate(before.leader)),
                                producer=before.producer)
        assert props.eos_no_spurious_out_of_order(step, moved, m.view(s))


def test_from_kafka_18042_no_append_is_refused_out_of_order_at_these_bounds() -> None:
    _, steps = _oos_appends("4.1.0")
    assert steps == []


@pytest.mark.parametrize(("name", "length"), [
    (f"{ZOMBIE_PAIR}4.0.1", 16), (f"{ZOMBIE_PAIR}4.1.0", None),
    ("eos-kafka-18042-zombie-batch-blocks-next-seq-client-add-kafka-4.0.1", 20),
    ("eos-kafka-18042-zombie-batch-blocks-next-seq-client-add-kafka-4.1.0", None)])
def test_the_zombie_batch_pair(name: str, length: int | None) -> None:
    check_spec_pair_member(name, "NoSpuriousOutOfOrder", length)


def test_kafka_4_0_0_reaches_the_same_refusal() -> None:
    # 4.0.0 (kafka-4.0-leader-add) has the epoch-aware hasOngoingTransaction of KAFKA-14563 too
    m = _eos(KAFKA_4_0_LEADER_ADD, transactions=2, batches=2, restarts=1, verification_steps=1)
    assert any(not props.eos_no_spurious_out_of_order(step, m.view(s), m.view(t)) for s, step, t in reachable_steps(m)
               if step[0] == "AppendVerifiedProduce" and step[-1] == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER)


@pytest.mark.parametrize("at_epoch", [True, False])
def test_the_client_add_reaches_it_only_with_the_epoch_aware_start(at_epoch: bool) -> None:
    # KAFKA-14563 (755adf8a56, 4.0.0): a TV2 client's own add (the client-add abstraction) meets the same leader, whose
    # hasOngoingTransaction(producerId, epoch) starts the zombie's verification; 3.x's check at any epoch skips it
    # (the zombie's batch is refused by the append's epoch check and leaves no entry)
    protocol = VARIANTS["kafka-4.0.1"].protocol.with_(verification_ongoing_at_epoch=at_epoch)
    m = _eos(protocol, transactions=2, batches=2, restarts=1, verification_steps=1)
    spurious = [step for s, step, t in reachable_steps(m)
                if step[0] == "AppendVerifiedProduce" and step[-1] == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER
                and not props.eos_no_spurious_out_of_order(step, m.view(s), m.view(t))]
    assert bool(spurious) == at_epoch
