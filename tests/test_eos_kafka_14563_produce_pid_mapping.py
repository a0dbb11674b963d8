"""KAFKA-14563's client rule (``client_produce_pid_mapping_fatal``: a batch failed with INVALID_PRODUCER_ID_MAPPING is
fatal, 4.0.0) and the client rules of 4.1.0 kafka.eos declares for the conformance interface (KAFKA-19176's
``client_batch_error_wrapped_abortable``, KAFKA-19250's ``client_abort_abortable_fatal``): the variants that set them,
the producer's reaction, and where kafka.eos's live producer meets the error."""

from __future__ import annotations

import pytest
from eoscheck.checker.compose.testing import reachable_steps
from eoscheck.model.errors import Errors
from eoscheck.model.machines.eos import EosMachine, _may_fail_unfenced
from eoscheck.model.machines.eos_model import BOUNDS
from eoscheck.model.producer import client as cl
from eoscheck.model.producer import transactional as tx
from eoscheck.model.producer.config import ClientConfig
from eoscheck.model.protocol import VARIANTS, Protocol, TransactionVersion
from eoscheck.model.state import TXN_ABORTABLE, TXN_FATAL, ProduceResponse
from spec_pairs import check_spec_pair_member

PAIR = "eos-kafka-14563-produce-pid-mapping-"
PID_MAPPING = int(Errors.INVALID_PRODUCER_ID_MAPPING)


def _eos(protocol: Protocol, **bounds: int) -> EosMachine:
    values = {name: b.default for name, b in BOUNDS.items()}
    values.update(bounds)
    return EosMachine(protocol, values)


def test_the_4_0_client_rule_is_set_by_every_tv2_variant_and_no_other() -> None:
    # 755adf8a56 is an ancestor of 4.0.0 .. 4.2.0-rc1, not of 3.9.1; every TV2 variant is a trunk or release after it
    for name, v in VARIANTS.items():
        tv2 = v.protocol.transaction_version == TransactionVersion.TV2
        assert v.protocol.client_produce_pid_mapping_fatal == tv2, name


@pytest.mark.parametrize("switch", ["client_batch_error_wrapped_abortable", "client_abort_abortable_fatal"])
def test_the_4_1_0_client_rules_are_set_from_4_1_0_and_the_trunks_after_june_2025(switch: str) -> None:
    # 8c71ab03b5 (KAFKA-19176) and b1ea280ab1 (KAFKA-19250): ancestors of 4.1.0, 4.1.1, 4.2.0-rc1, not of 4.0.1
    later = {"kafka-java-coordinator", "kafka-trunk-2025-12", "kafka-trunk-2026-01", "kafka-trunk-2026", "kafka-4.1.0",
             "kafka-4.1.1", "kafka-4.2.0-rc1"}
    assert {name for name, v in VARIANTS.items() if getattr(v.protocol, switch)} == later


def _in_flight(protocol: Protocol) -> tuple[EosMachine, tx.TxnProducer, ProduceResponse]:
    """A producer with one batch in flight on partition 0, and its answer INVALID_PRODUCER_ID_MAPPING."""
    m = _eos(protocol)
    cfg: ClientConfig = m.cfg
    p = tx.with_producer_id(tx.new_producer(1), 7, 3)._replace(phase=tx.TXN_READY)
    p = tx.begin_transaction(p, 1, 0)._replace(added=1)
    drained = tx.drain(p, 0, 0, 0, cfg)
    assert drained is not None
    p, req = drained
    return m, p, ProduceResponse(0, req.connection, req.record, PID_MAPPING, -1, 0)


