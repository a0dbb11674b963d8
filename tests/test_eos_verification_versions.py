"""kafka.eos's KIP-890 verification answers per Kafka version (KAFKA-16314, 3.8.0): the coordinator's
answer for a partition outside the transaction (``verification_abortable``) and the client's Produce
version (``client_transaction_abortable``: v11+ from 3.8.0), as AddPartitionsToTxnManager converts them."""

from __future__ import annotations

import pytest
from eoscheck.checker.compose.testing import reachable_steps
from eoscheck.model.errors import Errors
from eoscheck.model.machines.eos import EosMachine, machine
from eoscheck.model.machines.eos_model import BOUNDS
from eoscheck.model.producer import transactional as tx
from eoscheck.model.protocol import KAFKA_3_6, KAFKA_3_8, VARIANTS, Protocol
from eoscheck.model.state import TXN_ABORTABLE, ProduceResponse, TxnMetadata, TxnPartitionState
from eoscheck.model.transactions.codes import NO_PENDING, TxnState

EMPTY_LEADER = TxnPartitionState((), 0, ())
#: (broker, client) -> the answer to a Produce for a partition outside the transaction
OUTSIDE = {
    (KAFKA_3_6, KAFKA_3_6): Errors.INVALID_TXN_STATE,  # 3.6-3.7 on both sides
    (KAFKA_3_8, KAFKA_3_8): Errors.TRANSACTION_ABORTABLE,  # 3.8+ on both sides
    (KAFKA_3_8, KAFKA_3_6): Errors.INVALID_TXN_STATE,  # a 3.8 broker down-converts for Produce <= v10
    (KAFKA_3_6, KAFKA_3_8): Errors.INVALID_TXN_STATE,  # a 3.7 coordinator has no TRANSACTION_ABORTABLE
}


def _mixed(broker: Protocol, client: Protocol) -> Protocol:
    return broker.with_(client_transaction_abortable=client.client_transaction_abortable)


def _machine(protocol: Protocol) -> EosMachine:
    return EosMachine(protocol, {name: b.default for name, b in BOUNDS.items()})


def _meta(state: TxnState, epoch: int = 3, partitions: tuple[int, ...] = (1,)) -> TxnMetadata:
    return TxnMetadata(True, 10, 10, epoch, -1, int(state), False, NO_PENDING, partitions)


@pytest.mark.parametrize(("broker", "client"), list(OUTSIDE))
def test_the_produce_answer_depends_on_both_versions(broker: Protocol, client: Protocol) -> None:
    m = _machine(_mixed(broker, client))
    verify = lambda meta, epoch: m.produce_verification(0, EMPTY_LEADER, meta, 10, epoch)
    assert verify(_meta(TxnState.ONGOING), 3) == OUTSIDE[(broker, client)]
    assert verify(_meta(TxnState.ONGOING, partitions=(0,)), 3) == Errors.NONE
    # the rest is the same everywhere: a fenced epoch is INVALID_PRODUCER_EPOCH (not PRODUCER_FENCED), a
    # transaction completing is the retriable NOT_ENOUGH_REPLICAS
    assert verify(_meta(TxnState.ONGOING), 2) == Errors.INVALID_PRODUCER_EPOCH
    assert verify(_meta(TxnState.PREPARE_COMMIT), 3) == Errors.NOT_ENOUGH_REPLICAS


def test_the_named_variants_carry_the_versions() -> None:
    for name in ("kafka-3.6-3.7",):
        p = VARIANTS[name].protocol
        assert not p.verification_abortable and not p.client_transaction_abortable
    for name in ("kafka-3.8-3.9", "kafka-3.6-3.9", "kafka-4.0"):
        p = VARIANTS[name].protocol
        assert p.verification_abortable and p.client_transaction_abortable
    for name in ("kafka-3.0-3.5", "kafka-2.7-2.8"):
        assert not VARIANTS[name].protocol.client_transaction_abortable  # Produce <= v9


def test_the_client_aborts_on_either_answer_alike() -> None:
    """3.6-3.8 ``Sender.failBatch`` -> ``maybeTransitionToErrorState``: neither error is special-cased,
    both make the transaction abortable."""
    m = machine("kafka-3.6-3.7")
    sent = next((m.view(t) for _, step, t in reachable_steps(m, 2_000) if step[0] == "Drain"), None)
    assert sent is not None
    req = sent.requests[0]
    outcomes = {}
    for error in (Errors.INVALID_TXN_STATE, Errors.TRANSACTION_ABORTABLE):
        resp = ProduceResponse(req.client, req.connection, req.record, int(error), -1, 0)
        outcomes[error], _ = tx.on_produce_response(sent.producer[req.client], req.partition, resp, 0, m.cfg)
    assert outcomes[Errors.INVALID_TXN_STATE] == outcomes[Errors.TRANSACTION_ABORTABLE]
    assert outcomes[Errors.INVALID_TXN_STATE].phase == TXN_ABORTABLE


def _answers(variant: str) -> tuple[set[int], int]:
    m = machine(variant, produce_timeouts=1, transactions=2, partitions=1)
    errors, seen = set(), set()
    for s, step, t in reachable_steps(m):
        seen.update((s, t))
        if step[0] == "HandleProduce":
            errors.add(step[-1])
    return errors, len(seen)


def test_explored_the_versions_differ_in_the_answer_only() -> None:
    """A batch given up on (delivery timeout) reaches the leader in the next transaction; 3.6-3.7
    answer INVALID_TXN_STATE where 3.8-3.9 answer TRANSACTION_ABORTABLE, over the same number of states."""
    old, n_old = _answers("kafka-3.6-3.7")
    new, n_new = _answers("kafka-3.8-3.9")
    assert n_old == n_new
    assert Errors.TRANSACTION_ABORTABLE not in old and Errors.TRANSACTION_ABORTABLE in new
    assert (old - {Errors.INVALID_TXN_STATE}) == (new - {Errors.TRANSACTION_ABORTABLE})
