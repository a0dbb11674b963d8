"""KIP-890 part 2's implicit partition add in ``kafka.eos`` (``Protocol.tv2_partition_add``,
model/machines/eos_tv2_add.py): the leader's check before it adds a partition, epoch-aware in every trunk
with the leader's add (KAFKA-14563's commit) or epoch-blind in the counterfactual; KAFKA-18575's early
CONCURRENT_TRANSACTIONS (``tv2_leader_concurrent_below_epoch``); the class each configuration runs on;
the refusals; and the verdicts of the spec pairs."""

from __future__ import annotations

import pickle

import pytest
from eoscheck.checker.cli import main
from eoscheck.model.errors import Errors
from eoscheck.model.machines.eos import EosMachine, machine, machine_class
from eoscheck.model.machines.eos_model import BOUNDS
from eoscheck.model.machines.eos_tv2_add import EARLY_CONCURRENT, Tv2LeaderAddMachine, leader_skips_add
from eoscheck.model.partition.txn_produce import AWAITED, handle_txn_produce
from eoscheck.model.partition.verification import GUARDED, SENTINEL
from eoscheck.model.producer import transactional as tx
from eoscheck.model.protocol import KAFKA_4_0, VARIANTS, Tv2PartitionAdd
from eoscheck.model.state import (
    TXN_ABORTABLE,
    TXN_BUMP,
    TXN_READY,
    ProduceRequest,
    ProducerStateEntry,
    Routed,
    TxnMetadata,
    TxnPartitionState,
)
from eoscheck.model.transactions.codes import TxnState
from eoscheck.model.transactions.log import EntryKind, LogEntry
from spec_pairs import check_spec_pair_member

#: the trunk before KAFKA-18575, the trunk after it (before KAFKA-18654 [1/2]), 4.0.0, and the counterfactual
PRE, EARLY, POST = "kafka-4.0-dev-2025-01", "kafka-4.0-dev-2025-01-28-leader-add", "kafka-4.0-leader-add"
BLIND = "tv2-leader-add-epoch-blind"


def _open_at_epoch_0() -> TxnPartitionState:
    """Partition 0 of producer id 0: its transaction at epoch 0 is open (the COMMIT marker has not arrived)."""
    entry = ProducerStateEntry(0, 0, (), 0, -1, 0)
    return TxnPartitionState((LogEntry(0, 0, int(EntryKind.TXN_DATA), 0),), 0, (entry,))


def _preparing_commit() -> TxnMetadata:
    """The coordinator after the TV2 EndTxn(COMMIT): PrepareCommit at the bumped epoch 1."""
    return TxnMetadata(True, 0, -1, 1, -1, int(TxnState.PREPARE_COMMIT), False, partitions=(0, 1), tv=2)


def test_the_leader_skips_the_add_only_for_a_transaction_open_at_the_batchs_epoch_unless_epoch_blind() -> None:
    leader = _open_at_epoch_0()
    assert leader_skips_add(leader, 0, 0, epoch_blind=False) and leader_skips_add(leader, 0, 0, epoch_blind=True)
    # every trunk with the leader's add: the next transaction's batch is added
    assert not leader_skips_add(leader, 0, 1, epoch_blind=False)
    assert leader_skips_add(leader, 0, 1, epoch_blind=True)  # the counterfactual: it joins the open one
    closed = leader._replace(producers=(leader.producers[0]._replace(current_txn_first_offset=-1),))
    assert not leader_skips_add(closed, 0, 1, epoch_blind=True)
    assert not leader_skips_add(TxnPartitionState((), 0, ()), 0, 0, epoch_blind=True)


@pytest.mark.parametrize(("variant", "error", "appended"), [(BLIND, Errors.NONE, True),
                                                             (PRE, Errors.NOT_ENOUGH_REPLICAS, False),
                                                             (EARLY, Errors.NOT_ENOUGH_REPLICAS, False),
                                                             (POST, Errors.NOT_ENOUGH_REPLICAS, False)])
