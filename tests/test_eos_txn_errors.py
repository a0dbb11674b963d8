"""kafka.eos's transactional clients react to coordinator errors by the client's table
(``model/producer/txn_responses.py``) per client version: INVALID_PRODUCER_ID_MAPPING answering
AddPartitionsToTxn, AddOffsetsToTxn or EndTxn is abortable with an epoch bump for the 2.5-3.9 client
when the coordinator can bump (the abort skips EndTxn: InitProducerId(producer id, epoch) next), fatal
for the 1.0-2.4 client and, by KAFKA-18019, for the 4.0+ client. Pinned on the functions and on
reachable states of kafka.eos (a zombie after a producer-id change; an instance after its
transactional id expired)."""

from __future__ import annotations

from typing import Any

import pytest
from eoscheck.checker.compose.testing import reachable_steps
from eoscheck.model.errors import Errors
from eoscheck.model.machines.eos import machine
from eoscheck.model.producer import transactional as tx
from eoscheck.model.producer import txn_client as tc
from eoscheck.model.producer.config import ClientConfig
from eoscheck.model.state import (
    INIT_FATAL,
    INIT_FENCED,
    INIT_INITIALIZING,
    TXN_ABORTABLE,
    TXN_BUMP,
    TXN_FATAL,
    TXN_FENCED,
    TXN_IN_TXN,
    TxnClient,
)

IPM = int(Errors.INVALID_PRODUCER_ID_MAPPING)
CFG = ClientConfig(version="kip360", epoch_bump="resequence_inflight", max_in_flight=1, delivery_timeout=1 << 30,
                   max_seq=2**31 - 1, max_epoch=32767)


def _in_txn() -> Any:
    p = tx.with_producer_id(tx.new_producer(1), 0, 0)._replace(phase=TXN_IN_TXN)
    return tx.begin_transaction(p, 1, 0)


# --- the functions --------------------------------------------------------------------------------

@pytest.mark.parametrize("api", ["AddPartitionsToTxn", "AddOffsetsToTxn", "EndTxn"])
def test_pid_mapping_is_abortable_with_skip_for_the_kip360_client_and_fatal_otherwise(api: str) -> None:
    p = _in_txn()
    def react(**kw: bool) -> Any:
        if api == "AddPartitionsToTxn":
            return tx.on_add_partitions(p, 0, IPM, **kw)
        if api == "AddOffsetsToTxn":
            return tx.on_add_offsets(p, IPM, **kw)
        return tx.on_end_txn(p, True, IPM, (0, 0), tv2=False, bump_after_abort=True, cfg=CFG, **kw)
    kip360 = react(can_bump_epoch=True, pid_mapping_fatal=False)
    assert (kip360.phase, kip360.bump_after_abort, kip360.fatal_error) == (TXN_ABORTABLE, tx.SKIP_END_TXN, 0)
    for fatal in (react(can_bump_epoch=False, pid_mapping_fatal=False),  # 1.0-2.4 client, or a pre-2.5 coordinator
                  react(can_bump_epoch=True, pid_mapping_fatal=True)):  # 4.0+ client (KAFKA-18019)
        assert (fatal.phase, fatal.fatal_error) == (TXN_FATAL, IPM)


def test_fencing_and_invalid_txn_state_stay_fatal_and_concurrent_transactions_retries() -> None:
    p = _in_txn()
    for kw in ({"can_bump_epoch": True}, {"can_bump_epoch": False}, {"can_bump_epoch": True, "pid_mapping_fatal": True}):
        assert tx.on_add_partitions(p, 0, int(Errors.PRODUCER_FENCED), **kw).phase == TXN_FENCED
        assert tx.on_end_txn(p, True, int(Errors.INVALID_TXN_STATE), (0, 0), tv2=False, bump_after_abort=True,
                             cfg=CFG, **kw).phase == TXN_FATAL
        assert tx.on_add_partitions(p, 0, int(Errors.CONCURRENT_TRANSACTIONS), **kw) is None


def test_transaction_abortable_is_abortable_without_a_bump() -> None:
    r = tx.on_add_offsets(_in_txn(), int(Errors.TRANSACTION_ABORTABLE), can_bump_epoch=True)
    assert (r.phase, r.bump_after_abort) == (TXN_ABORTABLE, False)


def test_a_later_abortable_error_replaces_last_error_but_keeps_the_bump() -> None:
    skip = tx.on_add_partitions(_in_txn(), 0, IPM, can_bump_epoch=True)
    later = tx._abortable(skip, False)  # e.g. a produce answer failing a batch: lastError is that one now
    assert (later.phase, later.bump_after_abort) == (TXN_ABORTABLE, True)
    assert tx._abortable(later, True, skip_end_txn=True).bump_after_abort == tx.SKIP_END_TXN


def test_an_abort_answered_pid_mapping_bumps_with_init_producer_id() -> None:
    aborting = _in_txn()._replace(phase=TXN_ABORTABLE, bump_after_abort=True)
    r = tx.on_end_txn(aborting, False, IPM, (0, 0), tv2=False, bump_after_abort=True, cfg=CFG, can_bump_epoch=True)
    assert r.phase == TXN_BUMP and r.aborted == 1 and tx.init_request(r) == (0, 0)


