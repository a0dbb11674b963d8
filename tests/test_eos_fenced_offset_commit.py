"""FencedGetsFencingError checks TxnOffsetCommit steps (fid16): since fid15 an answer
``TransactionManager.TxnOffsetCommitHandler`` does not name is fatal ("Unexpected error in
TxnOffsetCommitResponse"), so a TxnOffsetCommit can fail a producer with a non-fencing error.

What Kafka does, read at 3.7.0 and 3.8.0: the group coordinator verifies the offsets write (KAFKA-15449,
3.7.0) with ``TransactionCoordinator.handleVerifyPartitionsInTransaction``, which compares the producer id
before the epoch: a zombie whose transactional id expired and was re-created with a new producer id gets
INVALID_PRODUCER_ID_MAPPING (not PRODUCER_FENCED), ``maybeConvertOffsetCommitError`` passes it on, and the
handler fails the zombie with it. Before 3.7 the offsets write is not verified, and the zombie's append is
refused by the __consumer_offsets leader's epoch check (INVALID_PRODUCER_EPOCH: fencing)."""

from __future__ import annotations

import pytest
from eoscheck.checker.explore import explore
from eoscheck.checker.explore.options import ExploreOptions
from eoscheck.model.errors import Errors
from eoscheck.model.machines.eos import _FENCING_CHECKED, _may_fail_unfenced, machine

#: a zombie in its transaction with its offsets added; the id's transaction is timed out, aborted and
#: expires, and the new instance re-creates it with a new producer id
EXPIRED_ID_ZOMBIE = {"input_records": 1, "transactions": 2, "restarts": 1, "txn_id_expirations": 1,
                     "txn_timeouts": 1}


@pytest.mark.parametrize("action", ["TxnOffsetCommit", "ZombieTxnOffsetCommit"])
def test_the_property_checks_offset_commits_that_may_fail_a_producer(action: str) -> None:
    assert action in _FENCING_CHECKED
    step = (action, 0, 1)
    for error in (Errors.INVALID_PRODUCER_ID_MAPPING, Errors.INVALID_TXN_STATE, Errors.CONCURRENT_TRANSACTIONS):
        assert _may_fail_unfenced((*step, int(error)))
    # written, or fenced: no new non-fencing fatal error
    for error in (Errors.NONE, Errors.PRODUCER_FENCED, Errors.INVALID_PRODUCER_EPOCH):
        assert not _may_fail_unfenced((*step, int(error)))


@pytest.mark.parametrize("variant", ["kafka-3.6-3.7", "kafka-3.8-3.9"])
def test_a_verified_offset_commit_fails_a_zombie_with_an_unmapped_producer_id(variant: str) -> None:
    """3.7+ (``partition_verification`` with the offsets write verified; ``kafka-3.6-3.7`` verifies it too,
    as 3.7 does): the shortest violation is the zombie's TxnOffsetCommit after the re-creation. Before
    fid16 the property skipped TxnOffsetCommit and held here (912,730 states on either variant)."""
    m = machine(variant, **EXPIRED_ID_ZOMBIE)
    r = explore(m, ExploreOptions(properties=("FencedGetsFencingError",)))
    (v,) = r.violations
    steps = [t.step for t in v.trace if t.step is not None]
    last = steps[-1]
    assert last[0] == "ZombieTxnOffsetCommit" and last[-1] == Errors.INVALID_PRODUCER_ID_MAPPING
    names = [s[0] for s in steps]
    # the id expired and the live instance re-created it before the zombie's commit
    assert names.index("ExpireDataTransactionalId") < len(names) - 2 and names[-2] == "InitProducerId"
    assert len(v.trace) == 11
