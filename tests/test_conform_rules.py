"""The rule changes the conformance vectors asked for (issue 13, items 2 and 3), each against the
Kafka behaviour it models."""

from __future__ import annotations

from eoscheck.model.api import coordinator as co
from eoscheck.model.api.protocol import protocol
from eoscheck.model.coordinator.handler import (
    CoordinatorConfig,
    handle_init_producer_id,
)
from eoscheck.model.coordinator.txn_log import NO_METADATA
from eoscheck.model.errors import Errors
from eoscheck.model.registry import MODELS
from eoscheck.model.state import TxnMetadata
from eoscheck.model.transactions.codes import TxnResult, TxnState

E, S, R = Errors, TxnState, TxnResult
SNAPSHOT = protocol("kafka-2024-10")
SHIPPED = CoordinatorConfig(kip360=True, shipped=True, max_epoch=32767, persist_last_epoch=False,
                            persist_prev_producer_id=False)


def meta(state: S = S.EMPTY, pid: int = 10, epoch: int = 1, last: int = -1, **kw) -> TxnMetadata:
    return TxnMetadata(True, pid, kw.pop("prev", pid), epoch, last, int(state), kw.pop("failed", False), **kw)


# --- InitProducerId --------------------------------------------------------------------------


def test_only_one_of_producer_id_and_epoch_is_invalid_request_before_anything_else():
    # KafkaApis refuses it before the coordinator: even a pending transition does not answer first
    for req in ((10, -1), (-1, 2)):
        assert handle_init_producer_id(meta(), True, *req, 99, SHIPPED).error == E.INVALID_REQUEST
        resp, st = co.handle_init_producer_id(co.CoordinatorState(NO_METADATA, 5),
                                              co.InitProducerIdRequest("t", *req), SNAPSHOT)
        assert resp == co.Response(int(E.INVALID_REQUEST), -1, -1) and st.next_producer_id == 5


def test_init_producer_id_errors_answer_minus_one():
    st = co.CoordinatorState(meta(S.PREPARE_ABORT), 5)
    resp, after = co.handle_init_producer_id(st, co.InitProducerIdRequest("t"), SNAPSHOT)
    assert resp == co.Response(int(E.CONCURRENT_TRANSACTIONS), -1, -1) and after == st
    resp, _ = co.handle_init_producer_id(co.CoordinatorState(meta(pid=11, prev=10), 5),
                                         co.InitProducerIdRequest("t", 10, 1), SNAPSHOT)
    assert resp == co.Response(int(E.PRODUCER_FENCED), -1, -1)


def test_init_pid_machine_error_answers_carry_no_ids():
    # kafka.init_producer_id is the preset of kafka.eos: its InitProducerId answers are init_responses
    md = next(m for m in MODELS if m.name == "kafka.init_producer_id")
    machine = md.machine("kafka-shipped", bounds={"clients": 2, "abortable_errors": 1, "transactions": 1})
    seen, frontier, errors = set(), list(machine.init_states()), 0
    while frontier and len(seen) < 3000:
        s = frontier.pop()
        if s in seen:
            continue
        seen.add(s)
        for r in machine.view(s).init_responses:
            if r.error != E.NONE:
                errors += 1
                assert (r.producer_id, r.epoch) == (-1, -1)
        frontier.extend(t for _, t in machine.successors(s))
    assert errors > 0  # the walk did meet error answers


def test_request_checks_in_kafkas_order():
    st = co.CoordinatorState(meta(), 5)
    ask = lambda **kw: co.handle_init_producer_id(st, co.InitProducerIdRequest(**kw), SNAPSHOT)[0].error
    assert ask(transactional_id="") == E.INVALID_REQUEST
    assert ask(transactional_id="t", txn_timeout_ms=0) == E.INVALID_TRANSACTION_TIMEOUT
    assert ask(transactional_id="t", txn_timeout_ms=900001) == E.INVALID_TRANSACTION_TIMEOUT
    assert ask(transactional_id="t", txn_timeout_ms=900000) == E.NONE
    loading = st._replace(loading=True)
    assert co.handle_init_producer_id(loading, co.InitProducerIdRequest("t"), SNAPSHOT)[0].error == \
        E.COORDINATOR_LOAD_IN_PROGRESS
    # a null transactional id: a fresh producer id at epoch 0, the request's ids ignored
    resp, after = co.handle_init_producer_id(st, co.InitProducerIdRequest(None, 3, 4), SNAPSHOT)
    assert resp == co.Response(0, 5, 0) and after.next_producer_id == 6 and after.metadata == st.metadata