def test_the_instances_client_reads_the_same_table() -> None:
    c = TxnClient(phase=0, producer_id=3, epoch=2, attempt=0, req_producer_id=-1, req_epoch=-1, started=1)
    new, req = tc.on_txn_error(c, 0, IPM, kip360=True)
    assert new.phase == INIT_INITIALIZING and (req.producer_id, req.epoch) == (3, 2)
    assert tc.on_txn_error(c, 0, IPM, kip360=True, pid_mapping_fatal=True) == (c._replace(phase=INIT_FATAL), None)
    assert tc.on_txn_error(c, 0, IPM, kip360=False)[0].phase == INIT_FATAL
    assert tc.on_txn_error(c, 0, int(Errors.PRODUCER_FENCED), kip360=True)[0].phase == INIT_FENCED


# --- reachable states of kafka.eos ------------------------------------------------------------------

def _steps(variant: str, action: str, **bounds: int) -> list[tuple[Any, Any, tuple, Any]]:
    m = machine(variant, **bounds)
    return [(m, s, step, t) for s, step, t in reachable_steps(m) if step[0] == action]


#: the producer id changes under a zombie: the restarted instance's InitProducerId at the exhausted epoch
ZOMBIE_3_0 = {"restarts": 1, "transactions": 1, "partitions": 1, "max_epoch": 2}
#: a TV2 commit that rotates the producer id at the exhausted epoch
ZOMBIE_4_0 = {"restarts": 1, "transactions": 2, "partitions": 1, "max_epoch": 3}


def test_a_zombie_of_3_0_aborts_skips_endtxn_and_bumps() -> None:
    answered = [(m, t) for m, _, step, t in _steps("kafka-3.0-3.5", "ZombieEndTxn", **ZOMBIE_3_0) if step[-1] == IPM]
    assert answered and all(m.view(t).zombie[0].phase == TXN_ABORTABLE for m, t in answered)
    assert all(m.view(t).zombie[0].bump_after_abort == tx.SKIP_END_TXN for m, t in answered)
    skipped = [(m, t) for m, _, step, t in _steps("kafka-3.0-3.5", "ZombieEndTxn", **ZOMBIE_3_0) if step[-1] == -2]
    assert skipped and all(m.view(t).zombie[0].phase == TXN_BUMP for m, t in skipped)


@pytest.mark.parametrize(("variant", "bounds"), [("kafka-4.0", ZOMBIE_4_0), ("kafka-2.4", ZOMBIE_3_0)])
def test_a_zombie_of_4_0_or_2_4_is_stopped(variant: str, bounds: dict[str, int]) -> None:
    steps = _steps(variant, "ZombieEndTxn", **bounds)
    answered = [(m, t) for m, _, step, t in steps if step[-1] == IPM]
    assert answered and all(m.view(t).zombie[0].phase == TXN_FATAL for m, t in answered)
    assert not any(step[-1] == -2 for _, _, step, _ in steps)


EXPIRY = {"producers": 0, "partitions": 1, "instances": 1, "instance_transactions": 1, "txn_id_expirations": 1}


@pytest.mark.parametrize(("variant", "phase"), [("kafka-3.0-3.5", INIT_INITIALIZING), ("kafka-3.6-3.9", INIT_INITIALIZING),
                                                ("kafka-4.0", INIT_FATAL), ("kafka-2.4", INIT_FATAL)])
def test_an_instance_whose_transactional_id_expired(variant: str, phase: int) -> None:
    steps = [(m, s, t) for m, s, step, t in _steps(variant, "InstanceAddPartitionsToTxn", **EXPIRY) if step[-1] == IPM]
    assert steps
    for m, s, t in steps:
        before, after = m.view(s).instance[0], m.view(t).instance[0]
        assert after.phase == phase
        if phase == INIT_INITIALIZING:  # InitProducerId(producer id, epoch): the KIP-360 recovery
            assert (after.req_producer_id, after.req_epoch) == (before.producer_id, before.epoch)


def test_kafka_18019_removes_the_pid_mapping_path_to_the_expiry_fence_but_not_the_fence() -> None:
    """docs/findings.md (txn-id-expiry-retry-fenced-*): at that spec's bounds on kafka.eos, the 2.5-3.9
    client is fenced in 13 states through INVALID_PRODUCER_ID_MAPPING's InitProducerId; with KAFKA-18019
    alone, the InitProducerId after an abortable error's abort still races the expiry (15 states)."""
    from eoscheck.checker.explore import explore
    from eoscheck.checker.explore.options import ExploreOptions
    from eoscheck.model.machines.eos import EosMachine
    from eoscheck.model.machines.eos_model import BOUNDS
    from eoscheck.model.protocol import VARIANTS
    bounds = {name: b.default for name, b in BOUNDS.items()}
    bounds.update(EXPIRY, lost_responses=1, abortable_errors=1)
    lengths = {}
    for fatal in (False, True):
        m = EosMachine(VARIANTS["kafka-3.6-3.9"].protocol.with_(client_pid_mapping_fatal=fatal), bounds)
        r = explore(m, ExploreOptions(stop_at_first=False))
        lengths[fatal] = {v.property: len(v.trace) for v in r.violations}
    assert lengths == {False: {"SoleInstanceNeverFenced": 13, "NewestInstanceNeverFenced": 13},
                       True: {"SoleInstanceNeverFenced": 15, "NewestInstanceNeverFenced": 15}}
