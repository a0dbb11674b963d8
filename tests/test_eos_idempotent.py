"""kafka.eos's idempotent-only producers (``model/machines/eos_idempotent.py``): each rule's wiring to
the rooms, budgets and bounds that remove rules, memoisation, and that transactional kafka.eos
configurations are untouched by the mixin."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from eoscheck.checker.compose.testing import compare_memo
from eoscheck.model.errors import Errors
from eoscheck.model.machines.eos import EosMachine, machine
from eoscheck.model.machines.eos_idempotent import IDEMPOTENT_PARTITION as P
from eoscheck.model.machines.eos_idempotent import IN_SYNC, REBUILT, SNAPSHOT, closed
from eoscheck.model.partition.producer_state import find_entry
from eoscheck.model.producer import client as cl
from eoscheck.model.state import (
    INFLIGHT,
    QUEUED,
    RETRY,
    FollowerState,
    IdempotentClient,
    LogRecord,
    PartitionState,
    ProduceRequest,
    Routed,
)
from reachable_states import reachable

#: kafka.eos with idempotent producers only (the preset's fixed bounds)
ONLY = {"producers": 0, "partitions": 0, "idempotent_producers": 1, "max_in_flight": 2,
        "producer_id_expiration": 100}


def idem(variant: str = "kafka-3.0-3.5", memoize: bool = True, **bounds: int) -> EosMachine:
    m = machine(variant, **{**ONLY, **bounds})
    if not memoize:
        return EosMachine(m.protocol, m.bounds, memoize=False)
    return m


def steps(m: EosMachine, s: tuple, action: str) -> list[tuple[tuple, Any]]:
    return [(step, m.view(t)) for step, t in m.successors(s) if step[0] == action]


def request(client: int, record: int, seq: int, *, pid: int = 0, epoch: int = 0, conn: int = 0,
            leader_epoch: int = 0) -> Routed:
    return Routed(P, client, conn, record, ProduceRequest(client, conn, record, pid, epoch, seq, 0, leader_epoch))


def test_no_idempotent_producers_compiles_nothing_of_the_mixin() -> None:
    m = machine("kafka-3.0-3.5", partitions=1)
    assert not {"Send", "IdempotentDrain", "ExpireBatch", "LeaderFailover", "PropagateLogStartOffset"} & set(m.actions)
    assert m.view(next(iter(m.init_states()))).client == ()
    # the transactional producers' fairness (eos_liveness) remains; none of it is the idempotent mixin's
    idem = {"Send", "IdempotentDrain", "IdempotentRequestTimeout", "BumpEpoch", "IdempotentInitProducerId",
            "ExpireBatch"}
    assert m.fairness() and not [f for f in m.fairness() if idem & set(f.actions)]


def test_transactional_state_counts_are_unchanged_by_the_mixin() -> None:
    # tests/test_model_eos.py's EVERYTHING configuration: 99,775 reachable states before the mixin too, and
    # 125,985 since session 28 (fid28): abortUndrainedBatches keeps a retried batch, which the abortable producer
    # resends before EndTxn(ABORT) (abortable states with a batch in flight 6,855 -> 29,093, with none left
    # 12,664 -> 21,522); before, EndTxn failed the retried batch at once. 132,545 since session 29 (fid29d): a
    # batch re-enqueued for a retry may expire in the accumulator (ExpireRetriedBatch); all 6,560 new states have
    # that retry made by RequestTimeout's closed connection (a retry made by an answer, then expired, is a state the
    # in-flight expiry already reached: the answer is dropped)
    everything = {"partitions": 1, "batches": 2, "max_in_flight": 2, "lost_responses": 1, "produce_timeouts": 1,
                  "txn_timeouts": 1, "delete_records": 1, "max_ticks": 1, "coordinator_failovers": 1}
    m = machine("kafka-3.0-3.5", **everything)
    assert len(reachable(m, 200_000)) == 132_545


def test_send_and_drain_use_the_client_room() -> None:
    m = idem()
    s = next(iter(m.init_states()))
    [(step, v)] = steps(m, s, "Send")
    assert step == ("Send", 0) and v.client[0] == cl.send(cl.new_client(0), 0)
    s = m.state(client=(v.client[0],))
    [(step, v)] = steps(m, s, "IdempotentDrain")
    assert step == ("IdempotentDrain", 0, 0, 0, 0)
    assert v.idem_requests == (request(0, 0, 0),)
    assert v.client[0].batches[0].status == INFLIGHT


def test_handle_produce_appends_replicates_and_answers() -> None:
    m = idem(leader_failovers=1)
    follower = (FollowerState(0, ()),)
    s = m.state(client=(cl.new_client(0),), idem_follower=follower, idem_requests=(request(0, 0, 0),))
    [(step, v)] = steps(m, s, "HandleProduce")
    assert step == ("HandleProduce", P, 0, 0, 0, 0, int(Errors.NONE))
    assert v.idem_leader.log == (LogRecord(0, 0, 0, 0, 0, 0),)
    assert find_entry(v.idem_follower[0].producers, 0) == find_entry(v.idem_leader.producers, 0)
    assert v.idem_responses[0].message.base_offset == 0 and not v.idem_requests


def test_a_request_to_an_old_leader_is_refused_and_a_closed_connection_gets_no_answer() -> None:
    m = idem(leader_failovers=1)
    s = m.state(client=(cl.new_client(0),), idem_follower=(FollowerState(0, ()),), leader_epoch=1,
                idem_requests=(request(0, 0, 0),))
    [(step, v)] = steps(m, s, "HandleProduce")
    assert step[-1] == int(Errors.NOT_LEADER_OR_FOLLOWER) and v.idem_leader.log == ()
    s = m.state(client=(cl.new_client(0)._replace(connection=1),),
                idem_requests=(request(0, 0, 0)._replace(connection=closed(0)),))
    [(step, v)] = steps(m, s, "HandleProduce")
    assert step[-1] == int(Errors.NONE) and len(v.idem_leader.log) == 1 and v.idem_responses == ()


def test_transient_error_spends_its_budget_and_appends_nothing() -> None:
    assert len(steps(idem(), idem().state(idem_requests=(request(0, 0, 0),)), "HandleProduce")) == 1
    m = idem(transient_errors=1)
    s = m.state(idem_requests=(request(0, 0, 0),))
    refused = [(step, v) for step, v in steps(m, s, "HandleProduce") if step[-1] == int(Errors.NOT_ENOUGH_REPLICAS)]
    [(_, v)] = refused
    assert v.idem_leader.log == () and v.transient_errors == 1
    assert not [st for st, _ in steps(m, m.state(idem_requests=(request(0, 0, 0),), transient_errors=1),
                                      "HandleProduce") if st[-1] == int(Errors.NOT_ENOUGH_REPLICAS)]


def test_request_timeout_closes_the_connection_and_drops_its_responses() -> None:
    m = idem(lost_responses=1)
    client = cl.drain(cl.send(cl.new_client(0), 0), 0, 0, m.idem_cfg)[0]  # type: ignore[index]
    s = m.state(client=(client,))
    [(step, v)] = steps(m, s, "IdempotentRequestTimeout")
    assert step == ("IdempotentRequestTimeout", 0) and v.client[0].connection == 1
    assert v.client[0].batches[0].status == RETRY
    # while its request is still on the wire the client waits
    assert not steps(m, m.state(client=(client,), idem_requests=(request(0, 0, 0),)), "IdempotentRequestTimeout")
    # a request of the closed connection still in flight is marked closed: its answer will not be sent
    s = m.state(client=(client,), idem_requests=(request(0, 1, 1),))
    [(_, v)] = steps(m, s, "IdempotentRequestTimeout")
    assert v.idem_requests == (request(0, 1, 1)._replace(connection=closed(0)),)
    assert "IdempotentRequestTimeout" not in idem().actions  # no loss, no timeout


def test_init_producer_id_takes_the_allocators_next_id() -> None:
    m = idem(new_producer_ids=1)
    reset = cl.new_client(0)._replace(producer_id=-1, epoch=-1)
    s = m.state(client=(reset,))
    [(step, v)] = steps(m, s, "IdempotentInitProducerId")
    assert step == ("IdempotentInitProducerId", 0, 1) and v.client[0].producer_id == 1 and v.next_producer_id == 2
    assert m.within_bounds(m.state(next_producer_id=2)) and not m.within_bounds(m.state(next_producer_id=3))


def test_the_three_failovers_each_spend_their_budget() -> None:
    m = idem(leader_failovers=1, restarted_replica_failovers=1, snapshot_restored_failovers=1)
    log = tuple(LogRecord(0, r, 0, 0, r, 0) for r in range(3))
    leader = PartitionState(log, 1, ())
    from eoscheck.model.partition.log import rebuild_producer_state
    full = rebuild_producer_state(log, 0, 5)
    s = m.state(idem_leader=leader._replace(producers=full), idem_follower=(FollowerState(0, full),))
    moves = {step[-1]: v for step, v in steps(m, s, "LeaderFailover")}
    assert set(moves) == {IN_SYNC, REBUILT, SNAPSHOT}
    assert all(v.leader_epoch == 1 and v.idem_leader.log_start_offset == 0 for v in moves.values())
    assert moves[IN_SYNC].idem_leader.producers == full
    assert len(moves[SNAPSHOT].idem_leader.producers[0].batches) == 1
    assert moves[IN_SYNC].leader_failovers == 1 and moves[REBUILT].restarted_replica_failovers == 1
    assert moves[IN_SYNC].idem_follower == (FollowerState(1, full),)  # the old leader follows
    [(step, v)] = steps(m, s, "PropagateLogStartOffset")
    assert step == ("PropagateLogStartOffset", P, 1) and v.idem_follower[0].log_start_offset == 1
    assert "LeaderFailover" not in idem().actions


def test_expiry_reads_the_broker_clock_ahead_by_the_skew() -> None:
    entry_log = (LogRecord(0, 0, 0, 0, 0, 0),)
    from eoscheck.model.partition.log import rebuild_producer_state
    leader = PartitionState(entry_log, 0, rebuild_producer_state(entry_log, 0, 5))
    plain = idem(producer_id_expiration=2, max_ticks=2)
    assert not steps(plain, plain.state(idem_leader=leader, now=1), "ExpireProducerIds")
    skewed = idem(producer_id_expiration=2, max_ticks=2, clock_skew=1)
    [(step, v)] = steps(skewed, skewed.state(idem_leader=leader, now=1), "ExpireProducerIds")
    assert step == ("ExpireProducerIds", P) and v.idem_leader.producers == ()


def test_time_waits_for_messages_unless_late_delivery() -> None:
    busy = {"idem_requests": (request(0, 0, 0),)}
    assert not steps(idem(max_ticks=2), idem(max_ticks=2).state(**busy), "Tick")
    late = idem(max_ticks=2, late_delivery=1)
    assert steps(late, late.state(**busy), "Tick")


def test_acked_prefix_starts_in_every_order_of_the_clients() -> None:
    m = idem(idempotent_producers=2, acked_prefix=1)
    starts = [m.view(s) for s in m.init_states()]
    assert len(starts) == 2 and {tuple(r.client for r in v.idem_leader.log) for v in starts} == {(0, 1), (1, 0)}
    assert all(v.client[c].last_acked_seq == 0 and v.client[c].sent == 1 for v in starts for c in range(2))
    assert all(v.next_producer_id == 2 for v in starts)


def test_properties_see_the_idempotent_log() -> None:
    m = idem()
    props = m.properties()
    dup = (LogRecord(0, 0, 0, 0, 0, 0), LogRecord(0, 0, 0, 0, 1, 0))
    assert not props["IdempotentNoDuplicates"].check(m.state(idem_leader=PartitionState(dup, 0, ())))
    fenced = (LogRecord(0, 0, 0, 1, 0, 0), LogRecord(0, 1, 0, 0, 1, 0))
    assert not props["IdempotentFencedEpochNeverWrites"].check(m.state(idem_leader=PartitionState(fenced, 0, ())))
    acked = cl.new_client(0)._replace(sent=1, acked=1)
    assert not props["IdempotentSendOrderNoLoss"].check(m.state(client=(acked,)))
    assert props["IdempotentSendOrderNoLoss"].check(m.state(client=(acked,),
                                                          idem_leader=PartitionState(dup[:1], 0, ())))


@pytest.mark.parametrize("variant", ["kafka-3.0-3.5", "kafka-1.0.0", "kafka-0.11.0.0", "kip360-designed"])
def test_memo_keys_are_complete(variant: str) -> None:
    bounds = {"lost_responses": 1, "transient_errors": 1, "delete_records": 1, "leader_failovers": 1,
              "restarted_replica_failovers": 1, "acked_prefix": 1, "idempotent_records": 2}
    report = compare_memo(lambda memo: idem(variant, memoize=memo, **bounds), max_states=3_000)
    assert report.states >= 1_000


def test_idempotent_and_transactional_producers_run_side_by_side() -> None:
    m = machine("kafka-3.0-3.5", partitions=1, idempotent_producers=1, idempotent_records=1)
    states = reachable(m, 200_000)
    views = [m.view(s) for s in states]
    assert any(v.idem_leader.log and v.leader[0].log for v in views)
    # the allocator is shared: the transactional producer's id follows the idempotent producer's
    assert {v.txn[0].producer_id for v in views if v.txn[0].exists} == {1}
    props = m.properties()
    assert all(props[name].check(s) for s in states for name in ("NoDuplicate", "IdempotentNoDuplicates"))


@pytest.mark.parametrize("variant", ["kafka-3.0-3.5", "kafka-1.0.0"])
def test_idempotent_producers_are_interchangeable(variant: str) -> None:
    from eoscheck.checker.explore.options import ExploreOptions
    from eoscheck.checker.symmetry import check_symmetry
    m = idem(variant, idempotent_producers=2, acked_prefix=1, idempotent_records=1, lost_responses=1,
             delete_records=1, transient_errors=1)
    assert m.has_symmetry()
    report = check_symmetry(m, ExploreOptions(check_deadlock=False))
    assert report.ok and report.orbit_check and report.reduction > 1.9, report.summary()


def test_fields_show_the_idempotent_parts_only_when_there_are_idempotent_producers() -> None:
    off = machine("kafka-3.0-3.5", partitions=1)
    names = set(off.fields(next(iter(off.init_states()))))
    assert not {n for n in names if n.startswith(("idem_", "client[", "leader_epoch", "faults.leader_failovers"))}
    assert "leader[0].log" in names or any(n.startswith("leader[0]") for n in names)
    on = idem(leader_failovers=1)
    names = set(on.fields(next(iter(on.init_states()))))
    assert {"idem_leader.log", "leader_epoch", "faults.leader_failovers", "client[0].batches"} <= names


# --- the client's steps on projections (``shape``: the client without its batches' creation times) ----

#: configurations whose client steps reach every branch the projections touch: retries, expiry (late
#: delivery: in flight too), request timeouts, resets (0.11, 1.0), KIP-360 bumps (both designs), two clients
PROJECTED = [
    ("kafka-3.0-3.5", {"idempotent_records": 4, "max_in_flight": 3, "lost_responses": 1, "delivery_timeout": 3,
                       "max_ticks": 5, "producer_id_expiration": 3}),
    ("kafka-3.0-3.5", {"idempotent_records": 3, "late_delivery": 1, "max_ticks": 3, "delivery_timeout": 2,
                       "producer_id_expiration": 2, "clock_skew": 1, "lost_responses": 1}),
    ("kafka-1.0.0", {"idempotent_records": 3, "lost_responses": 1, "delete_records": 1, "transient_errors": 1,
                     "max_ticks": 2, "delivery_timeout": 2}),
    ("kafka-0.11.0.0", {"idempotent_records": 3, "lost_responses": 1, "leader_failovers": 1,
                        "restarted_replica_failovers": 1, "max_ticks": 2, "delivery_timeout": 1}),
    ("kip360-designed", {"idempotent_records": 3, "lost_responses": 2, "delete_records": 1, "max_ticks": 2,
                         "delivery_timeout": 1}),
    ("kafka-3.0-3.5", {"idempotent_producers": 2, "idempotent_records": 2, "lost_responses": 1, "max_ticks": 2,
                       "delivery_timeout": 1}),
]
#: the client's steps that read and write ``client[c]:shape``
SHAPED = ("IdempotentDrain", "ExpireBatch", "IdempotentRequestTimeout", "IdempotentInitProducerId",
          "ResolveSequences", "BumpEpoch")


def _whole_client_steps(m: EosMachine, v: Any, c: int) -> list[tuple[tuple, Any]]:
    """The steps of ``SHAPED`` on client ``c`` and its client after each, as the rules computed them on
    the whole client before they read projections (their preconditions and ``producer.client`` calls)."""
    cfg, client, now = m.idem_cfg, v.client[c], v.now
    out: list[tuple[tuple, Any]] = []
    drained = cl.drain(client, c, now, cfg)
    if drained is not None:
        new, req = drained
        out.append((("IdempotentDrain", c, req.record, req.seq, req.epoch), new))
    batches = client.batches
    if batches and not (now - batches[0].created < cfg.delivery_timeout and not any(b.status == INFLIGHT
                                                                                     for b in batches)):
        waiting = next((i for i, b in enumerate(batches) if b.status != INFLIGHT and cl.is_expired(b, now, cfg)), -1)
        if waiting >= 0:
            out.append((("ExpireBatch", c, batches[waiting].record), cl.expire_batch(client, waiting, cfg)))
        if m.late_delivery:
            sent = next((i for i, b in enumerate(batches) if b.status == INFLIGHT and cl.is_expired(b, now, cfg)), -1)
            if sent >= 0:
                out.append((("ExpireBatch", c, batches[sent].record), cl.expire_in_flight_batch(client, sent, cfg)))
    on_way = {m_.record for m_ in v.idem_requests + v.idem_responses if m_.client == c and m_.connection == client.connection}
    if m.bounds.get("lost_responses", 0) and any(b.status == INFLIGHT and b.record not in on_way for b in batches):
        out.append((("IdempotentRequestTimeout", c), cl.connection_closed(client, m.late_delivery)))
    no_pid = client.producer_id < 0 and not client.fatal
    if no_pid:
        out.append((("IdempotentInitProducerId", c, v.next_producer_id), cl.init_producer_id(client, v.next_producer_id)))
    resolve = not no_pid and client.unresolved >= 0 and not any(b.status != QUEUED for b in batches)
    if resolve:
        out.append((("ResolveSequences", c), cl.resolve_sequences(client, cfg)))
    if not no_pid and not resolve and client.epoch_bump_required and cfg.version == "kip360" and (
            cfg.epoch_bump == "resequence_inflight" or not any(b.status == INFLIGHT for b in batches)):
        out.append((("BumpEpoch", c), cl.bump_epoch(client, cfg)))
    return out


@pytest.mark.parametrize(("variant", "bounds"), PROJECTED, ids=[f"{v}-{i}" for i, (v, _) in enumerate(PROJECTED)])
def test_steps_on_the_clients_shape_are_the_whole_client_steps(variant: str, bounds: dict[str, int]) -> None:
    m = idem(variant, **bounds)
    fired: dict[str, int] = {}
    for s in reachable(m, 4000):
        v = m.view(s)
        succ = m.successors(s)
        for c, client in enumerate(v.client):
            # their batches are in creation order, which ExpireBatch relies on (``expiry``)
            assert [b.created for b in client.batches] == sorted(b.created for b in client.batches)
            got = sorted(((step, m.view(t).client[c]) for step, t in succ if step[0] in SHAPED and step[1] == c),
                         key=repr)
            want = sorted(_whole_client_steps(m, v, c), key=repr)
            assert got == want, (v.client[c], got, want)
            for step, _ in got:
                fired[step[0]] = fired.get(step[0], 0) + 1
        for step, t in succ:  # a response: the client room's answer on the whole client
            if step[0] != "HandleProduceResponse" or step[1] != P:
                continue
            w = m.view(t)
            (msg,) = (Counter(v.idem_responses) - Counter(w.idem_responses)).elements()
            c = msg.client
            new, outcome = cl.handle_produce_response(v.client[c], msg.message, v.now, m.idem_cfg)
            if msg.message.error == Errors.NOT_LEADER_OR_FOLLOWER:
                new = new._replace(known_leader_epoch=v.leader_epoch)
            assert (w.client[c], step[-1]) == (new, outcome), (v.client[c], msg)
            fired[step[0]] = fired.get(step[0], 0) + 1
    assert {"IdempotentDrain", "ExpireBatch", "HandleProduceResponse"} <= set(fired), fired
    if m.bounds.get("lost_responses", 0):
        assert "IdempotentRequestTimeout" in fired, fired


def test_the_shape_puts_back_the_times_and_refuses_a_new_or_moved_batch() -> None:
    from eoscheck.model.machines.eos_idempotent import shape, with_shape
    m = idem(idempotent_records=3, max_in_flight=3, lost_responses=1, max_ticks=3, delivery_timeout=2)
    clients = {m.view(s).client[0] for s in reachable(m, 3000)}
    assert sum(len(c.batches) >= 2 for c in clients) > 20
    for c in clients:
        p = shape(c)
        assert with_shape(c, p) == c and shape(with_shape(c, p)) == p
        assert all(b.created is None for b in p.batches)
        if len(c.batches) >= 2:
            fewer = p._replace(batches=p.batches[1:])  # a step that completes the first batch
            assert with_shape(c, fewer).batches == c.batches[1:] and shape(with_shape(c, fewer)) == fewer
            with pytest.raises(ValueError, match="adds or moves"):
                with_shape(c, p._replace(batches=p.batches[::-1]))
        with pytest.raises(ValueError, match="adds or moves"):
            with_shape(c, p._replace(batches=(*p.batches, cl.send(c, 0).batches[-1]._replace(created=None))))


def _with_shape_walk(client: IdempotentClient, new: IdempotentClient) -> IdempotentClient:
    """``with_shape`` as one walk by record (its general path, the reference for its fast one)."""
    times = {b.record: b.created for b in client.batches}
    return new._replace(batches=tuple(b._replace(created=times[b.record]) for b in new.batches))


def test_send_writes_the_queued_projection_and_it_puts_back_the_times() -> None:
    """Send reads the client's shape and writes ``queued`` (the shape and its last batch's time): the
    client it leaves is ``cl.send``'s on the whole client, and the projection's put and get agree."""
    from eoscheck.model.machines.eos_idempotent import queued, shape, with_queued, with_shape
    m = idem(idempotent_records=3, max_in_flight=3, lost_responses=1, max_ticks=3, delivery_timeout=2)
    sent = 0
    clients = set()
    for s in reachable(m, 3000):
        v = m.view(s)
        clients.add(v.client[0])
        for _, w in steps(m, s, "Send"):
            assert w.client[0] == cl.send(v.client[0], v.now)
            sent += 1
    assert sent > 100 and sum(len(c.batches) >= 2 for c in clients) > 20
    for c in clients:
        q = queued(c)
        assert with_queued(c, q) == c and queued(with_queued(c, q)) == q
        if c.sent < 3:
            grown = cl.send(c, 7)
            assert with_queued(c, queued(grown)) == grown and queued(grown)[1] == 7
        if c.batches:
            with pytest.raises(ValueError, match="last batch the time"):
                with_queued(c, (q[0], q[1] + 1))
        # with_shape's one-pass pairing of the kept last batches is the walk by record
        p = shape(c)
        for k in range(len(c.batches) + 1):
            kept = p._replace(batches=p.batches[k:])
            assert with_shape(c, kept) == _with_shape_walk(c, kept)
        if len(c.batches) >= 3:  # a middle batch dropped: the walk
            gap = p._replace(batches=(p.batches[0], *p.batches[2:]))
            assert with_shape(c, gap) == _with_shape_walk(c, gap)


def test_drain_and_expiry_projections_agree_with_their_functions() -> None:
    """The ``drain`` and ``expiry`` projections take ``timing``'s answer for the client it last saw:
    the same as computing them, whichever client ``timing`` saw last."""
    from eoscheck.model.machines.eos_idempotent import drain, drain_next, expiry, oldest, timing
    m = idem(idempotent_records=3, max_in_flight=3, lost_responses=1, max_ticks=3, delivery_timeout=2)
    clients = sorted({m.view(s).client[0] for s in reachable(m, 2000)}, key=repr)
    assert len({drain_next(c) for c in clients}) > 3 and len({expiry(c) for c in clients}) > 3
    for a, b in zip(clients, clients[1:] + clients[:1]):
        timing(a)
        assert (drain(a), oldest(a), drain(b), oldest(b)) == (drain_next(a), expiry(a), drain_next(b), expiry(b))
        # an equal client that is another object is computed, not taken
        twin = IdempotentClient(*a)
        assert twin is not a and (drain(twin), oldest(twin)) == (drain_next(a), expiry(a))


def test_the_produce_steps_are_built_in_place_as_their_builders_build_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """HandleProduce (the leader's ``appendable`` written, a response sent, or a response alone) and
    HandleProduceResponse (its sender's ``shape``, indexed by the message) are built in place: every
    outcome they make has a shape the generated successors build without calling its builder, and the
    successors are those of a machine whose step lines all call their builders."""
    from eoscheck.checker.compose.rules import _Rule
    bounds = {"idempotent_records": 3, "max_in_flight": 3, "lost_responses": 1, "max_ticks": 3,
              "delivery_timeout": 2, "leader_failovers": 1}
    m = idem(**bounds)
    rules = {r.action: r for r in m._plan.rules if isinstance(r, _Rule) and r.receive is not None}
    states = list(reachable(m, 4000))
    monkeypatch.setattr(_Rule, "_apply_shapes", lambda self, env, shapes, name, call: [call])
    ref = idem(**bounds)
    assert all(m.successors(s) == ref.successors(s) for s in states)
    for action in ("HandleProduce", "HandleProduceResponse"):
        rule_ = rules[action]
        _, env = rule_.inline
        in_place = {v for k, v in env.items() if k.startswith(rule_.tag + "R")}
        outs = [o for got in rule_.flat.values() for o in got] if action == "HandleProduce" else [
            o for _, _, bindings in (x for plan in rule_.per_channel.values() for x in plan)
            for b, _, _ in bindings for got in b.memo.values() for o in got]
        builds = {o[1] for o in outs}
        assert len(outs) > 20 and len(builds) >= (2 if action == "HandleProduce" else 1) and builds <= in_place, action


@pytest.mark.parametrize(("variant", "bounds"), PROJECTED, ids=[f"{v}-{i}" for i, (v, _) in enumerate(PROJECTED)])
def test_handle_produce_on_the_appendable_leader_is_the_whole_leader_step(variant: str, bounds: dict[str, int]) -> None:
    """HandleProduce reads and writes the leader without its records (``appendable``): every step it
    takes is the one its effect takes on the whole leader."""
    m = idem(variant, **bounds)
    appended = 0
    for s in reachable(m, 4000):
        v = m.view(s)
        for step, t in m.successors(s):
            if step[0] != "HandleProduce" or step[1] != P or step[-1] == Errors.NOT_ENOUGH_REPLICAS:
                continue
            w = m.view(t)
            (msg,) = (Counter(v.idem_requests) - Counter(w.idem_requests)).elements()
            out = m.idempotent_handle_produce(msg, v.idem_leader, v.idem_follower, v.leader_epoch)
            assert (w.idem_leader, w.idem_follower) == (out.get("idem_leader", v.idem_leader),
                                                        out.get("idem_follower", v.idem_follower)), msg
            assert step[-1] == out["error"] and (not out.get("idem_responses") or out["idem_responses"] in w.idem_responses)
            appended += len(w.idem_leader.log) > len(v.idem_leader.log)
    assert appended


def test_the_appendable_leader_puts_back_the_records_and_refuses_anything_but_an_append() -> None:
    from eoscheck.model.machines.eos_idempotent import appendable, logged, with_appended
    log = (LogRecord(0, 0, 0, 0, 0, 0), LogRecord(0, 1, 0, 0, 1, 1))
    leader = PartitionState(log, 0, ())
    p = appendable(leader)
    assert p == PartitionState((None, None), 0, ()) and with_appended(leader, p) == leader
    more = LogRecord(0, 2, 0, 0, 2, 2)
    assert with_appended(leader, p._replace(log=(*p.log, more), log_start_offset=1)) == PartitionState((*log, more), 1, ())
    for bad in ((None,), (*log[:1], None), (None, None, None), (None, more)):
        with pytest.raises(ValueError, match="more than append"):
            with_appended(leader, p._replace(log=bad))
    assert [(r.client, r.record, r.seq, r.timestamp) for r in logged(leader)] == [(0, 0, None, None), (0, 1, None, None)]
