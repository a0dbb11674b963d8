"""The exactly-once pipeline machine: each variant's verdict at the smallest bounds, and the stories."""

import json

import pytest
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.fingerprint import check_state
from eoscheck.model.machines.eos_pipeline import MODEL, PROPERTIES

EOS = ("NoDuplicateOutput", "OffsetsAgreeWithOutput", "NoHangingTransaction", "ValidTxnTransitions")


def run(variant, properties=None, **bounds):
    m = MODEL.machine(variant, bounds=bounds)
    return m, explore(m, ExploreOptions(strategy="bfs", properties=properties, stop_at_first=False))


def steps(trace):
    return [t.step for t in trace if t.step is not None]


def test_model_def_matches_machine_and_states_are_plain():
    m = MODEL.machine(bounds={"failovers": 1, "produce_timeouts": 1})
    assert set(m.properties()) == set(PROPERTIES) == set(MODEL.properties)
    frontier, seen = list(m.init_states()), set()
    for _ in range(8):  # every state within 8 steps: ints, bools and tuples only; fields JSON-able
        nxt = []
        for s in frontier:
            check_state(s)
            json.dumps(m.fields(s))
            for step, t in m.successors(s):
                assert step[0] in m.actions and len(step) - 1 == len(m.actions[step[0]])
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    assert len(seen) > 500


@pytest.mark.parametrize("variant", ["eos-beta-kip447", "eos-beta-2.5", "eos-alpha-kip447"])
def test_kip447_variants_hold_everything(variant):
    _, r = run(variant)
    assert r.verdict == "holds", [v.property for v in r.violations]
    assert r.stats.distinct > 1000


def test_per_partition_producers_keep_exactly_once_before_kip447():
    _, r = run("eos-alpha-pre-kip447", properties=EOS)
    assert r.verdict == "holds"
    # a removed member still commits its offsets: harmless here, the epoch fence protects the new owner
    _, r = run("eos-alpha-pre-kip447", properties=("ZombieNeverCommitsOffsets",))
    assert r.verdict == "violated"


def test_per_thread_producers_before_kip447_duplicate_output():
    _m, r = run("eos-beta-pre-kip447", properties=("NoDuplicateOutput", "ZombieNeverCommitsOffsets"))
    found = {v.property: v for v in r.violations}
    assert set(found) == {"NoDuplicateOutput", "ZombieNeverCommitsOffsets"}
    # story 1: the new owner fetches a stale committed offset while the old owner's offsets are pending
    trace = found["NoDuplicateOutput"].trace
    fetch = next(k for k, t in enumerate(trace) if t.step == ("OffsetFetch", 1))
    assert trace[fetch].state.group.pending, "instance 1 fetched while offsets were pending"
    # story 2: a member removed by a session timeout commits its offsets
    assert ("SessionTimeout", 0) in steps(found["ZombieNeverCommitsOffsets"].trace)


def test_require_stable_alone_does_not_stop_the_zombie_without_generation_checks():
    m = MODEL.machine("eos-beta-pre-kip447", switches={"require_stable": "always"})
    r = explore(m, ExploreOptions(strategy="bfs", properties=("ZombieNeverCommitsOffsets",)))
    assert r.verdict == "violated"


def test_timeout_abort_without_epoch_bump_breaks_atomicity_and_hangs():
    _, r = run("timeout-abort-no-bump", properties=("OffsetsAgreeWithOutput", "NoHangingTransaction"))
    found = {v.property: v for v in r.violations}
    assert set(found) == {"OffsetsAgreeWithOutput", "NoHangingTransaction"}
    assert ("AbortTimedOutTransaction", 0) in steps(found["OffsetsAgreeWithOutput"].trace)
    # the hanging transaction: the produce request arrives after the abort marker
    hang = steps(found["NoHangingTransaction"].trace)
    assert hang.index(("WriteTxnMarker", 0, "output")) < hang.index(("ProduceArrives", 0, 0))


def test_kip890_verification_stops_the_hang_but_not_the_lost_record():
    _, r = run("timeout-abort-no-bump-kip890", properties=("OffsetsAgreeWithOutput", "NoHangingTransaction"),
               instances=1)
    assert {v.property for v in r.violations} == {"OffsetsAgreeWithOutput"}


def test_coordinator_failover_keeps_exactly_once():
    _, r = run("eos-beta-kip447", records=2, failovers=1, instances=1)
    assert r.verdict == "holds", [v.property for v in r.violations]


