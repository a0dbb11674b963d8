"""kafka.eos's failed fence appends (``failed_fence_appends``, ``eos_fence_faults``; review 21): the
shared rule, the per-version switch (KAFKA-9666, 2.6.0) and what exploration reaches."""

from __future__ import annotations

from typing import Any

import pytest
from eoscheck.checker.compose.testing import compare_memo, reachable_steps
from eoscheck.model.api import coordinator as api
from eoscheck.model.api.protocol import protocol as profile_protocol
from eoscheck.model.errors import Errors
from eoscheck.model.machines.eos import EosMachine, machine
from eoscheck.model.machines.eos_model import BOUNDS
from eoscheck.model.protocol import VARIANTS
from eoscheck.model.state import TXN_IN_TXN, TXN_INIT, TxnMetadata
from eoscheck.model.transactions.codes import NO_PENDING, TxnState

ZOMBIE = {"restarts": 1, "input_records": 1}
CTP = {"input_records": 1, "txn_timeouts": 1}


def _ongoing(epoch: int = 1) -> TxnMetadata:
    return TxnMetadata(True, 10, 10, epoch, -1, int(TxnState.ONGOING), False, NO_PENDING, (0,))


def _fail(m: EosMachine, meta: TxnMetadata) -> TxnMetadata:
    producer = m.initial_producer(0, True)._replace(phase=TXN_INIT)
    out = m.fence_append_fails(txn=meta, producer=producer, txn_timeouts=0)
    assert out["cause"] == "InitProducerId" and out["epoch"] == out["txn"].epoch
    return out["txn"]


def test_without_the_bound_the_fault_is_neither_listed_nor_shown() -> None:
    m = machine("kafka-3.0-3.5", **ZOMBIE)
    assert "FenceAppendFails" not in m.actions
    assert "faults.failed_fence_appends" not in m.fields(next(iter(m.init_states())))
    on = machine("kafka-3.0-3.5", **ZOMBIE, failed_fence_appends=1)
    assert "FenceAppendFails" in on.actions
    assert on.fields(next(iter(on.init_states())))["faults.failed_fence_appends"] == 0


@pytest.mark.parametrize(("variant", "epochs"), [("kafka-2.6", (2, 2)), ("kafka-2.4", (2, 3)),
                                                 ("kafka-4.0", (2, 2))])
def test_a_second_failed_fence_bumps_again_only_before_kafka_9666(variant: str, epochs: tuple[int, int]) -> None:
    m = machine(variant, **ZOMBIE, failed_fence_appends=2)
    once = _fail(m, _ongoing())
    twice = _fail(m, once)
    assert (once.epoch, twice.epoch) == epochs
    assert (once.state, once.pending_state, once.last_epoch) == (TxnState.ONGOING, NO_PENDING, -1)
    assert twice.has_failed_epoch_fence == VARIANTS[variant].protocol.failed_fence_keeps_epoch


@pytest.mark.parametrize("profile", ["kafka-2.4.1", "kafka-2.6", "kafka-3.8-3.9", "kafka-2024-10"])
def test_the_machine_and_the_conformance_api_share_the_rule(profile: str) -> None:
    """The timeout abort whose append fails, twice, through ``model.api`` (what INIT-11 / SM-33 check
    against Kafka's unit tests) and through kafka.eos with the same KAFKA-9666 value."""
    protocol = profile_protocol(profile)
    variant = "kafka-2.6" if protocol.failed_fence_keeps_epoch else "kafka-2.4"
    m = machine(variant, **ZOMBIE, failed_fence_appends=2)
    state = api.CoordinatorState(_ongoing(), 20)
    meta = _ongoing()
    for _ in range(2):
        _, state = api.abort_timed_out(state, protocol, append_error=Errors.NOT_ENOUGH_REPLICAS)
        meta = _fail(m, meta)
        assert state.metadata == meta


def _explore(variant: str, bounds: dict[str, int]) -> list[tuple[Any, tuple, Any]]:
    m = machine(variant, **bounds)
    return [(m.view(s), step, m.view(t)) for s, step, t in reachable_steps(m)]


def test_a_failed_fence_fences_the_old_producer_and_the_next_fence_writes_that_epoch() -> None:
    steps = _explore("kafka-3.0-3.5", {**ZOMBIE, "failed_fence_appends": 1})
    failed = [(s, t) for s, step, t in steps if step[0] == "FenceAppendFails"]
    assert failed and all(t.txn[0].has_failed_epoch_fence and t.txn_log == s.txn_log for s, t in failed)
    # the zombie's requests meet the fenced epoch although nothing was written
    assert any(s.txn[0].has_failed_epoch_fence and step[0] in ("ZombieEndTxn", "AddPartitionsToTxn")
               and step[-1] == Errors.PRODUCER_FENCED for s, step, _ in steps)
    # the new instance's InitProducerId fences again at the same epoch: PrepareAbort written, flag cleared
    refenced = [(s, t) for s, step, t in steps if step[0] == "InitProducerId" and s.txn[0].has_failed_epoch_fence]
    assert refenced and all(t.txn[0].state == TxnState.PREPARE_ABORT and t.txn[0].epoch == s.txn[0].epoch
                            and t.txn_log[0].epoch == s.txn[0].epoch and not t.txn[0].has_failed_epoch_fence
                            for s, t in refenced if t.txn[0] != s.txn[0])