def test_the_next_transactions_batch_before_the_marker(variant: str, error: int, appended: bool) -> None:
    m = machine(variant, transactions=2)
    assert isinstance(m, Tv2LeaderAddMachine)
    leader, txn = _open_at_epoch_0(), _preparing_commit()
    req = ProduceRequest(0, 0, 1, 0, 1, 0, 0)
    tv2_client = tx.new_producer(2)._replace(tv=2)
    out = m.handle_produce(partition=0, client=0, msg=Routed(0, 0, 0, 1, req), leader=leader, txn=txn,
                           producer=tv2_client)
    assert out["error"] == error
    assert (len(out["leader"].log) == 2) == appended
    # the leader's add answered CONCURRENT_TRANSACTIONS, or (EARLY) the leader did before any add (the batch sees
    # ReplicaManager's NOT_ENOUGH_REPLICAS, retried), and wrote nothing; the skipped add wrote nothing either
    assert "txn" not in out
    if appended:  # the batch joined the transaction still open at epoch 0: the same first offset
        assert out["leader"].producers[0].current_txn_first_offset == 0 and out["leader"].producers[0].epoch == 1


@pytest.mark.parametrize(("variant", "early"), [(PRE, False), (EARLY, True), (POST, False)])
def test_kafka_18575_answers_before_any_verification_starts(variant: str, early: bool) -> None:
    """With the add apart from the append and the coordinator's answer a step of its own: before KAFKA-18575
    (and in 4.0.0) the leader creates an entry at the bumped epoch and sends the add; KAFKA-18575's leader
    answers CONCURRENT_TRANSACTIONS at once, with no entry and nothing sent."""
    m = machine(variant, transactions=2, verification_steps=1, verification_answers=1)
    req = ProduceRequest(0, 0, 1, 0, 1, 0, 0)
    tv2_client = tx.new_producer(2)._replace(tv=2)
    out = m.verify_produce(partition=0, client=0, msg=Routed(0, 0, 0, 1, req), leader=_open_at_epoch_0(),
                           txn=_preparing_commit(), now=0, coordinator_epoch=0, producer=tv2_client)
    (item,) = out["leader"].pending
    if early:
        assert (out["answer"], out["guard"]) == (EARLY_CONCURRENT, SENTINEL) == (Errors.NOT_ENOUGH_REPLICAS, SENTINEL)
        assert not out["leader"].verifications and item.adds == 0
    else:
        assert (out["answer"], out["guard"], item.adds) == (AWAITED, GUARDED, 1)
        assert [v.epoch for v in out["leader"].verifications] == [1]


@pytest.mark.parametrize("concurrent", [False, True])
def test_kafka_18575s_append_check_refuses_a_batch_above_the_open_transactions_epoch(concurrent: bool) -> None:
    # a guarded batch at epoch 1 while the producer's transaction at epoch 0 is open: the append's
    # hasOngoingTransaction throws ConcurrentTransactionsException with KAFKA-18575, before the guard is looked at
    out = handle_txn_produce(_open_at_epoch_0(), producer_id=0, epoch=1, seq=0, value=1, timestamp=0, max_seq=7,
                             cache_size=5, unknown_producer="accept", old_duplicate_error=False, guard=GUARDED,
                             ongoing_at_epoch=True, concurrent_below_epoch=concurrent)
    if concurrent:
        assert (out.error, out.offset, out.partition) == (Errors.CONCURRENT_TRANSACTIONS, -1, _open_at_epoch_0())
    else:
        assert out.error == Errors.NONE and len(out.partition.log) == 2


def test_kafka_18575s_early_answer_is_reached() -> None:
    from eoscheck.checker.compose.testing import reachable_steps
    m = machine(EARLY, transactions=2, verification_steps=1, verification_answers=1)
    early = [step for _, step, _ in reachable_steps(m)
             if step[0] == "VerifyProduce" and step[-2:] == (SENTINEL, EARLY_CONCURRENT)]
    assert early