def test_without_the_coordinator_epoch_check_a_stale_commit_marker_commits_the_next_transaction():
    _, r = run("no-coordinator-epoch-check", properties=("OffsetsAgreeWithOutput",), records=2, failovers=1,
               instances=1)
    (v,) = r.violations
    s = steps(v.trace)
    failover = s.index(("TxnCoordinatorFailover",))
    stale = next(k for k, st in enumerate(s) if st[0] == "StaleTxnMarkerArrives")
    # the stale marker lands after the new coordinator completed the transaction and a new one wrote output
    assert failover < s.index(("ProduceArrives", 0, 1), failover) < stale
    assert v.trace[-1].state.coordinator_epoch == 1


def test_late_produce_after_client_abort_hangs_and_duplicates_before_kip890():
    """KIP-890's motivation: a produce that timed out on the client arrives after the ABORT marker."""
    _, r = run("eos-beta-kip447", properties=("NoHangingTransaction", "NoDuplicateOutput"), produce_timeouts=1,
               instances=1)
    found = {v.property: v for v in r.violations}
    assert set(found) == {"NoHangingTransaction", "NoDuplicateOutput"}
    dup = steps(found["NoDuplicateOutput"].trace)
    # the late batch (old epoch) lands after the abort marker, before the bumped epoch's first batch
    timeout = dup.index(("ProduceTimesOut", 0))
    bump = dup.index(("InitProducerId", 0), timeout)
    marker = dup.index(("WriteTxnMarker", 0, "output"), timeout)
    late = dup.index(("ProduceArrives", 0, 0), timeout)
    assert marker < late and bump < late


@pytest.mark.parametrize("variant", ["kip890-verification", "kip890-tv2", "tv2-without-verification"])
def test_kip890_parts_each_stop_the_late_produce(variant):
    _, r = run(variant, produce_timeouts=1, instances=1)
    assert r.verdict == "holds", [v.property for v in r.violations]


def test_without_the_kip360_client_bump_verification_alone_lets_the_late_batch_join_the_next_transaction():
    m = MODEL.machine("kip890-verification", switches={"client_epoch_bump_after_abort": False},
                      bounds={"produce_timeouts": 1, "instances": 1})
    r = explore(m, ExploreOptions(strategy="bfs", properties=("NoDuplicateOutput",)))
    assert r.verdict == "violated"


def test_kafka_0_11_per_partition_producers_lose_atomicity_through_the_timeout_abort():
    _, r = run("kafka-0.11-eos-alpha", properties=("OffsetsAgreeWithOutput",), instances=1)
    (v,) = r.violations
    assert ("AbortTimedOutTransaction", 0) in steps(v.trace)


def test_kafka_2_4_timeout_abort_bump_keeps_atomicity():
    """KAFKA-6119 (2017) made the timeout abort fence with an epoch bump, long before KIP-360."""
    _, r = run("kafka-2.4-eos-alpha", properties=("OffsetsAgreeWithOutput",), instances=1)
    assert r.verdict == "holds"


def test_stale_end_txn_commits_the_next_transaction_under_tv1_and_is_fenced_under_tv2():
    """KIP-890 part 2's motivation: a timed-out EndTxn(COMMIT) processed after the retry succeeded."""
    _, r = run("kip890-verification", properties=("OffsetsAgreeWithOutput",), endtxn_timeouts=1, records=2,
               instances=1)
    (v,) = r.violations
    s = steps(v.trace)
    assert s.index(("EndTxnTimesOut", 0)) < s.index(("EndTxn", 0, "COMMIT")) < s.index(("ProduceArrives", 0, 1))
    assert s[-2][0] == "StaleEndTxnArrives"
    _m, r = run("kip890-tv2", endtxn_timeouts=1, records=2, instances=1)
    assert r.verdict == "holds" and r.stats.coverage["StaleEndTxnArrives"].distinct > 0


@pytest.mark.parametrize("variant", ["eos-beta-kip447", "timeout-abort-no-bump", "no-coordinator-epoch-check"])
def test_leaders_producer_state_agrees_with_the_log(variant):
    # the pipeline's leaders keep part 1's producer state table: its open transaction
    # (currentTxnFirstOffset) must be the one the log's markers leave open, in every reachable state
    from eoscheck.model.transactions.log import open_transactions

    m = MODEL.machine(variant, bounds={"failovers": 1, "produce_timeouts": 1})
    seen, frontier = set(), list(m.init_states())
    while frontier and len(seen) < 3000:
        s = frontier.pop()
        if s in seen:
            continue
        seen.add(s)
        for log, table in ((s.output, s.leaders[0]), (s.offsets_log, s.leaders[1])):
            opened = dict(open_transactions(log))
            for e in table:
                assert e.current_txn_first_offset == opened.get(e.producer_id, -1), (variant, log, e)
        frontier.extend(t for _, t in m.successors(s))
    assert len(seen) > 100


