"""§4: OffsetFetch with require_stable, and the consumer's backoff and retry."""

import pytest
from eoscheck.model.group.metadata import GroupState, new_group
from eoscheck.model.group.offset_fetch import (
    EARLIEST_OFFSET,
    FetchReaction,
    OffsetFetchAnswer,
    offset_fetch,
    on_offset_fetch_answer,
    sends_require_stable,
)
from eoscheck.model.group.pending_offsets import (
    complete_pending_txn_offset_commit,
    on_txn_offset_commit_append,
    prepare_txn_offset_commit,
)
from eoscheck.model.transactions.codes import Errors

E = Errors
PID = 3


def committed_then_pending():
    g = prepare_txn_offset_commit(new_group(2), PID, ((0, 4),))
    g = complete_pending_txn_offset_commit(on_txn_offset_commit_append(g, PID, 0, 4, 0), PID, True)
    g = prepare_txn_offset_commit(g, PID + 1, ((0, 7),))
    return on_txn_offset_commit_append(g, PID + 1, 0, 7, 1)


def test_require_stable_with_pending_offsets_is_unstable_offset_commit():
    g = committed_then_pending()
    assert offset_fetch(g, 0, require_stable=True) == (E.UNSTABLE_OFFSET_COMMIT, -1)
    assert offset_fetch(g, 1, require_stable=True) == (E.NONE, -1)  # no pending there, nothing committed


def test_without_require_stable_the_stale_committed_offset_is_returned():
    assert offset_fetch(committed_then_pending(), 0, require_stable=False) == (E.NONE, 4)


def test_after_the_marker_the_new_offset_is_stable():
    g = complete_pending_txn_offset_commit(committed_then_pending(), PID + 1, True)
    assert offset_fetch(g, 0, require_stable=True) == (E.NONE, 7)


def test_unknown_or_dead_group_answers_no_offset():
    assert offset_fetch(None, 0, require_stable=True) == (E.NONE, -1)
    dead = committed_then_pending()._replace(state=int(GroupState.DEAD))
    assert offset_fetch(dead, 0, require_stable=True) == (E.NONE, -1)


def test_consumer_retries_on_unstable_and_resets_when_nothing_committed():
    assert on_offset_fetch_answer(OffsetFetchAnswer(int(E.UNSTABLE_OFFSET_COMMIT), -1))[0] == FetchReaction.RETRY
    assert on_offset_fetch_answer(OffsetFetchAnswer(int(E.NONE), 4)) == (FetchReaction.POSITION, 4)
    assert on_offset_fetch_answer(OffsetFetchAnswer(int(E.NONE), -1)) == (FetchReaction.POSITION, EARLIEST_OFFSET)


@pytest.mark.parametrize("mode,rc,expected", [
    ("always", False, True), ("always", True, True),
    ("read_committed", True, True), ("read_committed", False, False),
    ("never", True, False),
])
def test_require_stable_modes(mode, rc, expected):
    assert sends_require_stable(mode, read_committed=rc) == expected


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError):
        sends_require_stable("sometimes", read_committed=True)