def test_a_tv2_client_of_the_leader_add_machine_drains_without_add_partitions() -> None:
    m = machine(PRE, transactions=2)
    s = next(iter(m.init_states()))
    steps = [step for step, _ in m.successors(s)]
    assert [step[0] for step in steps] == ["InitProducerId"]
    assert "AddPartitionsToTxn" not in m.actions and "AddPartitionsToTxn" in machine("kafka-4.0").actions


def test_each_configuration_runs_on_its_class() -> None:
    assert machine_class(KAFKA_4_0) is EosMachine and type(machine("kafka-4.0")) is EosMachine
    assert machine_class(VARIANTS[PRE].protocol) is Tv2LeaderAddMachine
    # no Kafka variant has the epoch-blind check: only the named counterfactual
    assert {name for name, v in VARIANTS.items()
            if v.protocol.tv2_partition_add == Tv2PartitionAdd.LEADER_EPOCH_BLIND} == {BLIND}
    assert VARIANTS[BLIND].doc.startswith("counterfactual")
    assert VARIANTS[PRE].protocol.tv2_partition_add == VARIANTS[EARLY].protocol.tv2_partition_add == Tv2PartitionAdd.LEADER
    assert KAFKA_4_0.tv2_partition_add == Tv2PartitionAdd.CLIENT  # the default variants keep the abstraction
    values = {name: b.default for name, b in BOUNDS.items()}
    assert type(EosMachine(VARIANTS[POST].protocol, values)) is Tv2LeaderAddMachine

    class Derived(EosMachine):
        pass

    with pytest.raises(ValueError, match="cannot honour tv2_partition_add=leader"):
        Derived(VARIANTS[POST].protocol, values)
    assert type(pickle.loads(pickle.dumps(machine(PRE)))) is Tv2LeaderAddMachine
    with pytest.raises(ValueError, match="without a group or instances"):
        machine(POST, members=1, producers=1, input_records=1)