@pytest.mark.parametrize("fatal", [True, False])
def test_the_producer_reads_the_switch(fatal: bool) -> None:
    protocol = VARIANTS["kafka-4.0"].protocol.with_(client_produce_pid_mapping_fatal=fatal)
    m, p, resp = _in_flight(protocol)
    after, outcome = tx.on_produce_response(p, 0, resp, 0, m.cfg, ipe_abortable=True, pid_mapping_fatal=fatal)
    if fatal:
        assert (after.phase, after.fatal_error, outcome) == (TXN_FATAL, PID_MAPPING, tx.FENCED)
    else:
        # 3.9.1: abortable, and the abort goes straight to InitProducerId (lastError is an InvalidPidMappingException)
        assert (after.phase, after.bump_after_abort, outcome) == (TXN_ABORTABLE, tx.SKIP_END_TXN, cl.FAILED)


def test_fenced_gets_fencing_error_looks_at_such_a_response() -> None:
    # a produce response fails its producer with a non-fencing fatal error when it is INVALID_PRODUCER_ID_MAPPING
    assert _may_fail_unfenced(("HandleProduceResponse", 0, 0, 3, PID_MAPPING, tx.FENCED))
    assert not _may_fail_unfenced(("HandleProduceResponse", 0, 0, 3, int(Errors.NOT_ENOUGH_REPLICAS), cl.RETRIED))


# the 3.9 client rule violates too (fid29b): its skipped abort's InitProducerId(old producer id, exhausted epoch) is
# answered PRODUCER_FENCED, two steps after the 4.0 rule's fatal produce answer
@pytest.mark.parametrize(("name", "length"), [(f"{PAIR}fatal-leader-add-kafka-4.0-dev-2025-01-28", 36),
                                              (f"{PAIR}abortable-leader-add-3.9-client-rule", 38),
                                              ("eos-kafka-18660-rotation-answer-leader-add-kafka-4.0", None)])
def test_the_rotation_pair(name: str, length: int | None) -> None:
    check_spec_pair_member(name, "NoSpuriousFencing", length)


def _read_answers(protocol: Protocol, **bounds: int) -> set[int]:
    """The outcomes of every HandleProduceResponse answered INVALID_PRODUCER_ID_MAPPING."""
    m = _eos(protocol, **bounds)
    return {step[-1] for _, step, _ in reachable_steps(m) if step[0] == "HandleProduceResponse" and step[-2] == PID_MAPPING}


@pytest.mark.parametrize("fatal", [True, False])
def test_an_expired_transactional_id_reaches_the_live_producer_through_the_leaders_add(fatal: bool) -> None:
    """4.0.0 with the leader's add: the producer's id expires between two transactions (removeExpiredTransactionalIds),
    its next batch's add finds no metadata (TransactionCoordinator.scala:403 at 4.0.0) and the batch fails with
    INVALID_PRODUCER_ID_MAPPING: fatal with the switch, abortable (then re-initialised) without."""
    protocol = VARIANTS["kafka-4.0"].protocol.with_(tv2_partition_add="leader", client_produce_pid_mapping_fatal=fatal)
    assert _read_answers(protocol, transactions=2, txn_id_expirations=1) == {tx.FENCED if fatal else cl.FAILED}


@pytest.mark.parametrize("variant", ["kafka-3.8-3.9", "kafka-4.0"])
def test_with_the_clients_add_only_closed_connections_get_it(variant: str) -> None:
    """With the client's AddPartitionsToTxn (every TV1 configuration, and TV2's client-add abstraction) the coordinator
    refuses the add first (KAFKA-18019's fatal answer, or PRODUCER_FENCED), so the verification's
    INVALID_PRODUCER_ID_MAPPING answers only a replaced instance's or a timed-out batch's request, on a connection
    nobody reads (``DROPPED``): the switch changes nothing there."""
    assert _read_answers(VARIANTS[variant].protocol, transactions=2, txn_id_expirations=1, restarts=1) == {cl.DROPPED}
    assert _read_answers(VARIANTS[variant].protocol, transactions=2, max_epoch=2, txn_timeouts=1, restarts=1) == \
        {cl.DROPPED}


