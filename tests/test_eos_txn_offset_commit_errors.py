"""kafka.eos's reaction to a TxnOffsetCommit answer is ``TransactionManager.TxnOffsetCommitHandler``'s, by
the one rule the conformance API checks (``txn_offsets_client.on_txn_offset_commit_error``), per client
version: CONCURRENT_TRANSACTIONS (a verification while the transaction completes) is an unexpected, fatal
error for a 2.5.0-3.7.1 client and retried from 3.8.0 (PR 15266); INVALID_TXN_STATE and
INVALID_PRODUCER_ID_MAPPING, which a verification passes through the group coordinator, are fatal for
every client (the handler does not name them)."""

from __future__ import annotations

from typing import Any

import pytest
from eoscheck.checker.compose.testing import reachable_steps
from eoscheck.model.errors import Errors
from eoscheck.model.machines.eos import EosMachine, machine
from eoscheck.model.machines.eos_model import BOUNDS
from eoscheck.model.producer import transactional as tx
from eoscheck.model.producer.txn_offsets_client import ABORTABLE, DONE, FATAL, RETRY, on_txn_offset_commit_error
from eoscheck.model.protocol import VARIANTS
from eoscheck.model.state import TXN_ABORTABLE, TXN_FATAL, TXN_FENCED, TXN_IN_TXN
from eoscheck.model.transactions.codes import TxnState

#: a late EndTxn(COMMIT) of the first transaction (TV1) moves the second one to PrepareCommit with the
#: producer's own epoch while it is about to commit its offsets: the verification answers
#: CONCURRENT_TRANSACTIONS (the scenario of ``stale-end-txn-tv1``)
LATE_END_TXN = {"input_records": 2, "transactions": 2, "partitions": 1, "endtxn_timeouts": 1}
_PREPARING = (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT)

#: every error a kafka.eos TxnOffsetCommit can be answered with, and some it cannot (coordinator errors)
_ERRORS = (Errors.NONE, Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION, Errors.FENCED_INSTANCE_ID,
           Errors.INVALID_PRODUCER_EPOCH, Errors.PRODUCER_FENCED, Errors.INVALID_TXN_STATE,
           Errors.INVALID_PRODUCER_ID_MAPPING, Errors.CONCURRENT_TRANSACTIONS, Errors.TRANSACTION_ABORTABLE,
           Errors.NOT_COORDINATOR, Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.NETWORK_EXCEPTION,
           Errors.NOT_ENOUGH_REPLICAS)


def _committing() -> Any:
    m = machine("kafka-3.8-3.9", input_records=1)
    return m.initial_producer(0, True)._replace(phase=TXN_IN_TXN, producer_id=10, epoch=1, offsets=1)


@pytest.mark.parametrize("any_retriable", [False, True])
@pytest.mark.parametrize("error", _ERRORS, ids=lambda e: e.name)
def test_the_machine_reacts_by_the_conformance_rule(error: Errors, any_retriable: bool) -> None:
    p = _committing()
    got = tx.on_txn_offset_commit(p, int(error), any_retriable=any_retriable)
    action = on_txn_offset_commit_error(int(error), any_retriable=any_retriable).action
    if action == DONE:
        assert got == p._replace(offsets=2)
    elif action == RETRY:
        assert got is None
    elif action == ABORTABLE:
        assert got is not None and got.phase == TXN_ABORTABLE and not got.fatal_error
    else:
        assert action == FATAL and got is not None and got.fatal_error == error
        assert got.phase == (TXN_FENCED if error in tx.FENCING_ERRORS else TXN_FATAL)


def test_what_each_version_does_with_the_verification_answers() -> None:
    def action(error: Errors, any_retriable: bool) -> str:
        return on_txn_offset_commit_error(int(error), any_retriable=any_retriable).action
    assert (action(Errors.CONCURRENT_TRANSACTIONS, False), action(Errors.CONCURRENT_TRANSACTIONS, True)) == (FATAL, RETRY)
    for error in (Errors.INVALID_TXN_STATE, Errors.INVALID_PRODUCER_ID_MAPPING):
        assert action(error, False) == action(error, True) == FATAL
    assert action(Errors.TRANSACTION_ABORTABLE, True) == ABORTABLE
    assert [n for n, v in VARIANTS.items() if v.protocol.client_txn_offset_commit_any_retriable] and all(
        v.protocol.client_txn_offset_commit_any_retriable == v.protocol.client_transaction_abortable
        for v in VARIANTS.values())  # both are the 3.8.0 client's