def test_producer_fenced_is_down_converted_for_old_requests():
    st = co.CoordinatorState(meta(pid=11, prev=10), 5)
    assert co.handle_init_producer_id(st, co.InitProducerIdRequest("t", 10, 1, version=3), SNAPSHOT)[0].error == \
        E.INVALID_PRODUCER_EPOCH
    assert co.handle_init_producer_id(st, co.InitProducerIdRequest("t", 10, 1, version=4), SNAPSHOT)[0].error == \
        E.PRODUCER_FENCED
    assert co.handle_init_producer_id(st, co.InitProducerIdRequest("t", 10, 1, version=3),
                                      protocol("kafka-2.0-2.4"))[0].error == E.NONE  # pre-KIP-360: no ids in v<3


# --- EndTxn: the transaction version carried by each transaction, TV2 overflow ---------------

from eoscheck.model.transactions.end_txn import end_txn, end_txn_snapshot, end_txn_tv2
from eoscheck.model.transactions.markers import complete_if_done


def test_each_transaction_records_its_version_and_the_metadata_version_picks_the_validation():
    # TV0 transaction, then an upgraded client's EndTxn v5 on it (shouldReturnCorrectlyWhenTransactionVersionUpgraded)
    prep = meta(S.PREPARE_COMMIT, tv=0)
    assert end_txn_snapshot(prep, 10, 1, R.COMMIT, client_tv=2).error == E.CONCURRENT_TRANSACTIONS
    # the later trunk picks by the request's version: the same request is fenced there
    assert end_txn_tv2(prep, 10, 1, R.COMMIT).error == E.PRODUCER_FENCED
    # the upgraded request on an Ongoing TV0 transaction bumps and records TV2 ...
    out = end_txn_snapshot(meta(S.ONGOING, tv=0), 10, 1, R.COMMIT, client_tv=2)
    assert (out.error, out.meta.epoch, out.meta.last_epoch, out.meta.tv) == (E.NONE, 2, 1, 2)
    done, _ = complete_if_done(out.meta)
    # ... and its retry is then validated as TV2 (a retry is epoch + 1 = the metadata's)
    assert end_txn_snapshot(done, 10, 1, R.COMMIT, client_tv=2).error == E.NONE
    assert end_txn_snapshot(done, 10, 2, R.COMMIT, client_tv=2).error == E.PRODUCER_FENCED
    # a downgraded client (TV0) on the same transaction: its validation is still TV2's, no bump
    old = end_txn_snapshot(meta(S.ONGOING, tv=2), 10, 1, R.ABORT, client_tv=0)
    assert (old.meta.epoch, old.meta.tv) == (1, 0)


def test_tv2_epoch_overflow_rotates_the_producer_id_when_the_transaction_completes():
    for rule in (lambda m, *a: end_txn_snapshot(m, *a, client_tv=2, new_producer_id=77),
                 lambda m, *a: end_txn_tv2(m, *a, new_producer_id=77)):
        out = rule(meta(S.ONGOING, epoch=32766, partitions=(0,)), 10, 32766, R.COMMIT)
        assert (out.error, out.meta.producer_id, out.meta.epoch, out.meta.next_producer_id) == (E.NONE, 10, 32767, 77)
        done, wrote = complete_if_done(out.meta._replace(partitions=()))
        assert wrote and (done.producer_id, done.epoch, done.prev_producer_id, done.next_producer_id) == (77, 0, 10, -1)
        # the client's retry with the old id and epoch is recognised (retryOnOverflow): the new pair
        retry = rule(done, 10, 32766, R.COMMIT)
        assert retry.error == E.NONE and (retry.meta.producer_id, retry.meta.epoch) == (77, 0)
        # below the threshold no producer id is taken
        low = rule(meta(S.ONGOING, epoch=32764), 10, 32764, R.COMMIT)
        assert low.meta.next_producer_id == -1 and low.meta.epoch == 32765