def test_the_3_9_client_rules_abort_goes_on_with_a_batch_still_in_flight_or_in_retry() -> None:
    """The counterfactual spec's configuration (``...-abortable-leader-add-3.9-client-rule``): the abort after the
    batch's INVALID_PRODUCER_ID_MAPPING skips EndTxn (step error -2) and, as 3.9.1's ``nextRequest`` holds back only
    an EndTxn, does not wait for the transaction's other batch, which keeps its producer id, epoch and sequence; 164
    distinct states before fid28b, when the skipped abort waited like EndTxn, 168 after (the spec then held)."""
    protocol = VARIANTS["kafka-4.0-dev-2025-01-28-leader-add"].protocol.with_(client_produce_pid_mapping_fatal=False)
    m = _eos(protocol, transactions=4, max_epoch=3)
    skipped = [(m.view(s).producer[0], m.view(t).producer[0]) for s, step, t in reachable_steps(m)
               if step[0] == "EndTxn" and step[-1] == -2]
    assert skipped
    waiting = [(before, after) for before, after in skipped if any(tx.has_sequence(b) for b in before.parts[0].batches)]
    assert waiting, "the skipped abort waited for every batch with a sequence"
    for before, after in waiting:
        kept = [b for b in before.parts[0].batches if tx.has_sequence(b)]
        assert after.parts[0].batches == tuple(kept)
    # InitProducerId(producer id, epoch) follows every skipped abort, TV2 too (until fid29b this TV2 producer went
    # to READY without it, as ``bumps_after_abort`` is off for TV2)
    assert {after.phase for _, after in skipped} == {tx.TXN_BUMP}


def test_the_skipped_abort_sends_init_producer_id_on_tv2_and_fails_where_it_cannot_be_written() -> None:
    """``abort_skipping_end_txn``: beginCompletingTransaction queues InitProducerId(producer id, epoch) after an
    InvalidPidMappingException whether or not a bump is required (2.5.0 .. 3.9.1); a coordinator below InitProducerId
    v3 (``canBumpEpoch`` false) cannot take those fields, so the client fails with UnsupportedVersionException."""
    protocol = VARIANTS["kafka-4.0-dev-2025-01-28-leader-add"].protocol.with_(client_produce_pid_mapping_fatal=False)
    m, p, resp = _in_flight(protocol)
    failed, _ = tx.on_produce_response(p, 0, resp, 0, m.cfg, ipe_abortable=True)
    tv2 = tx.abort_undrained_batches(failed._replace(tv=2))
    assert not m.bumps_after_abort(tv2)  # a TV2 EndTxn would carry the bump: not this abort
    bumping = tx.abort_skipping_end_txn(tv2, can_bump_epoch=True, cfg=m.cfg)
    assert (bumping.phase, bumping.txn, tx.init_request(bumping)) == (tx.TXN_BUMP, 1, (7, 3))
    unwritable = tx.abort_skipping_end_txn(tv2, can_bump_epoch=False, cfg=m.cfg)
    assert (unwritable.phase, unwritable.fatal_error) == (TXN_FATAL, int(Errors.UNSUPPORTED_VERSION))


@pytest.mark.parametrize(("init_producer_id", "phase", "error"), [("kip360-shipped", tx.TXN_BUMP, -2),
                                                                   ("pre-kip360", TXN_FATAL, -3)])
def test_the_end_txn_rule_asks_whether_the_coordinator_can_bump(init_producer_id: str, phase: int, error: int) -> None:
    """kafka.eos's EndTxn rule gives the skipped abort ``can_bump_epoch`` (a KIP-360 client and a coordinator with
    InitProducerId v3): a 3.9 client with a pre-2.5 coordinator fails (error -3) instead of sending the request."""
    m, p, resp = _in_flight(VARIANTS["kafka-3.8-3.9"].protocol.with_(init_producer_id=init_producer_id))
    failed, _ = tx.on_produce_response(p, 0, resp, 0, m.cfg, ipe_abortable=True)
    assert tx.skips_end_txn(failed)
    view = m.view(next(iter(m.init_states())))
    out = m.end_transaction(producer=failed, txn=view.txn[0], next_producer_id=view.next_producer_id)
    assert (out["producer"].phase, out["error"]) == (phase, error)