def _steps(m: EosMachine) -> list[tuple[Any, tuple, Any]]:
    return list(reachable_steps(m))


def _verification_says_concurrent(m: EosMachine, s: Any) -> bool:
    """The producer is about to commit offsets and its own transaction is completing."""
    v = m.view(s)
    p, meta = v.producer[0], v.txn[0]
    return (p.phase == TXN_IN_TXN and p.offsets == 1 and meta.state in _PREPARING
            and (meta.producer_id, meta.epoch) == (p.producer_id, p.epoch))


def test_a_3_7_client_dies_on_concurrent_transactions_from_the_verification() -> None:
    m = machine("kafka-3.6-3.7", **LATE_END_TXN)
    steps = _steps(m)
    concurrent = [(s, t) for s, step, t in steps
                  if step[0] == "TxnOffsetCommit" and step[-1] == Errors.CONCURRENT_TRANSACTIONS]
    assert concurrent
    for s, t in concurrent:
        assert _verification_says_concurrent(m, s)
        after = m.view(t).producer[0]
        assert (after.phase, after.fatal_error) == (TXN_FATAL, Errors.CONCURRENT_TRANSACTIONS)
    # the other verification answer outside a transaction, INVALID_TXN_STATE, is fatal too (not abortable)
    refused = [m.view(t).producer[0] for _, step, t in steps
               if step[0] == "TxnOffsetCommit" and step[-1] == Errors.INVALID_TXN_STATE]
    assert refused and all((p.phase, p.fatal_error) == (TXN_FATAL, Errors.INVALID_TXN_STATE) for p in refused)


def test_a_3_8_client_retries_it_until_the_transaction_completed() -> None:
    m = machine("kafka-3.8-3.9", **LATE_END_TXN)
    steps = _steps(m)
    waiting = {s for s, _, _ in steps if _verification_says_concurrent(m, s)}
    assert waiting
    assert not [step for s, step, _ in steps if s in waiting and step[0] == "TxnOffsetCommit"]
    assert not [step for _, step, _ in steps if step[0] == "TxnOffsetCommit"
                and step[-1] == Errors.CONCURRENT_TRANSACTIONS]
    # the retry after the late commit completed finds the offsets partition outside the transaction:
    # TRANSACTION_ABORTABLE (KAFKA-16314), abortable
    late = [m.view(t).producer[0] for _, step, t in steps
            if step[0] == "TxnOffsetCommit" and step[-1] == Errors.TRANSACTION_ABORTABLE]
    assert late and all(p.phase == TXN_ABORTABLE for p in late)
    # the same states with the 2.5-3.7 handler: the step exists and is fatal
    old = EosMachine(VARIANTS["kafka-3.8-3.9"].protocol.with_(client_txn_offset_commit_any_retriable=False),
                     {**{k: b.default for k, b in BOUNDS.items()}, **LATE_END_TXN})
    for s in waiting:
        fatal = [m.view(t).producer[0] for step, t in old.successors(s) if step[0] == "TxnOffsetCommit"]
        assert [(p.phase, p.fatal_error) for p in fatal] == [(TXN_FATAL, Errors.CONCURRENT_TRANSACTIONS)]


def test_a_zombie_refused_with_invalid_producer_id_mapping_is_dead_not_aborting() -> None:
    """KAFKA-18019's bounds: the zombie's TxnOffsetCommit after the transactional id expired is verified
    (3.7+) and answered INVALID_PRODUCER_ID_MAPPING, which TxnOffsetCommitHandler does not name."""
    m = machine("kafka-3.6-3.9", input_records=1, transactions=2, restarts=1, txn_id_expirations=1)
    found = [(m.view(s).zombie[0], m.view(t).zombie[0]) for s, step, t in reachable_steps(m, 40_000)
             if step[0] == "ZombieTxnOffsetCommit" and step[-1] == Errors.INVALID_PRODUCER_ID_MAPPING]
    assert found
    for before, after in found:
        assert before.phase == TXN_IN_TXN
        assert (after.phase, after.fatal_error) == (TXN_FATAL, Errors.INVALID_PRODUCER_ID_MAPPING)