def _phases_after_refused_produce(variant, refused):
    """The phases an instance moves to (reachable, one record and instance) when its produce is answered
    while ``refused(state, app)`` holds of the state the ProduceArrives step leaves."""
    from eoscheck.model.machines.eos_pipeline import Phase
    m = MODEL.machine(variant, bounds={"records": 1, "instances": 1})
    seen = set(m.init_states())
    todo, phases = list(seen), set()
    while todo:
        s = todo.pop()
        if not m.within_bounds(s):
            continue
        for step, t in m.successors(s):
            if step[0] == "ProduceArrives":
                a, b = s.apps[step[1]], t.apps[step[1]]
                if a.phase == Phase.AWAIT_PRODUCE and b.phase != Phase.AWAIT_PRODUCE and refused(s, a):
                    phases.add(Phase(b.phase).name)
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return phases


def _phases_after_stale_epoch_produce(variant):
    """The phases an instance moves to when its produce is refused for a stale epoch (reachable)."""
    # OUTPUT's leader holds the only transactional id
    return _phases_after_refused_produce(variant, lambda s, a: s.leaders[0][0].epoch > a.producer_epoch)


def test_invalid_producer_epoch_on_produce_is_abortable_since_2_7():
    # fidelity audit C6: InvalidProducerEpochException (2.7+) is abortable; 2.4 fenced the producer
    assert _phases_after_stale_epoch_produce("eos-beta-kip447") == {"ABORT"}
    assert _phases_after_stale_epoch_produce("kafka-2.4-eos-alpha") == {"FENCED"}


def test_the_verification_uses_kafka_eos_rule_review_13():
    """Review 13: ``_produce_check``'s verification is kafka.eos's (``verify_partitions`` and
    AddPartitionsToTxnManager's conversion): a fenced epoch is INVALID_PRODUCER_EPOCH, not
    INVALID_TXN_STATE; a transaction completing is retried (NOT_ENOUGH_REPLICAS for a produce,
    CONCURRENT_TRANSACTIONS for TxnOffsetCommit); only a partition outside the transaction is INVALID_TXN_STATE."""
    from eoscheck.model.errors import Errors as E
    from eoscheck.model.machines.eos_pipeline import OFFSETS, OUTPUT
    from eoscheck.model.transactions.codes import NO_PENDING, TxnState
    m = MODEL.machine("kip890-verification")
    s0 = next(iter(m.init_states()))
    base = s0.txns[0]._replace(exists=True, producer_id=m.pid_of(0), epoch=2, pending_state=NO_PENDING)

    def check(state, partitions, partition, epoch):
        meta = base._replace(state=int(state), partitions=partitions)
        return m._produce_check(s0._replace(txns=(meta, *s0.txns[1:])), partition, 0, epoch)

    assert check(TxnState.ONGOING, (OUTPUT, OFFSETS), OUTPUT, 2) == E.NONE
    assert check(TxnState.ONGOING, (OFFSETS,), OUTPUT, 2) == E.INVALID_TXN_STATE
    assert check(TxnState.ONGOING, (OUTPUT, OFFSETS), OUTPUT, 1) == E.INVALID_PRODUCER_EPOCH  # was INVALID_TXN_STATE
    assert check(TxnState.ONGOING, (OUTPUT,), OFFSETS, 1) == E.INVALID_PRODUCER_EPOCH
    assert check(TxnState.PREPARE_COMMIT, (OUTPUT,), OUTPUT, 2) == E.NOT_ENOUGH_REPLICAS
    assert check(TxnState.PREPARE_COMMIT, (OUTPUT,), OFFSETS, 2) == E.CONCURRENT_TRANSACTIONS


def test_a_batch_the_coordinator_fenced_aborts_like_kafka_eos():
    """Explored: a produce whose epoch the coordinator fenced while the leader has not seen the new epoch
    (the verification refuses it) moves the instance to ABORT (InvalidProducerEpochException, 2.7+), as
    kafka.eos's producer does; before review 13's fix it was ABORT_TASK (INVALID_TXN_STATE)."""
    phases = _phases_after_refused_produce(
        "kip890-verification", lambda s, a: s.txns[0].epoch > a.producer_epoch >= s.leaders[0][0].epoch)
    assert phases == {"ABORT"}
