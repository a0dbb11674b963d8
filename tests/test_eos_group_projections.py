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

from eoscheck.model.group.member import INPUT_PARTITION
from eoscheck.model.group.offset_fetch import offset_fetch
from eoscheck.model.group.pending_offsets import complete_pending_txn_offset_commit
from eoscheck.model.machines.eos import machine
from eoscheck.model.machines.eos_group import (
    commit_fields,
    fetched,
    group_offsets,
    with_commit_fields,
    with_offsets,
)
from eoscheck.model.producer import transactional as tx
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
