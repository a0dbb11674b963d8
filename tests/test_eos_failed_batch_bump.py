"""A transactional KIP-360 client whose batch fails for any non-fatal reason bumps its epoch after the abort
(``TransactionManager.handleFailedBatch`` -> ``maybeTransitionToErrorState``: epochBumpRequired when
``canBumpEpoch() && !isCompleting()``, the same at every tag 2.5.0 .. 3.9.0 and trunk 2024-10); before
fid15 the model asked for the bump only after OUT_OF_ORDER_SEQUENCE / UNKNOWN_PRODUCER_ID /
INVALID_PRODUCER_EPOCH. A 1.0-2.4 client has no epochBumpRequired."""

from __future__ import annotations

import pytest
from eoscheck.checker.compose.testing import reachable_steps
from eoscheck.model.errors import Errors
from eoscheck.model.machines.eos import machine
from eoscheck.model.producer import client as cl
from eoscheck.model.producer import transactional as tx
from eoscheck.model.state import INFLIGHT, TXN_ABORTABLE, TXN_IN_TXN, ProduceResponse


def _in_flight(variant: str) -> tuple[object, object]:
    """A reachable state of ``variant`` whose producer has a batch in flight, and the machine."""
    m = machine(variant, transactions=1, partitions=1)
    for s, _, _ in reachable_steps(m):
        p = m.view(s).producer[0]
        if p.phase == TXN_IN_TXN and any(b.status == INFLIGHT for b in p.parts[0].batches):
            return m, p
    raise AssertionError("no batch in flight")


@pytest.mark.parametrize(("variant", "bumps"), [("kafka-3.6-3.7", True), ("kafka-2.6", True),
                                                ("kafka-2.4", False)])
@pytest.mark.parametrize("error", [Errors.INVALID_TXN_STATE, Errors.TRANSACTION_ABORTABLE,
                                   Errors.INVALID_PRODUCER_ID_MAPPING])
def test_any_failed_batch_asks_a_kip360_client_for_a_bump(variant: str, bumps: bool, error: Errors) -> None:
    m, p = _in_flight(variant)
    batch = next(b for b in p.parts[0].batches if b.status == INFLIGHT)
    resp = ProduceResponse(0, p.parts[0].connection, batch.record, int(error), -1, 0)
    after, outcome = tx.on_produce_response(p, 0, resp, 0, m.cfg,
                                            ipe_abortable=m.protocol.invalid_producer_epoch_abortable)
    assert outcome == cl.FAILED and after.phase == TXN_ABORTABLE
    assert bool(after.bump_after_abort) == bumps


@pytest.mark.parametrize(("variant", "error"), [("kafka-3.6-3.7", Errors.INVALID_TXN_STATE),
                                                ("kafka-3.8-3.9", Errors.TRANSACTION_ABORTABLE)])
def test_the_verification_refusal_after_a_late_end_txn_asks_for_the_bump(variant: str, error: Errors) -> None:
    """Reachable: a late EndTxn(COMMIT) of the first transaction closes the second one, whose next batch is
    refused by the verification (3.6-3.7 INVALID_TXN_STATE, 3.8+ TRANSACTION_ABORTABLE)."""
    m = machine(variant, transactions=2, partitions=1, endtxn_timeouts=1)
    failed = [(step[-2], m.view(s).producer[0], m.view(t).producer[0]) for s, step, t in reachable_steps(m)
              if step[0] == "HandleProduceResponse" and step[-1] == cl.FAILED]
    assert failed and {e for e, _, _ in failed} == {error}
    for _, before, after in failed:
        assert not before.bump_after_abort and after.phase == TXN_ABORTABLE and after.bump_after_abort
