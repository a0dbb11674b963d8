"""kafka.eos's late EndTxn and per-producer transaction versions (model/machines/eos_endtxn.py), the
exhausted_epochs bound, and the group's TaskMigrated reaction (model/group/member.py): the rules, the
bounds and switches that turn them on, and the configurations refused in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from eoscheck.checker.compose.testing import compare_memo, reachable_steps
from eoscheck.model.errors import Errors
from eoscheck.model.group.member import (
    TASK_MIGRATED,
    initial_group,
    lose_tasks,
    must_rejoin,
    on_assignment,
    rejoin,
)
from eoscheck.model.machines.eos import EosMachine, machine
from eoscheck.model.machines.eos_endtxn import (
    LATE_ACTIONS,
    TV_ACTIONS,
    EndTxnRequest,
    end_request,
)
from eoscheck.model.machines.eos_model import MODEL
from eoscheck.model.producer import transactional as tx
from eoscheck.model.state import TXN_ABORTABLE, TXN_IN_TXN, TXN_READY, TxnMetadata
from eoscheck.model.transactions.codes import TxnResult, TxnState

CTP = {"producers": 1, "partitions": 1, "input_records": 2, "transactions": 3}




def _meta(state: TxnState, epoch: int, **changes: Any) -> TxnMetadata:
    return TxnMetadata(True, 0, -1, epoch, -1, int(state), False)._replace(**changes)


# --- switched on by the bound and the switch only ---------------------------------------------------

def test_without_the_bound_and_the_switch_nothing_of_the_mixin_is_listed_or_shown() -> None:
    m = machine("kafka-3.6-3.9", **CTP)
    assert not (set(m.actions) & (LATE_ACTIONS | TV_ACTIONS))
    fields = m.fields(next(iter(m.init_states())))
    assert not any(k in fields for k in ("late_end_txn", "faults.endtxn_timeouts", "producer[0].tv"))


def test_the_bound_lists_the_late_endtxn_rules_and_tv2_the_empty_completion() -> None:
    tv1 = machine("kafka-3.6-3.9", **CTP, endtxn_timeouts=1)
    assert {"EndTxnTimesOut", "StaleEndTxnArrives"} <= set(tv1.actions) and "CompleteEmptyTransaction" not in tv1.actions
    tv2 = machine("kafka-4.0", **CTP, endtxn_timeouts=1)
    assert LATE_ACTIONS <= set(tv2.actions)
    assert "late_end_txn" in tv1.fields(next(iter(tv1.init_states())))


def test_eoscheck_list_documents_the_new_bounds_with_their_references() -> None:
    assert "KIP-890" in MODEL.bounds["endtxn_timeouts"].doc and MODEL.bounds["endtxn_timeouts"].default == 0
    assert MODEL.bounds["exhausted_epochs"].default == 1
    assert "KIP-890" in MODEL.switches["client_tv_change"].doc
    done = subprocess.run([sys.executable, "-m", "eoscheck.checker.cli", "list"], capture_output=True, text=True,
                          check=False, timeout=120)
    assert done.returncode == 0 and "endtxn_timeouts" in done.stdout and "exhausted_epochs" in done.stdout


# --- the request the client gives up on --------------------------------------------------------------

def test_the_timed_out_request_is_the_one_the_client_would_send() -> None:
    p = tx.new_producer(1)._replace(phase=TXN_IN_TXN, producer_id=4, epoch=1, offsets=2)
    assert end_request(p, consume=True) == TxnResult.COMMIT
    assert end_request(p._replace(offsets=1), consume=True) is None  # not ready to commit
    m = machine("kafka-3.6-3.9", **CTP, endtxn_timeouts=1)
    out = m.end_txn_times_out(t=0, producer=p)
    assert out["late_end_txn"] == EndTxnRequest(0, 4, 1, int(TxnResult.COMMIT), 0)
    # an abort of a transaction with no partition is local: no request to time out
    assert m.end_txn_times_out(t=0, producer=p._replace(phase=TXN_ABORTABLE, offsets=0)) is None


def test_tv1_a_late_commit_ends_the_next_transaction_of_the_same_epoch() -> None:
    m = machine("kafka-3.6-3.9", **CTP, endtxn_timeouts=1)
    late = EndTxnRequest(0, 0, 0, int(TxnResult.COMMIT), 0)
    out = m.stale_end_txn_arrives(msg=late, txn=_meta(TxnState.ONGOING, 0, partitions=(0,)), next_producer_id=1)
    assert out["error"] == Errors.NONE and out["txn"].state == TxnState.PREPARE_COMMIT
    assert out["txn_log"].state == TxnState.PREPARE_COMMIT  # written to __transaction_state
    # before the retry: the retry meets the completed transaction
    done = m.stale_end_txn_arrives(msg=late, txn=_meta(TxnState.COMPLETE_COMMIT, 0), next_producer_id=1)
    assert done == {"result": "COMMIT", "error": int(Errors.NONE)}


def test_tv2_a_late_request_is_a_retry_or_fenced_never_a_new_end() -> None:
    m = machine("kafka-4.0", **CTP, endtxn_timeouts=1)
    late = EndTxnRequest(0, 0, 0, int(TxnResult.COMMIT), 2)
    retry = m.stale_end_txn_arrives(msg=late, txn=_meta(TxnState.COMPLETE_COMMIT, 1, last_epoch=0, tv=2),
                                    next_producer_id=1)
    assert retry == {"result": "COMMIT", "error": int(Errors.NONE)}
    fenced = m.stale_end_txn_arrives(msg=late, txn=_meta(TxnState.ONGOING, 1, partitions=(0,), tv=2),
                                     next_producer_id=1)
    assert fenced == {"result": "COMMIT", "error": int(Errors.PRODUCER_FENCED)}


def test_a_tv2_abort_of_an_empty_transaction_completes_without_markers() -> None:
    m = machine("kafka-4.0", **CTP, endtxn_timeouts=1)
    out = m.complete_empty_transaction(txn=_meta(TxnState.PREPARE_ABORT, 2, tv=2))
    assert out["txn"].state == TxnState.COMPLETE_ABORT and out["txn_log"].state == TxnState.COMPLETE_ABORT


def _reaches(m: EosMachine, action: str) -> list[tuple[Any, tuple, Any]]:
    return [(s, step, t) for s, step, t in reachable_steps(m) if step[0] == action]


def test_tv1_explored_a_late_commit_ends_a_transaction_that_never_sent_its_offsets() -> None:
    m = machine("kafka-3.6-3.9", **CTP, endtxn_timeouts=1)
    ended = [(s, t) for s, step, t in _reaches(m, "StaleEndTxnArrives") if m.view(t).txn[0].state != m.view(s).txn[0].state]
    assert ended and all(m.view(t).txn[0].state == TxnState.PREPARE_COMMIT for _, t in ended)
    assert any(m.view(s).producer[0].offsets < 2 for s, _ in ended)  # the next transaction, unfinished


def test_tv2_explored_a_late_request_only_ever_ends_its_own_transaction() -> None:
    m = machine("kafka-4.0", **CTP, endtxn_timeouts=1)
    late = _reaches(m, "StaleEndTxnArrives")
    assert late
    moved = [(s, step, t) for s, step, t in late if m.view(s).txn[0] != m.view(t).txn[0]]
    for s, step, _ in moved:
        # the copy is current only while its own transaction is open: every EndTxn bumps the epoch
        producer = m.view(s).producer[0]
        assert step[2] == m.view(s).txn[0].epoch == producer.epoch and producer.phase in (TXN_IN_TXN, TXN_ABORTABLE)
    assert any(m.view(s).txn[0] == m.view(t).txn[0] and step[-1] == Errors.NONE for s, step, t in late)  # a retry


def test_memoised_and_unmemoised_agree_with_late_endtxn_and_tv_changes() -> None:
    def make(memoize: bool = True) -> EosMachine:
        from eoscheck.model.machines.eos_model import BOUNDS
        from eoscheck.model.protocol import VARIANTS
        bounds = {name: b.default for name, b in BOUNDS.items()} | CTP | {"endtxn_timeouts": 1, "transactions": 2}
        return EosMachine(VARIANTS["kafka-3.6-3.9"].protocol.with_(client_tv_change="upgrade"), bounds,
                          memoize=memoize)
    compare_memo(make, 20_000)


# --- the client's transaction version ----------------------------------------------------------------

def test_a_client_upgrades_once_between_transactions_and_its_endtxn_then_bumps() -> None:
    m = EosMachine(machine("kafka-3.6-3.9").protocol.with_(client_tv_change="upgrade"),
                   machine("kafka-3.6-3.9", **CTP).bounds)
    assert "ClientTransactionVersion" in m.actions and m.server_tv2
    changes = _reaches(m, "ClientTransactionVersion")
    assert changes and all(m.view(s).producer[0].tv == 0 and m.view(t).producer[0].tv == 2 for s, _, t in changes)
    assert all(m.view(s).producer[0].phase == TXN_READY for s, _, _ in changes)
    ends = [(s, t) for s, step, t in _reaches(m, "EndTxn") if step[-1] == Errors.NONE]
    assert any(m.view(s).producer[0].tv == 2 and m.view(t).txn[0].epoch == m.view(s).txn[0].epoch + 1
               for s, t in ends)  # a TV2 EndTxn bumps the epoch
    assert any(m.view(s).producer[0].tv == 0 and m.view(t).txn[0].epoch == m.view(s).txn[0].epoch for s, t in ends)
    assert "producer[0].tv" in m.fields(next(iter(m.init_states())))


@pytest.mark.parametrize(("variant", "change", "needle"), [
    ("kafka-4.0", "upgrade", "client_tv_change=upgrade needs transaction_version=tv1"),
    ("kafka-3.6-3.9", "downgrade", "client_tv_change=downgrade needs transaction_version=tv2"),
])
def test_a_change_the_variant_cannot_start_from_is_refused_in_one_line(variant: str, change: str,
                                                                       needle: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=needle):
        EosMachine(machine(variant).protocol.with_(client_tv_change=change), machine(variant, **CTP).bounds)
    done = subprocess.run([sys.executable, "-m", "eoscheck.checker.cli", "check", "--model", "kafka.eos", "--variant",
                           variant, "--set", f"client_tv_change={change}", "--no-progress", "--out", str(tmp_path)],
                          capture_output=True, text=True, check=False, timeout=120)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and needle in lines[0] and "Traceback" not in done.stderr


def test_a_tv2_client_does_not_bump_with_initproducerid_after_an_abort() -> None:
    m = machine("kafka-3.6-3.9", **CTP)
    p = tx.new_producer(1)
    assert m.bumps_after_abort(p) and not m.bumps_after_abort(p._replace(tv=2))


# --- exhausted epochs ---------------------------------------------------------------------------------

def test_exhausted_epochs_zero_explores_no_exhausted_epoch_and_no_rotation() -> None:
    bounds = {**CTP, "input_records": 0, "transactions": 4, "max_epoch": 4}
    full = machine("kafka-4.0", **bounds)
    cut = machine("kafka-4.0", **bounds, exhausted_epochs=0)
    assert max(full.view(t).txn[0].epoch for _, _, t in reachable_steps(full)) == 4
    assert any(full.view(t).txn[0].producer_id != 0 for _, _, t in reachable_steps(full))  # rotated at the exhausted epoch
    assert max(cut.view(t).txn[0].epoch for _, _, t in reachable_steps(cut)) == 2
    assert all(cut.view(t).txn[0].producer_id == 0 for _, _, t in reachable_steps(cut))


# --- the group: TaskMigrated ----------------------------------------------------------------------------

def test_lost_tasks_make_the_member_rejoin_and_learn_nothing_meanwhile() -> None:
    group, members = initial_group(2)
    lost = lose_tasks(members[0])
    assert not lost.owns and must_rejoin(lost, group) and on_assignment(lost._replace(generation=0), group) is None
    joined, _ = rejoin(lost, group, 0, 2)
    assert not joined.lost and joined.member_id != lost.member_id


def test_a_fenced_offset_commit_loses_the_members_tasks() -> None:
    m = machine("kafka-3.0-3.5", producers=2, members=2, input_records=1, partitions=1, rebalances=1,
                transactions=2, rejoins=1, max_epoch=3)
    refused = [(s, step, t) for s, step, t in reachable_steps(m) if step[0] == "TxnOffsetCommit" and step[-1] in TASK_MIGRATED]
    assert refused
    for s, step, t in refused:
        member = m.view(t).member[step[1]]
        assert member.lost and not member.owns
    # a lost member rejoins with a new member id before it processes anything again
    assert any(step[0] == "Rejoin" and m.view(s).member[step[1]].lost for s, step, _ in reachable_steps(m))
    assert not any(step[0] in ("OffsetFetch", "BeginTransaction") and m.view(s).member[step[1]].lost
                   for s, step, _ in reachable_steps(m))