def test_tv1_end_txn_never_rotates_and_a_fence_does_not_take_a_producer_id():
    out = end_txn(meta(S.ONGOING, epoch=32766), 10, 32766, R.COMMIT, new_producer_id=77)
    assert out.meta.next_producer_id == -1 and out.meta.epoch == 32766
    fenced = meta(S.ONGOING, epoch=32766, pending_state=int(S.PREPARE_EPOCH_FENCE))
    out = end_txn(fenced, 10, 32767, R.ABORT, is_from_client=False, tv2_bump=True, new_producer_id=77)
    assert out.meta.next_producer_id == -1


def test_has_failed_epoch_fence_is_cleared_when_the_prepare_record_is_written():
    # Kafka clears it in prepareComplete, which the PrepareX append callback runs at once
    failed = meta(S.ONGOING, epoch=2, failed=True, pending_state=int(S.PREPARE_EPOCH_FENCE))
    out = end_txn(failed, 10, 2, R.ABORT, is_from_client=False)
    assert out.wrote and out.meta.state == S.PREPARE_ABORT and out.meta.has_failed_epoch_fence is False
    # a refused EndTxn leaves it
    assert end_txn(failed, 10, 1, R.ABORT).meta.has_failed_epoch_fence is True


def test_a_failed_fence_write_bumps_once_and_the_next_fence_clears_the_flag():
    st = co.CoordinatorState(meta(S.ONGOING, epoch=1, partitions=(0,)), 5)
    req = co.InitProducerIdRequest("t")
    for _ in range(2):
        resp, st = co.handle_init_producer_id(st, req, SNAPSHOT, append_error=E.NOT_ENOUGH_REPLICAS)
        assert resp.error == E.NOT_ENOUGH_REPLICAS
        assert (st.metadata.epoch, st.metadata.state, st.metadata.has_failed_epoch_fence) == (2, S.ONGOING, True)
    resp, st = co.handle_init_producer_id(st, req, SNAPSHOT)
    assert resp.error == E.CONCURRENT_TRANSACTIONS
    assert (st.metadata.epoch, st.metadata.state, st.metadata.has_failed_epoch_fence) == (2, S.PREPARE_ABORT, False)


# --- item 3 parts: sequence ranges, verification, producer-id blocks, groups, the client -----

from eoscheck.model.api import client as cl
from eoscheck.model.api import group as gr
from eoscheck.model.api import leader as ld
from eoscheck.model.coordinator.producer_ids import (
    ProducerIdBlocks,
    generate_producer_id,
    grant_block,
)
from eoscheck.model.group.metadata import new_group


def _append(st, first, last, **kw):
    return ld.append_batch(st, ld.ProduceBatch(1, 0, first, last, **kw), SNAPSHOT)


def test_a_batch_of_several_records_is_a_sequence_range_at_the_leader():
    st = ld.LeaderState((), 0)
    res, st = _append(st, 0, 2)
    assert (res.result, res.first_offset, res.last_offset) == (ld.APPENDED, 0, 2)
    assert _append(st, 0, 2)[0] == ld.ProduceResult(ld.DUPLICATE, 0, 0, 2)  # the whole range again
    for first, last in ((1, 2), (0, 1), (2, 3)):  # overlaps are not duplicates: out of order
        assert _append(st, first, last)[0].error == E.OUT_OF_ORDER_SEQUENCE_NUMBER
    res, st = _append(st, 3, 3)
    assert res.result == ld.APPENDED and st.log_end_offset == 4
    # ProducerAppendInfo on its own has no duplicate pre-check (ProducerStateManagerTest)
    assert ld.append_batch(st, ld.ProduceBatch(1, 0, 3, 3), SNAPSHOT, check_duplicates=False)[0].error == \
        E.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_verification_refuses_a_first_sequence_above_the_lowest_verified():
    st = ld.start_verification(ld.LeaderState((), 0), 1, 3, 0)
    assert _append(st, 4, 4)[0].error == E.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert _append(st, 3, 4)[0].result == ld.APPENDED
    st = st._replace(now=10)
    assert ld.remove_expired_producers(st, 11).verifications != ()
    assert ld.remove_expired_producers(st, 10).verifications == ()


