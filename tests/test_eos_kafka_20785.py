"""KAFKA-20785 (PR 23204, merged August 2026): under transaction version 2 a coordinator-side abort (the
transaction timeout) bumps the producer's epoch once since KAFKA-19367 (first released in 4.0.1), so the timed-out
producer's EndTxn(COMMIT) at its old epoch passes ``endTransaction``'s epoch check as a retry (``retryOnEpochBump``)
and is answered INVALID_TXN_STATE (``logInvalidStateTransitionAndReturnError`` in PrepareAbort / CompleteAbort), which
the client makes fatal, instead of PRODUCER_FENCED. Read at the 4.0.1, 4.1.1 and 4.2.0-rc1 tags; 4.0.0's fence-abort
bumps twice, so the same EndTxn is neither current nor a retry there."""

from __future__ import annotations

import pytest
from eoscheck.model.errors import Errors
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
    complete_abort = prepare_abort._replace(state=int(TxnState.COMPLETE_ABORT), partitions=())
    for meta in (prepare_abort, complete_abort):
        assert end_txn_tv2(meta, 0, 0, TxnResult.COMMIT).error == answer
    # its ABORT is a retry of the coordinator's with one bump (KAFKA-19367's purpose), fenced with two
    assert end_txn_tv2(complete_abort, 0, 0, TxnResult.ABORT).error == (
        Errors.PRODUCER_FENCED if double_bump else Errors.NONE)


@pytest.mark.parametrize(("name", "length"), [("eos-kafka-20785-timeout-abort-commit-kafka-4.0", None),
                                              ("eos-kafka-20785-timeout-abort-commit-kafka-4.0.1", 15),
                                              ("eos-kafka-20785-timeout-abort-commit-kafka-4.2.0-rc1", 15)])
def test_the_kafka_20785_specs(name: str, length: int | None) -> None:
    check_spec_pair_member(name, "FencedGetsFencingError", length)
