"""KAFKA-20785 (PR 23204, opened August 20, 2026, merged on trunk): under transaction version 2 a coordinator-side
abort (the transaction timeout) bumps the producer's epoch once since KAFKA-19367 (first released in 4.0.1), so the
timed-out producer's EndTxn(COMMIT) at its old epoch passes ``endTransaction``'s epoch check as a retry
(``retryOnEpochBump``). In PrepareAbort the pending CompleteAbort answers CONCURRENT_TRANSACTIONS first (Kafka always
has it pending there: ``sendTxnMarkersCallback`` and the log load call ``prepareComplete``), so the client retries;
in CompleteAbort the COMMIT is INVALID_TXN_STATE (``logInvalidStateTransitionAndReturnError``), which the client makes
fatal, instead of PRODUCER_FENCED. Read at the 4.0.1, 4.1.0, 4.1.1 and 4.2.0-rc1 tags; 4.0.0's fence-abort bumps
twice, so the same EndTxn is neither current nor a retry there. The fix answers such a COMMIT retry in CompleteAbort
PRODUCER_FENCED (``tv2_late_commit_fenced``), for the epoch-bump and the producer-id-overflow retry alike."""

from __future__ import annotations

import pytest
from eoscheck.model.errors import Errors
from eoscheck.model.protocol import VARIANTS
from eoscheck.model.transactions.codes import TxnResult, TxnState
from eoscheck.model.transactions.end_txn import end_txn_tv2
from eoscheck.model.transactions.metadata import TxnMeta, new_metadata
from eoscheck.model.transactions.timeout import abort_timed_out
from spec_pairs import check_spec_pair_member


def _timed_out(double_bump: bool) -> tuple[int, TxnMeta]:
    """A TV2 transaction Ongoing at epoch 0, aborted by the coordinator's timeout: its PrepareAbort."""
    ongoing = new_metadata(0)._replace(epoch=0, state=int(TxnState.ONGOING), partitions=(0,), tv=2)
    out = abort_timed_out(ongoing, max_epoch=32767, tv2=True, tv2_double_bump=double_bump)
    assert out.wrote and out.meta.state == TxnState.PREPARE_ABORT
    return out.meta.epoch, out.meta


@pytest.mark.parametrize(("double_bump", "epoch", "answer"), [(True, 2, Errors.PRODUCER_FENCED),  # 4.0.0
                                                             (False, 1, Errors.INVALID_TXN_STATE)])  # 4.0.1+
def test_the_timed_out_producers_commit_is_fenced_only_with_the_double_bump(double_bump: bool, epoch: int,
                                                                            answer: Errors) -> None:
    got_epoch, prepare_abort = _timed_out(double_bump)
    assert got_epoch == epoch
    # PrepareAbort has CompleteAbort pending in Kafka: the pending check comes first at both
    assert end_txn_tv2(prepare_abort, 0, 0, TxnResult.COMMIT, prepare_pending=True).error == (
        Errors.CONCURRENT_TRANSACTIONS)
    complete_abort = prepare_abort._replace(state=int(TxnState.COMPLETE_ABORT), partitions=())
    assert end_txn_tv2(complete_abort, 0, 0, TxnResult.COMMIT, prepare_pending=True).error == answer
    # the fix makes the single bump's answer a fencing one; with two bumps it was never a retry
    assert end_txn_tv2(complete_abort, 0, 0, TxnResult.COMMIT, late_commit_fenced=True).error == (
        Errors.PRODUCER_FENCED)
    # its ABORT is a retry of the coordinator's with one bump (KAFKA-19367's purpose), fenced with two; the fix
    # leaves it alone
    for fixed in (False, True):
        assert end_txn_tv2(complete_abort, 0, 0, TxnResult.ABORT, late_commit_fenced=fixed).error == (
            Errors.PRODUCER_FENCED if double_bump else Errors.NONE)


def test_the_fix_covers_only_a_commit_retry_in_complete_abort() -> None:
    """The client's own commit retry (CompleteCommit) still succeeds, its abort retry there is still
    INVALID_TXN_STATE, and the overflow retry of a commit in CompleteAbort is fenced like the epoch-bump one."""
    base = new_metadata(0)._replace(epoch=1, last_epoch=0, tv=2)
    commit_done = base._replace(state=int(TxnState.COMPLETE_COMMIT))
    assert end_txn_tv2(commit_done, 0, 0, TxnResult.COMMIT, late_commit_fenced=True).error == Errors.NONE
    assert end_txn_tv2(commit_done, 0, 0, TxnResult.ABORT, late_commit_fenced=True).error == Errors.INVALID_TXN_STATE
    # after a rotation at the exhausted epoch: producer id 1 at epoch 0, the retry under producer id 0 at max - 1
    rotated = base._replace(state=int(TxnState.COMPLETE_ABORT), producer_id=1, prev_producer_id=0, epoch=0)
    for fixed, answer in ((False, Errors.INVALID_TXN_STATE), (True, Errors.PRODUCER_FENCED)):
        assert end_txn_tv2(rotated, 0, 32766, TxnResult.COMMIT, max_epoch=32767,
                           late_commit_fenced=fixed).error == answer


def test_no_named_variant_has_the_fix() -> None:
    assert not any(v.protocol.tv2_late_commit_fenced for v in VARIANTS.values())


@pytest.mark.parametrize(("name", "length"), [("eos-kafka-20785-timeout-abort-commit-kafka-4.0", None),
                                              ("eos-kafka-20785-timeout-abort-commit-kafka-4.0.1", 15),
                                              ("eos-kafka-20785-timeout-abort-commit-leader-add-kafka-4.0.1", 13),
                                              ("eos-tv2-next-txn-joins-completing-kafka-4.0", None),
                                              ("eos-kafka-20785-timeout-abort-commit-kafka-4.2.0-rc1", 15),
                                              ("eos-kafka-20785-timeout-abort-commit-kafka-4.2.0-rc1-fixed", None)])
def test_the_kafka_20785_specs(name: str, length: int | None) -> None:
    check_spec_pair_member(name, "FencedGetsFencingError", length)