def test_a_failure_only_happens_where_its_fence_is_tried_again() -> None:
    steps = _explore("kafka-3.0-3.5", {"input_records": 1, "txn_timeouts": 1, "failed_fence_appends": 2})
    causes = {step[2] for _, step, _ in steps if step[0] == "FenceAppendFails"}
    assert causes == {"timeout"}
    # the timeout is retried: a failure only while the timeout abort is still left
    assert all(s.txn_timeouts == 0 for s, step, _ in steps if step[0] == "FenceAppendFails")
    m = machine("kafka-3.0-3.5", **CTP, failed_fence_appends=2)
    ready = m.initial_producer(0, True)._replace(phase=TXN_IN_TXN)
    assert ready.phase != TXN_INIT and m.fence_append_fails(txn=_ongoing(), producer=ready, txn_timeouts=1) is None
    assert m.fence_append_fails(txn=_ongoing(), producer=ready, txn_timeouts=0)["cause"] == "timeout"


def test_memoised_and_unmemoised_agree_with_failed_fences() -> None:
    def make(memoize: bool = True) -> EosMachine:
        bounds = {name: b.default for name, b in BOUNDS.items()} | ZOMBIE | {"failed_fence_appends": 2,
                                                                            "txn_timeouts": 1}
        return EosMachine(VARIANTS["kafka-3.0-3.5"].protocol, bounds, memoize=memoize)
    compare_memo(make, 20_000)


# --- the instances mixin (``eos_instances``): InitProducerId's fence of the instances' transaction --------

INSTANCES = {"producers": 0, "instances": 2, "instance_transactions": 1}


def test_the_instances_fence_failure_is_off_at_bound_0_and_keeps_the_space() -> None:
    from eoscheck.checker.explore import ExploreOptions, explore
    off = machine("kafka-3.0-3.5", **INSTANCES)
    on = machine("kafka-3.0-3.5", **INSTANCES, failed_fence_appends=1)
    assert "InstanceFenceAppendFails" not in off.actions and "InstanceFenceAppendFails" in on.actions
    plain = explore(off, ExploreOptions(stop_at_first=False))
    faulty = explore(on, ExploreOptions(stop_at_first=False))
    assert plain.verdict == faulty.verdict == "holds"
    assert plain.stats.distinct < faulty.stats.distinct


@pytest.mark.parametrize(("variant", "epochs"), [("kafka-3.0-3.5", (1, 1)), ("kafka-2.4", (1, 2))])
def test_an_instance_fence_that_fails_twice_bumps_again_only_before_kafka_9666(
        variant: str, epochs: tuple[int, int]) -> None:
    steps = _explore(variant, {**INSTANCES, "failed_fence_appends": 2})
    failed = [(s, step, t) for s, step, t in steps if step[0] == "InstanceFenceAppendFails"]
    assert failed
    for s, step, t in failed:
        before, after = s.instances_txn, t.instances_txn
        # the transaction stays Ongoing in memory at the fenced epoch; nothing is written
        assert before.state == after.state == TxnState.ONGOING and t.instances_txn_log == s.instances_txn_log
        assert after.has_failed_epoch_fence == VARIANTS[variant].protocol.failed_fence_keeps_epoch
        assert step[-1] == after.epoch
        # the client is answered COORDINATOR_NOT_AVAILABLE and resends
        assert [r.error for r in t.init_responses if r not in s.init_responses] == [Errors.COORDINATOR_NOT_AVAILABLE]
    first = {step[-1] for s, step, _ in failed if not s.instances_txn.has_failed_epoch_fence
             and s.instances_txn.epoch == 0}
    second = {step[-1] for s, step, _ in failed if s.instances_txn.epoch == epochs[0]
              and (s.instances_txn.has_failed_epoch_fence or variant == "kafka-2.4")}
    assert (min(first), max(second)) == epochs


def test_the_next_instance_fence_writes_the_kept_epoch() -> None:
    steps = _explore("kafka-3.0-3.5", {**INSTANCES, "failed_fence_appends": 1})
    written = [t.instances_txn for s, step, t in steps if step[0] == "HandleInitProducerId"
               and s.instances_txn.has_failed_epoch_fence]
    assert written and all(m.state == TxnState.PREPARE_ABORT and m.epoch == 1 and not m.has_failed_epoch_fence
                           for m in written if m.state != TxnState.ONGOING)
    assert any(m.state == TxnState.PREPARE_ABORT for m in written)


