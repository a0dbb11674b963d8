"""The projections kafka.eos's group rules and properties read instead of whole parts hand each
function exactly what it reads, and the written ones are lenses.

A rule that reads a projection is memoised on the projected value, so it must be a function of it:
here, on every reachable state of the pipeline shape (first states of a BFS), the rule or property
on the projection gives what the original function gives on the whole part (OffsetFetch's answers,
the offsets ZombieNeverCommitsOffsets and WriteOffsetsMarker read, the producer fields
TxnOffsetCommit reads and writes), and a written projection obeys
``get(put(v, p)) == p`` and ``put(v, get(v)) == v`` (docs/compose.md, "Projections").
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from eoscheck.model.group.member import INPUT_PARTITION, must_rejoin, rejoin_ranked
from eoscheck.model.group.offset_fetch import offset_fetch
from eoscheck.model.group.pending_offsets import complete_pending_txn_offset_commit
from eoscheck.model.machines.eos import machine
from eoscheck.model.machines.eos_group import (
    between_transactions,
    commit_fields,
    fetched,
    group_offsets,
    member_identity,
    rejoin_fields,
    with_commit_fields,
    with_member_identity,
    with_offsets,
    with_rejoin_fields,
)
from eoscheck.model.producer import transactional as tx
from eoscheck.model.state import TXN_CLOSED, TXN_FATAL, TXN_FENCED
from eoscheck.model.transactions.codes import Errors
from reachable_states import first_expanded

PIPELINE = {"producers": 2, "members": 2, "input_records": 1, "partitions": 1, "transactions": 2,
            "rebalances": 2, "rejoins": 1, "max_epoch": 4}


def _views(limit: int = 20000) -> tuple[Any, list[Any]]:
    m = machine("kafka-3.0-3.5", **PIPELINE)
    return m, [m.view(s) for s in first_expanded(m, limit)]


def test_projections_are_exact_and_written_ones_are_lenses() -> None:
    _m, views = _views()
    groups = {v.group for v in views}
    producers = {p for v in views for p in v.producer}
    assert len(groups) > 20 and len(producers) > 30
    # some groups with pending offsets, some with committed ones: the projections see both
    assert any(g.pending for g in groups) and any(g.offsets[INPUT_PARTITION].offset > 0 for g in groups)

    for g in groups:
        for stable in (False, True):
            assert fetched(g)[stable] == offset_fetch(g, INPUT_PARTITION, require_stable=stable)
        assert with_offsets(g, group_offsets(g)) == g
        for pid in {e.producer_id for e in g.pending if e.appended_at >= 0}:
            for commit in (False, True):
                # the marker's work on the projection, put back, is its work on the whole group
                on_view = complete_pending_txn_offset_commit(group_offsets(g), pid, commit)  # type: ignore[arg-type]
                assert with_offsets(g, on_view) == complete_pending_txn_offset_commit(g, pid, commit)
    for g, h in itertools.islice(itertools.product(groups, groups), 20000):
        assert group_offsets(with_offsets(g, group_offsets(h))) == group_offsets(h)

    for p in producers:
        assert with_commit_fields(p, commit_fields(p)) == p
        for error in (Errors.NONE, Errors.PRODUCER_FENCED, Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID):
            on_view = tx.on_txn_offset_commit(commit_fields(p), error)  # type: ignore[arg-type]
            assert with_commit_fields(p, on_view) == tx.on_txn_offset_commit(p, error)
    for p, q in itertools.islice(itertools.product(producers, producers), 20000):
        assert commit_fields(with_commit_fields(p, commit_fields(q))) == commit_fields(q)


def _whole(m: Any, v: Any, **changed: Any) -> tuple:
    """The state of view ``v`` with some parts replaced (values of whole parts)."""
    return m.state(**{name: getattr(v, name) for name in m._plan.decls} | changed)


def _rejoin_on_whole_parts(m: Any, v: Any) -> list[tuple[tuple, tuple]]:
    """Rejoin's steps as the rule made them before it read the members' identities: every member
    whole, the producer whole, ``rejoin_ranked`` on the whole group."""
    steps = []
    for i, p in enumerate(v.producer):
        fenced = p.phase in (TXN_FENCED, TXN_FATAL)
        if not fenced and not (must_rejoin(v.member[i], v.group) and between_transactions(p)):
            continue
        after = m.alpha_on_rejoin(p, fenced)
        ranks = range(1, m.members + 1) if v.member[i].incarnation < m.rejoins else (m.members,)
        for rank in ranks:
            joined, group = rejoin_ranked(v.member, v.group, i, rank)
            steps.append((("Rejoin", i, rank),
                          _whole(m, v, member=joined, group=group,
                                 producer=v.producer[:i] + (after,) + v.producer[i + 1:])))
    return steps


def _rejoin_steps(m: Any, s: tuple) -> list[tuple[tuple, tuple]]:
    return [(step, t) for step, t in m.successors(s) if step[0] == "Rejoin"]


@pytest.mark.parametrize("alpha", [False, True])
def test_rejoin_on_member_identities_is_rejoin_on_whole_members(alpha: bool) -> None:
    """Rejoin reads and writes the members through ``member:identity`` (ids, incarnations, lost
    flags; the generation and assignment each member believes blanked) and its producer through
    ``producer[i]:rejoin`` (phase, position, connections; new connections restart the instance), so a
    member's new assignment or its producer's batches moving cost it no miss: on every reachable state
    of the pipeline shape (per-thread and per-partition producers), and on those states with a producer
    made fenced or fatal, its memoised steps are the steps of the rule on whole members and whole
    producers, and both projections are lenses."""
    if alpha:
        from eoscheck.model.machines.eos import EosMachine
        from eoscheck.model.machines.eos_model import BOUNDS
        from eoscheck.model.protocol import VARIANTS
        protocol = VARIANTS["kafka-3.0-3.5"].protocol.with_(deployment="per-partition")
        m = EosMachine(protocol, {**{k: b.default for k, b in BOUNDS.items()}, **PIPELINE})
    else:
        m = machine("kafka-3.0-3.5", **PIPELINE)
    states = first_expanded(m, 8000)
    fired = fenced_fired = 0
    for s in states:
        want = _rejoin_on_whole_parts(m, m.view(s))
        assert _rejoin_steps(m, s) == want, m.view(s)
        fired += len(want)
    for s in states[:1500]:
        v = m.view(s)
        for i, p in enumerate(v.producer):
            if p.phase == TXN_CLOSED:
                continue  # a per-partition member without the task's producer
            for phase in (TXN_FENCED, TXN_FATAL):
                t = _whole(m, v, producer=v.producer[:i] + (p._replace(phase=phase),) + v.producer[i + 1:])
                want = _rejoin_on_whole_parts(m, m.view(t))
                assert _rejoin_steps(m, t) == want, (i, phase)
                fenced_fired += len(want)
    assert fired > 50 and fenced_fired > 100, (fired, fenced_fired)

    producers = {p for s in states for p in m.view(s).producer}
    for p in producers:
        assert with_rejoin_fields(p, rejoin_fields(p)) == p
    for p, q in itertools.islice(itertools.product(producers, producers), 20000):
        assert rejoin_fields(with_rejoin_fields(p, rejoin_fields(q))) == rejoin_fields(q)
    members = {mem for s in states for mem in m.view(s).member}
    assert len({member_identity(mem) for mem in members}) < len(members)  # it does drop something
    for a in members:
        assert with_member_identity(a, member_identity(a)) == a
    for a, b in itertools.islice(itertools.product(members, members), 20000):
        assert member_identity(with_member_identity(a, member_identity(b))) == member_identity(b)