def test_leader_add_needs_every_producer_a_tv2_client(capsys: pytest.CaptureFixture[str]) -> None:
    assert VARIANTS["kafka-3.6-3.9"].protocol.with_(tv2_partition_add="leader").consistency_error() is not None
    assert KAFKA_4_0.with_(tv2_partition_add="leader", client_tv_change="downgrade").consistency_error() is not None
    assert VARIANTS["kafka-3.6-3.9"].protocol.with_(tv2_partition_add="leader",
                                                    client_tv_change="upgrade").consistency_error() is None
    code = main(["check", "--model", "kafka.eos", "--variant", "kafka-3.6-3.9", "--set", "tv2_partition_add=leader",
                 "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "needs every producer a TV2 client" in err[0] and "Traceback" not in err[0]


@pytest.mark.parametrize("add", ["client", "leader-epoch-blind"])
def test_kafka_18575s_switch_needs_the_leaders_epoch_aware_add(add: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert VARIANTS[POST].protocol.with_(tv2_leader_concurrent_below_epoch=True).consistency_error() is None
    code = main(["check", "--model", "kafka.eos", "--variant", POST, "--set", f"tv2_partition_add={add}",
                 "--set", "tv2_leader_concurrent_below_epoch=true", "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "needs tv2_partition_add=leader" in err[0]


@pytest.mark.parametrize("bumps", [True, False])
def test_upgrading_to_tv2_bumps_the_epoch_only_with_the_switch(bumps: bool) -> None:
    protocol = VARIANTS[POST].protocol.with_(transaction_version="tv1", client_tv_change="upgrade",
                                             tv2_upgrade_bumps_epoch=bumps)
    values = {name: b.default for name, b in BOUNDS.items()}
    m = EosMachine(protocol, {**values, "transactions": 2})
    assert "AddPartitionsToTxn" in m.actions  # the TV1 transactions still add their partitions
    ready = tx.new_producer(2)._replace(phase=TXN_READY, producer_id=0, epoch=0, txn=1)
    out = m.client_transaction_version(producer=ready)
    assert out["producer"].tv == 2 and (out["producer"].phase == TXN_BUMP) == bumps


@pytest.mark.parametrize(("name", "length"), [("eos-tv2-next-txn-joins-completing-epoch-blind-counterfactual", 19),
                                              ("eos-tv2-next-txn-joins-completing-kafka-4.0-dev-2025-01", None),
                                              ("eos-tv2-next-txn-joins-completing-kafka-4.0", None),
                                              ("eos-tv2-upgrade-joins-last-tv1-txn-no-upgrade-bump", 22),
                                              ("eos-tv2-upgrade-joins-last-tv1-txn-kafka-4.0", None)])
def test_the_spec_pairs(name: str, length: int | None) -> None:
    check_spec_pair_member(name, "AtomicTransactions", length)


@pytest.mark.parametrize(("name", "length"), [
    ("eos-kafka-18575-next-txn-refused-after-marker-kafka-4.0-dev-2025-01", 21),
    ("eos-kafka-18575-next-txn-refused-after-marker-kafka-4.0-dev-2025-01-28-leader-add", None)])
def test_the_kafka_18575_spec_pair(name: str, length: int | None) -> None:
    check_spec_pair_member(name, "NoSpuriousTxnStateRefusal", length)


# --- the coordinator's answer to the leader's add, as the produce request sees it (fid14 item 3) -----------

def _ongoing_meta(state: TxnState, epoch: int, partitions: tuple[int, ...] = ()) -> TxnMetadata:
    return TxnMetadata(True, 10, 10, epoch, -1, int(state), False, -1, partitions)


def test_the_leaders_add_is_converted_as_the_verification_is() -> None:
    """AddPartitionsToTxnManager's conversion, then ReplicaManager's, for the add as for KIP-890 part 1's
    verify-only request: a fenced epoch is INVALID_PRODUCER_EPOCH, a transaction completing NOT_ENOUGH_REPLICAS."""
    bounds = {name: b.default for name, b in BOUNDS.items()}
    add = EosMachine(VARIANTS["kafka-4.0-leader-add"].protocol, bounds)
    verify = EosMachine(VARIANTS["kafka-4.0"].protocol, bounds)
    empty = TxnPartitionState((), 0, ())
    for meta, epoch, expected in [(_ongoing_meta(TxnState.ONGOING, 3), 2, Errors.INVALID_PRODUCER_EPOCH),
                                  (_ongoing_meta(TxnState.PREPARE_COMMIT, 3, (0,)), 3, Errors.NOT_ENOUGH_REPLICAS),
                                  (_ongoing_meta(TxnState.ONGOING, 3, (0,)), 3, Errors.NONE)]:
        assert add.produce_verification(0, empty, meta, 10, epoch) == expected
        assert verify.produce_verification(0, empty, meta, 10, epoch) == expected
    # unknown producer id: passed on as it is by both
    other = _ongoing_meta(TxnState.ONGOING, 3)._replace(producer_id=11)
    assert add.produce_verification(0, empty, other, 10, 3) == Errors.INVALID_PRODUCER_ID_MAPPING


def test_explored_a_fenced_batch_is_abortable_not_fatal() -> None:
    """eos-tv2-next-txn-joins-completing-kafka-4.0's bounds: after the timeout abort fenced the producer, its
    batch is answered INVALID_PRODUCER_EPOCH (an abortable InvalidProducerEpochException since KIP-588),
    never the coordinator's raw PRODUCER_FENCED or CONCURRENT_TRANSACTIONS."""
    from eoscheck.checker.compose.testing import reachable_steps
    m = machine("kafka-4.0-leader-add", transactions=2, txn_timeouts=1)
    answers, fenced = set(), []
    for s, step, t in reachable_steps(m):
        if step[0] == "HandleProduce":
            answers.add(step[-1])
        if step[0] == "HandleProduceResponse" and step[-2] == Errors.INVALID_PRODUCER_EPOCH:
            fenced.append(m.view(t).producer[0])
    assert Errors.INVALID_PRODUCER_EPOCH in answers and Errors.NOT_ENOUGH_REPLICAS in answers
    assert not answers & {Errors.PRODUCER_FENCED, Errors.CONCURRENT_TRANSACTIONS}
    assert fenced and all(p.phase == TXN_ABORTABLE for p in fenced)
