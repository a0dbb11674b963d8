"""NoSpuriousFencing (a producer fenced although nothing superseded it) and the two 4.0 development-trunk
bugs it rediscovers: KAFKA-18464 (a TV2 EndTxn checked the epoch before the pending completion, so an abort
sent while the previous commit completes was PRODUCER_FENCED) and KAFKA-18660 (a TV2 rotation answered the
old producer id with the exhausted epoch, and AddPartitionsToTxn checked the producer id before the pending
completion). Read in the January 2025 trunk's ``TransactionCoordinator.endTransaction`` (the epoch check,
then the pending one; ``responseCallback(Errors.NONE, txnMetadata.producerId, txnMetadata.producerEpoch)``),
the PR 18467 / 18730 diffs, and 4.3.1's answer from ``newPreSendMetadata``."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from eoscheck.checker.compose.testing import reachable_steps
from eoscheck.checker.explore import explore
from eoscheck.checker.explore.options import ExploreOptions
from eoscheck.model.errors import Errors
from eoscheck.model.machines.eos import EosMachine
from eoscheck.model.machines.eos_model import BOUNDS
from eoscheck.model.properties import eos_fenced_gets_fencing_error, eos_no_spurious_fencing
from eoscheck.model.protocol import VARIANTS
from eoscheck.model.transactions.add_partitions import add_partitions_to_txn
from eoscheck.model.transactions.codes import TxnResult, TxnState
from eoscheck.model.transactions.end_txn import answer_after_end_txn, end_txn_tv2
from eoscheck.model.transactions.metadata import new_metadata
from spec_pairs import check_spec_pair_member

#: an abort after a commit still completing (KAFKA-18464); the fourth transaction after a rotation (KAFKA-18660)
ABORT_AFTER_COMMIT = {"transactions": 2, "send_errors": 1}
ROTATION = {"transactions": 4, "max_epoch": 3}
E, S, R = Errors, TxnState, TxnResult


def _machine(variant: str, bounds: dict[str, int], **switches: Any) -> EosMachine:
    values = {name: b.default for name, b in BOUNDS.items()} | bounds
    return EosMachine(VARIANTS[variant].protocol.with_(**switches), values)


def _violation(m: EosMachine) -> list[tuple]:
    """The steps of the shortest NoSpuriousFencing violation ([] if it holds)."""
    r = explore(m, ExploreOptions(properties=("NoSpuriousFencing",)))
    if not r.violations:
        return []
    (v,) = r.violations
    return [t.step for t in v.trace if t.step is not None]


# --- the coordinator's rules -----------------------------------------------------------------------


def _prepare_commit(epoch: int = 1, next_pid: int = -1) -> Any:
    # TV2 PrepareCommit written by the client's EndTxn at epoch - 1 (its completion still to come)
    return new_metadata(0)._replace(epoch=epoch, last_epoch=epoch - 1, state=int(S.PREPARE_COMMIT), partitions=(0,),
                                    next_producer_id=next_pid, tv=2)


def test_an_end_txn_at_the_answered_epoch_waits_for_the_completion_only_after_kafka_18464() -> None:
    prep = _prepare_commit()
    # the abort right after the commit carries the epoch the commit answered (1): current, not a retry
    assert end_txn_tv2(prep, 0, 1, R.ABORT, prepare_pending=True).error == E.CONCURRENT_TRANSACTIONS
    assert end_txn_tv2(prep, 0, 1, R.ABORT, prepare_pending=True, epoch_first=True).error == E.PRODUCER_FENCED
    # a retry of the commit (epoch 0) is valid in PrepareCommit: both orders wait
    for first in (False, True):
        assert end_txn_tv2(prep, 0, 0, R.COMMIT, prepare_pending=True, epoch_first=first).error == \
            E.CONCURRENT_TRANSACTIONS
    # a stale epoch is fenced at once only epoch-first; pending-first it waits and is fenced at CompleteX
    assert end_txn_tv2(prep._replace(epoch=3), 0, 1, R.ABORT, prepare_pending=True).error == E.CONCURRENT_TRANSACTIONS
    assert end_txn_tv2(prep._replace(epoch=3), 0, 1, R.ABORT, prepare_pending=True,
                       epoch_first=True).error == E.PRODUCER_FENCED
    # without the pending completion (the conformance table) nothing changes: current in PrepareX is fenced
    assert end_txn_tv2(prep, 0, 1, R.ABORT).error == E.PRODUCER_FENCED
    # once complete, the same abort starts an empty abort with a bump (the table both orders share)
    done = prep._replace(state=int(S.COMPLETE_COMMIT), partitions=())
    out = end_txn_tv2(done, 0, 1, R.ABORT, prepare_pending=True, epoch_first=True)
    assert (out.error, out.meta.state, out.meta.epoch, out.meta.partitions) == (E.NONE, S.PREPARE_ABORT, 2, ())


def test_a_rotation_answers_the_next_producer_id_only_after_kafka_18660() -> None:
    rotating = _prepare_commit(epoch=3, next_pid=7)
    assert answer_after_end_txn(rotating) == (7, 0)
    assert answer_after_end_txn(rotating, next_producer_id=False) == (0, 3)
    # the first add under the new producer id while the rotation completes
    assert add_partitions_to_txn(rotating, 7, 0, (0,), pending_first=True).error == E.CONCURRENT_TRANSACTIONS
    assert add_partitions_to_txn(rotating, 7, 0, (0,)).error == E.INVALID_PRODUCER_ID_MAPPING
    # the old pair, answered before the fix: waits either way, then meets the new producer id
    assert add_partitions_to_txn(rotating, 0, 3, (0,)).error == E.CONCURRENT_TRANSACTIONS
    done = rotating._replace(state=int(S.COMPLETE_COMMIT), producer_id=7, prev_producer_id=0, epoch=0,
                             next_producer_id=-1, partitions=())
    assert add_partitions_to_txn(done, 0, 3, (0,), pending_first=True).error == E.INVALID_PRODUCER_ID_MAPPING
    assert add_partitions_to_txn(done, 7, 0, (0,), pending_first=True).error == E.NONE


def test_an_end_txn_under_the_rotated_to_producer_id_waits_for_the_completion_from_4_0_0() -> None:
    """KAFKA-18660's endTransaction half (PR 18730; 4.0.0 to 4.1.1 and the 4.2 branch check the pending
    completion first): the abort the client sends under the producer id the rotating commit answered
    meets the old producer id while the rotation completes."""
    rotating = _prepare_commit(epoch=3, next_pid=7)
    assert end_txn_tv2(rotating, 7, 0, R.ABORT, prepare_pending=True).error == E.CONCURRENT_TRANSACTIONS
    assert end_txn_tv2(rotating, 7, 0, R.ABORT, prepare_pending=True,
                       producer_id_first=True).error == E.INVALID_PRODUCER_ID_MAPPING
    # before KAFKA-18464 the producer id was also first
    assert end_txn_tv2(rotating, 7, 0, R.ABORT, prepare_pending=True,
                       epoch_first=True).error == E.INVALID_PRODUCER_ID_MAPPING
    # a producer id that is neither the rotation's nor the metadata's waits too, and is refused after it
    assert end_txn_tv2(rotating, 9, 0, R.ABORT, prepare_pending=True).error == E.CONCURRENT_TRANSACTIONS
    done = rotating._replace(state=int(S.COMPLETE_COMMIT), producer_id=7, prev_producer_id=0, epoch=0,
                             next_producer_id=-1, partitions=())
    assert end_txn_tv2(done, 9, 0, R.ABORT).error == E.INVALID_PRODUCER_ID_MAPPING
    # once complete, the abort under the new producer id is current: an empty abort with a bump
    out = end_txn_tv2(done, 7, 0, R.ABORT, prepare_pending=True)
    assert (out.error, out.meta.state, out.meta.producer_id, out.meta.epoch) == (E.NONE, S.PREPARE_ABORT, 7, 1)


# --- the property ---------------------------------------------------------------------------------


def _producer(pid: int, epoch: int, fatal: int = 0) -> Any:
    return SimpleNamespace(producer_id=pid, epoch=epoch, fatal_error=fatal)


def _meta(pid: int, epoch: int, prev: int = -1, nxt: int = -1, exists: bool = True) -> Any:
    return SimpleNamespace(exists=exists, producer_id=pid, epoch=epoch, prev_producer_id=prev, next_producer_id=nxt)


def _holds(before: Any, after: Any, meta: Any, zombie: Any = ()) -> bool:
    b = SimpleNamespace(producer=(before,), zombie=(zombie,), txn=(meta,))
    a = SimpleNamespace(producer=(after,), zombie=(zombie,), txn=(meta,))
    return eos_no_spurious_fencing(("EndTxn", 0, "ABORT", 0), b, a)


@pytest.mark.parametrize("error", [E.PRODUCER_FENCED, E.INVALID_PRODUCER_EPOCH, E.INVALID_PRODUCER_ID_MAPPING])
def test_the_property_names_a_fence_of_a_producer_nothing_superseded(error: Errors) -> None:
    live, fenced = _producer(0, 1), _producer(0, 1, int(error))
    assert not _holds(live, fenced, _meta(0, 1))  # the coordinator still holds its pair
    assert not _holds(live, fenced, _meta(5, 0, prev=0))  # its own rotation completed
    assert not _holds(live, fenced, _meta(3, 2, nxt=0))  # its own rotation still completing
    # superseded: the coordinator fenced its epoch (a timeout abort), another producer id took the id
    # (expiry and a new instance), the id is gone, or a newer instance exists (the zombie slot)
    assert _holds(live, fenced, _meta(0, 3))
    assert _holds(live, fenced, _meta(9, 0))
    assert _holds(live, fenced, _meta(0, 1, exists=False))
    assert _holds(live, fenced, _meta(0, 1), zombie=_producer(0, 0))


def test_only_a_new_fence_outcome_counts() -> None:
    live = _producer(0, 1)
    assert _holds(live, _producer(0, 1, int(E.INVALID_TXN_STATE)), _meta(0, 1))  # another fatal error
    already = _producer(0, 1, int(E.PRODUCER_FENCED))
    assert _holds(already, already, _meta(0, 1))
    # a producer that never got a producer id is not taken for the previous one (-1 == -1)
    assert _holds(_producer(-1, -1), _producer(-1, -1, int(E.INVALID_PRODUCER_ID_MAPPING)), _meta(4, 0))


def test_fenced_gets_fencing_error_does_not_take_the_rotated_to_producer_for_superseded() -> None:
    before = SimpleNamespace(producer=(_producer(7, 0),), txn=(_meta(0, 3, nxt=7),))
    after = SimpleNamespace(producer=(_producer(7, 0, int(E.INVALID_PRODUCER_ID_MAPPING)),), txn=(_meta(0, 3, nxt=7),))
    assert eos_fenced_gets_fencing_error(("EndTxn", 0, "ABORT", 49), before, after)
    # another producer id that is not the rotation's: superseded, and the error is not a fencing one
    after.txn = (_meta(0, 3, nxt=8),)
    assert not eos_fenced_gets_fencing_error(("EndTxn", 0, "ABORT", 49), before, after)


# --- the machines ---------------------------------------------------------------------------------


def test_kafka_18464_the_abort_after_a_commit_fences_its_own_producer_on_the_january_trunk() -> None:
    steps = _violation(_machine("kafka-4.0-dev-2025-01-09", ABORT_AFTER_COMMIT))
    names = [s[0] for s in steps]
    assert steps[-1][:3] == ("EndTxn", 0, "ABORT") and steps[-1][-1] == E.PRODUCER_FENCED
    # the commit answered, the next transaction began and a send() failed before the abort
    assert names[-4:-1] == ["EndTxn", "BeginTransaction", "SendFails"] and "WriteTxnMarker" not in names
    assert len(steps) + 1 == 15
    # the switch alone: 4.0.0 with the epoch first fences, the trunk with the pending check first does not
    assert _violation(_machine("kafka-4.0", ABORT_AFTER_COMMIT, tv2_end_txn_pending_first=False))
    assert not _violation(_machine("kafka-4.0-dev-2025-01-09", ABORT_AFTER_COMMIT, tv2_end_txn_pending_first=True))


def test_kafka_18464_the_fixed_abort_waits_and_ends_empty() -> None:
    m = _machine("kafka-4.0", ABORT_AFTER_COMMIT)
    r = explore(m, ExploreOptions())
    assert r.verdict == "holds"
    # the TV2 client sends the abort although nothing was added, and the coordinator completes it without markers
    assert r.stats.coverage["CompleteEmptyTransaction"].distinct > 0


@pytest.mark.parametrize("switch", ["tv2_rotation_answer_next_producer_id", "add_partitions_pending_first"])
def test_kafka_18660_either_half_of_the_fix_alone_still_fences(switch: str) -> None:
    steps = _violation(_machine("kafka-4.0", ROTATION, **{switch: False}))
    assert steps[-1][0] == "AddPartitionsToTxn" and steps[-1][-1] == E.INVALID_PRODUCER_ID_MAPPING


def test_kafka_18660_the_old_pair_meets_the_completed_rotation_on_the_january_trunk() -> None:
    m = _machine("kafka-4.0-dev-2025-01-28", ROTATION)
    r = explore(m, ExploreOptions(properties=("NoSpuriousFencing",)))
    (v,) = r.violations
    assert len(v.trace) == 40
    steps = [t.step for t in v.trace if t.step is not None]
    assert steps[-1][0] == "AddPartitionsToTxn" and steps[-1][-1] == E.INVALID_PRODUCER_ID_MAPPING
    # the rotation completed (its last marker) before the add, which carries the old producer id the
    # rotating commit answered (the third EndTxn; the commits run at epochs 0, 1 and 2 of producer id 0)
    assert steps[-2][0] == "WriteTxnMarker"
    assert [s[2] for s in steps if s[0] == "EndTxn"] == ["COMMIT"] * 3
    assert not _violation(_machine("kafka-4.0", ROTATION))


def test_the_abort_after_a_rotating_commit_waits_on_4_0_0() -> None:
    """Session 17's candidate (KAFKA-18660's bounds with a failing send): with the producer id checked
    first (the 4.0 trunk before January 30, 2025) the abort under the new producer id is fatal in 39
    states; 4.0.0 checks the pending completion first and every property holds."""
    bounds = ROTATION | {"send_errors": 1}
    steps = _violation(_machine("kafka-4.0", bounds, tv2_end_txn_pending_before_producer_id=False))
    assert len(steps) + 1 == 39
    assert steps[-1][:3] == ("EndTxn", 0, "ABORT") and steps[-1][-1] == E.INVALID_PRODUCER_ID_MAPPING
    # the rotating commit answered, the next transaction began and its send failed; no marker yet
    assert [s[0] for s in steps[-4:-1]] == ["EndTxn", "BeginTransaction", "SendFails"]
    assert [s[2] for s in steps if s[0] == "EndTxn"] == ["COMMIT"] * 3 + ["ABORT"]
    r = explore(_machine("kafka-4.0", bounds), ExploreOptions())
    assert r.verdict == "holds"
    # the abort waits (CONCURRENT_TRANSACTIONS is a retry, no step) and is then accepted: every EndTxn answers NONE
    ends = {(step[2], step[-1]) for _, step, _ in reachable_steps(_machine("kafka-4.0", bounds)) if step[0] == "EndTxn"}
    assert ends == {("COMMIT", E.NONE), ("ABORT", E.NONE)}


@pytest.mark.parametrize(("name", "length"),
                         [("eos-kafka-18464-abort-after-commit-self-fence-kafka-4.0-dev-2025-01-09", 15),
                          ("eos-kafka-18464-abort-after-commit-self-fence-kafka-4.0", None),
                          ("eos-kafka-18660-rotation-answer-self-fence-kafka-4.0-dev-2025-01-28", 40),
                          ("eos-kafka-18660-rotation-answer-self-fence-kafka-4.0", None)])
def test_the_spec_pairs(name: str, length: int | None) -> None:
    check_spec_pair_member(name, "NoSpuriousFencing", length)


# --- the same family? (task: PR 15266's fatal TxnOffsetCommit error, the 4.0 zombie's unmapped producer id) -----


def test_the_4_0_zombies_unmapped_producer_id_is_fenced_gets_fencing_errors_question() -> None:
    """KAFKA-18019's bounds on 4.0 (TV1): the zombie dies with INVALID_PRODUCER_ID_MAPPING, which
    FencedGetsFencingError names; the zombie is superseded, so NoSpuriousFencing holds."""
    m = _machine("kafka-4.0", {"input_records": 1, "transactions": 2, "restarts": 1, "txn_id_expirations": 1},
                 transaction_version="tv1")
    r = explore(m, ExploreOptions(properties=("NoSpuriousFencing", "FencedGetsFencingError")))
    assert [v.property for v in r.violations] == ["FencedGetsFencingError"]
    assert explore(m, ExploreOptions(properties=("NoSpuriousFencing",))).verdict == "holds"


@pytest.mark.parametrize("variant", ["kafka-3.6-3.7", "kafka-3.8-3.9"])
def test_pr_15266s_fatal_commit_error_is_not_a_fence(variant: str) -> None:
    """The late EndTxn bounds where a 3.6-3.7 producer dies on CONCURRENT_TRANSACTIONS from its
    TxnOffsetCommit's verification (tests/test_eos_txn_offset_commit_errors.py): a spurious fatal error
    with the coordinator at the producer's own pair, but no fence."""
    m = _machine(variant, {"input_records": 2, "transactions": 2, "partitions": 1, "endtxn_timeouts": 1})
    # a producer that died leaves its consumer's records unprocessed: a deadlock, which is not the question
    r = explore(m, ExploreOptions(properties=("NoSpuriousFencing",), check_deadlock=False))
    assert r.verdict == "holds"
    died = [m.view(t) for _, step, t in reachable_steps(m)
            if step[0] == "TxnOffsetCommit" and step[-1] == E.CONCURRENT_TRANSACTIONS]
    # 3.6-3.7 only: the producer dies while its coordinator still holds its own pair (nothing superseded it)
    assert bool(died) == (variant == "kafka-3.6-3.7")
    for v in died:
        p, meta = v.producer[0], v.txn[0]
        assert p.fatal_error == E.CONCURRENT_TRANSACTIONS and (meta.producer_id, meta.epoch) == (p.producer_id, p.epoch)