# --- transaction.version 2 after KAFKA-19367 (4.0.1, 4.1.0): ``tv2_failed_fence_leaves_epoch`` -------------

POST_19367 = "kafka-java-coordinator"


@pytest.mark.parametrize(("variant", "epochs", "flag"), [("kafka-4.0", (2, 2), True), (POST_19367, (1, 1), False)])
def test_a_failed_tv2_fence_keeps_the_fenced_epoch_only_before_kafka_19367(variant: str, epochs: tuple[int, int],
                                                                          flag: bool) -> None:
    m = machine(variant, **ZOMBIE, failed_fence_appends=2)
    once = _fail(m, _ongoing())
    twice = _fail(m, once)
    assert (once.epoch, twice.epoch) == epochs and once.has_failed_epoch_fence == twice.has_failed_epoch_fence == flag
    if not flag:
        assert once == twice == _ongoing()


def test_the_machine_and_the_conformance_api_share_the_tv2_rule() -> None:
    """SM-123's rule: a TV2 timeout abort whose append fails, twice, through ``model.api`` under kafka-later-trunk
    (the metadata's version 2 standing for the server's) and through kafka.eos after KAFKA-19367; and under the
    2024-10 snapshot as 4.0.0's kafka.eos."""
    for profile, variant in (("kafka-later-trunk", POST_19367), ("kafka-2024-10", "kafka-4.0")):
        protocol = profile_protocol(profile)
        m = machine(variant, **ZOMBIE, failed_fence_appends=2)
        state = api.CoordinatorState(_ongoing()._replace(tv=2), 20)
        meta = _ongoing()._replace(tv=2)
        for _ in range(2):
            _, state = api.abort_timed_out(state, protocol, append_error=Errors.NOT_ENOUGH_REPLICAS)
            meta = _fail(m, meta)
            assert state.metadata == meta, profile


def test_after_kafka_19367_a_failed_fence_changes_nothing_and_the_written_one_bumps_once() -> None:
    steps = _explore(POST_19367, {**ZOMBIE, "failed_fence_appends": 1})
    failed = [(s, t) for s, step, t in steps if step[0] == "FenceAppendFails"]
    assert failed and all(t.txn == s.txn and t.txn_log == s.txn_log and t.producer == s.producer for s, t in failed)
    # the zombie's epoch stays current: its requests are not refused as fenced before a fence is written
    assert not any(step[-1] == Errors.PRODUCER_FENCED and s.txn[0].state == TxnState.ONGOING
                   and s.zombie[0] and s.zombie[0].epoch == s.txn[0].epoch for s, step, _ in steps)
    written = [(s.txn[0], t.txn[0]) for s, step, t in steps if step[0] == "InitProducerId"
               and s.txn[0].state == TxnState.ONGOING and t.txn[0].state == TxnState.PREPARE_ABORT]
    # prepareAbortOrCommit's bump at the server's version: lastEpoch = the fenced producer's epoch, TV2
    assert written and all((b.epoch, b.last_epoch, b.tv) == (a.epoch + 1, a.epoch, 2) for a, b in written)


@pytest.mark.parametrize("variant", ["kafka-4.0", POST_19367])
def test_an_instance_fence_that_fails_leaves_the_metadata_after_kafka_19367(variant: str) -> None:
    steps = _explore(variant, {**INSTANCES, "failed_fence_appends": 2})
    failed = [(s, step, t) for s, step, t in steps if step[0] == "InstanceFenceAppendFails"]
    assert failed
    leaves = VARIANTS[variant].protocol.tv2_failed_fence_leaves_epoch
    for s, step, t in failed:
        before, after = s.instances_txn, t.instances_txn
        assert before.state == after.state == TxnState.ONGOING and t.instances_txn_log == s.instances_txn_log
        if leaves:
            assert after == before and not after.has_failed_epoch_fence
        else:
            assert after.has_failed_epoch_fence and after.epoch == before.epoch + (not before.has_failed_epoch_fence)
        assert [r.error for r in t.init_responses if r not in s.init_responses] == [Errors.COORDINATOR_NOT_AVAILABLE]
    # the fence that is written: one bump over the current epoch after KAFKA-19367; 4.0.0's second bump over the
    # fenced epoch its failure kept (and over a fresh fence: two in all)
    written = [(s.instances_txn, t.instances_txn) for s, step, t in steps if step[0] == "HandleInitProducerId"
               and s.instances_txn.state == TxnState.ONGOING and t.instances_txn.state == TxnState.PREPARE_ABORT]
    assert written
    for a, b in written:
        assert b.epoch == a.epoch + (1 if leaves else (1 if a.has_failed_epoch_fence else 2)), (a, b)