def test_producer_id_blocks_are_granted_in_request_order():
    st = ProducerIdBlocks(0, (), block_size=3)
    got = []
    for broker in (0, 1, 0, 0, 0):
        g, st = generate_producer_id(st, broker)
        got.append(g.producer_id)
    assert got == [0, 3, 1, 2, 6]
    g, kraft = generate_producer_id(ProducerIdBlocks(0, (), 3), 0, synchronous=False)
    assert g.error == E.COORDINATOR_LOAD_IN_PROGRESS
    assert generate_producer_id(grant_block(kraft, 0), 0, synchronous=False)[0].producer_id == 0


def test_txn_offset_commit_on_an_unknown_group_differs_between_coordinators():
    req = gr.TxnOffsetCommitRequest(5, 1, 10, ((0, 100),))
    assert gr.handle_txn_offset_commit(gr.GroupCoordinatorState(None, 1, new_coordinator=True), req, SNAPSHOT)[0] == \
        E.ILLEGAL_GENERATION
    assert gr.handle_txn_offset_commit(gr.GroupCoordinatorState(None, 1), req, SNAPSHOT)[0] == E.UNKNOWN_MEMBER_ID
    err, st = gr.handle_txn_offset_commit(gr.GroupCoordinatorState(None, 1, new_coordinator=True),
                                          req._replace(generation_id=-1, member_id=0), SNAPSHOT)
    assert err == E.NONE and st.group.pending[0].offset == 100
    # a KIP-848 consumer group: member epoch, not generation; STALE_MEMBER_EPOCH becomes ILLEGAL_GENERATION
    cg = gr.GroupCoordinatorState(new_group(1), 1, member_epochs=((1, 4),), new_coordinator=True)
    assert gr.handle_txn_offset_commit(cg, req._replace(generation_id=4), SNAPSHOT)[0] == E.NONE
    assert gr.handle_txn_offset_commit(cg, req._replace(generation_id=3), SNAPSHOT)[0] == E.ILLEGAL_GENERATION
    assert gr.handle_txn_offset_commit(cg, req._replace(member_id=2, generation_id=4), SNAPSHOT)[0] == \
        E.UNKNOWN_MEMBER_ID


def test_client_sequences_and_produce_errors():
    e = cl.PartitionEntry(7, 0)
    e, _ = cl.assign(e, "r1", 1, SNAPSHOT.max_seq)
    e = cl.acknowledge(e, "r1", 1000, SNAPSHOT.max_seq)
    e, b2 = cl.assign(e, "r2", 2, SNAPSHOT.max_seq)
    assert (b2.base_sequence, e.next_sequence, e.last_acked_offset) == (1, 3, 1000)
    # transactional, state lost to retention: same id and epoch, in-flight from 0
    r = cl.on_produce_error(e, "r2", E.UNKNOWN_PRODUCER_ID, 1010, transactional=True)
    assert r.retry and not r.bump_epoch and (r.entry.in_flight[0].base_sequence, r.entry.next_sequence) == (0, 2)
    # not the retention case: the transactional batch fails (abortable), the partition restarts at 0
    r = cl.on_produce_error(e, "r2", E.UNKNOWN_PRODUCER_ID, 500, transactional=True)
    assert (r.retry, r.abortable, r.reset_partition) == (False, True, True)
    # idempotent, the next expected batch is out of order: bump and re-sequence
    r = cl.on_produce_error(e, "r2", E.OUT_OF_ORDER_SEQUENCE_NUMBER, -1, transactional=False)
    assert r.retry and r.bump_epoch
    bumped = cl.bump_idempotent_epoch(r.entry, SNAPSHOT.max_seq)
    assert (bumped.epoch, bumped.in_flight[0].base_sequence, bumped.next_sequence) == (1, 0, 2)
    assert cl.increment_sequence(2**31 - 1, 100, SNAPSHOT) == 99
    assert cl.on_txn_offset_commit_error(E.FENCED_INSTANCE_ID) == ("abortable", "FencedInstanceIdException")
    assert cl.on_txn_offset_commit_error(E.PRODUCER_FENCED).action == "fatal"
    assert cl.on_txn_offset_commit_error(E.COORDINATOR_NOT_AVAILABLE).action == "retry"


# --- kafka.eos_pipeline: a client's transaction version can change midway --------------------


def _reachable(variant: str, limit: int = 20000):
    from collections import deque

    from eoscheck.model.machines.eos_pipeline import MODEL

    machine = MODEL.machine(variant, bounds={"records": 1})
    seen, frontier, steps = set(), deque(machine.init_states()), []
    while frontier and len(seen) < limit:
        s = frontier.popleft()
        if s in seen:
            continue
        seen.add(s)
        for step, t in machine.successors(s):
            steps.append(step)
            frontier.append(t)
    return seen, steps


def test_a_client_upgrade_midway_mixes_transaction_versions():
    seen, steps = _reachable("tv2-client-upgrade")
    assert ("ClientTransactionVersion", 0, 2) in steps
    # a TV0 transaction completed by one client while the other already sends TV2 EndTxns
    assert any(any(a.tv == 2 for a in s.apps) and any(a.tv == 0 for a in s.apps) for s in seen)
    assert any(m.tv == 2 and m.state == S.COMPLETE_COMMIT for s in seen for m in s.txns)
    assert any(m.tv == 0 and m.state == S.COMPLETE_COMMIT for s in seen for m in s.txns)


def test_without_a_change_every_client_keeps_its_version():
    seen, steps = _reachable("kip890-tv2", 5000)
    assert not any(st[0] == "ClientTransactionVersion" for st in steps)
    assert all(a.tv == 2 for s in seen for a in s.apps)
    seen, _ = _reachable("eos-beta-kip447", 5000)
    assert all(a.tv == 0 and m.tv == 0 for s in seen for a in s.apps for m in s.txns)


def test_a_failed_transactional_batch_moves_later_sequences_down_and_unknown_producer_drops_the_partition():
    e = cl.PartitionEntry(7, 0)
    for name, n in (("a", 2), ("b", 3), ("c", 1)):
        e, _ = cl.assign(e, name, n, SNAPSHOT.max_seq)
    r = cl.on_produce_error(e, "a", E.INVALID_PRODUCER_EPOCH, -1, transactional=True)
    assert r.abortable and not r.retry
    assert [(b.name, b.base_sequence) for b in r.entry.in_flight] == [("b", 0), ("c", 3)] and r.entry.next_sequence == 4
    r = cl.on_produce_error(e, "b", E.UNKNOWN_PRODUCER_ID, 0, transactional=True)  # acked offset -1 < 0: retention
    assert r.retry
    e = cl.acknowledge(e, "a", 5, SNAPSHOT.max_seq)
    r = cl.on_produce_error(e, "b", E.UNKNOWN_PRODUCER_ID, 3, transactional=True)
    assert r.reset_partition and (r.entry.next_sequence, r.entry.last_acked_sequence, r.entry.in_flight) == (0, -1, ())
    # the idempotent producer bumps its epoch on any other failure, and past the delivery timeout
    assert cl.on_produce_error(e, "b", E.INVALID_PRODUCER_EPOCH, -1, transactional=False).bump_epoch
    assert not cl.on_produce_error(e, "b", E.NOT_ENOUGH_REPLICAS, -1, transactional=False).bump_epoch
    assert cl.on_produce_error(e, "b", E.NOT_ENOUGH_REPLICAS, -1, transactional=False, can_retry=False).bump_epoch


def test_a_batch_that_wraps_past_the_largest_sequence_is_still_its_own_duplicate():
    st = ld.LeaderState((), 0)
    top = SNAPSHOT.max_seq
    res, st = ld.append_batch(st, ld.ProduceBatch(1, 0, top - 9, 9), SNAPSHOT)  # 20 records, wrapping
    assert (res.result, res.first_offset, res.last_offset) == (ld.APPENDED, 0, 19)
    assert ld.append_batch(st, ld.ProduceBatch(1, 0, top - 9, 9), SNAPSHOT)[0].result == ld.DUPLICATE
    assert ld.append_batch(st, ld.ProduceBatch(1, 0, 10, 10), SNAPSHOT)[0].result == ld.APPENDED
