"""The shared rules against the reference (kafka-semantics.md §1.4 table, §1.5, §1.7, §2.3 wrap)."""

from __future__ import annotations

import pytest
from eoscheck.checker.ops import CONCRETE
from eoscheck.model.coordinator.fencing import fence_producer_epoch
from eoscheck.model.coordinator.init_producer_id import InitPidOutcome, init_producer_id_decision
from eoscheck.model.errors import Errors
from eoscheck.model.partition.sequence import in_sequence, increment_sequence
from eoscheck.model.producer.idempotent_epoch import bump_idempotent_epoch
from eoscheck.model.proof_rules import RULES

MAX = 32767  # Short.MAX_VALUE: exhausted at 32766
P, PP, N = 7, 3, 100  # current producer id, previous producer id, allocator's next id


def decide(*, shipped: bool = True, kip360: bool = True, max_epoch: int = MAX, exists: bool = True,
           pid: int = P, prev: int = P, epoch: int = 5, last: int = -1,
           req: tuple[int, int] = (-1, -1)) -> InitPidOutcome:
    return init_producer_id_decision(
        CONCRETE, kip360=kip360, shipped=shipped, max_epoch=max_epoch, meta_exists=exists,
        meta_producer_id=pid if exists else -1, meta_prev_producer_id=prev if exists else -1,
        meta_epoch=epoch if exists else -1, meta_last_epoch=last if exists else -1,
        req_producer_id=req[0], req_epoch=req[1], new_producer_id=N)


def ok(pid: int, epoch: int, last: int, prev: int) -> InitPidOutcome:
    return InitPidOutcome(Errors.NONE, pid, epoch, last, prev)


# --- §1.4, Kafka as shipped, one test per row ------------------------------------------------

@pytest.mark.parametrize("shipped", [True, False])
def test_no_expected_no_metadata_gives_new_pid_epoch_0(shipped: bool) -> None:
    out = decide(shipped=shipped, exists=False)
    assert (out.error, out.producer_id, out.epoch, out.last_epoch) == (Errors.NONE, N, 0, -1)


@pytest.mark.parametrize("shipped", [True, False])
def test_expected_given_no_metadata_gives_new_pid_epoch_0(shipped: bool) -> None:
    # INVALID_PRODUCER_ID_MAPPING recovery: the transactional id expired, no mapping any more.
    out = decide(shipped=shipped, exists=False, req=(P, 9))
    assert (out.error, out.producer_id, out.epoch) == (Errors.NONE, N, 0)


def test_metadata_created_but_never_written_is_initialised_with_its_own_pid() -> None:
    out = decide(epoch=-1, req=(-1, -1))
    assert (out.error, out.producer_id, out.epoch, out.last_epoch) == (Errors.NONE, P, 0, -1)


def test_no_expected_bumps_and_clears_last_epoch() -> None:
    assert decide(epoch=5, last=4) == ok(P, 6, -1, P)


def test_no_expected_at_exhausted_epoch_rotates_pid() -> None:
    assert decide(epoch=MAX - 1, last=4) == ok(N, 0, -1, P)


def test_expected_current_bumps_and_records_last_epoch() -> None:
    assert decide(epoch=5, req=(P, 5)) == ok(P, 6, 5, P)


def test_expected_current_at_exhausted_epoch_rotates_and_records_last_epoch() -> None:
    assert decide(epoch=MAX - 1, req=(P, MAX - 1)) == ok(N, 0, MAX - 1, P)


def test_retry_with_last_epoch_returns_current_without_bump() -> None:
    assert decide(epoch=6, last=5, req=(P, 5)) == ok(P, 6, 5, P)


def test_other_epoch_is_fenced() -> None:
    out = decide(epoch=6, last=5, req=(P, 4))
    assert out == InitPidOutcome(Errors.PRODUCER_FENCED, P, 6, 5, P)


def test_retry_of_bump_to_exhausted_epoch_fails_with_server_error() -> None:
    # §1.7: prepareIncrementProducerEpoch's exhaustion precondition throws; no state change.
    out = decide(epoch=MAX - 1, last=MAX - 2, req=(P, MAX - 2))
    assert out == InitPidOutcome(Errors.UNKNOWN_SERVER_ERROR, P, MAX - 1, MAX - 2, P)


def test_retry_after_rotation_with_previous_pid_returns_current() -> None:
    out = decide(pid=N, prev=P, epoch=0, last=MAX - 1, req=(P, MAX - 1))
    assert out == ok(N, 0, MAX - 1, N)


def test_previous_pid_with_exhausted_epoch_not_last_is_fenced() -> None:
    out = decide(pid=N, prev=P, epoch=0, last=MAX - 1, req=(P, MAX))
    assert out.error == Errors.PRODUCER_FENCED


def test_foreign_pid_is_fenced() -> None:
    assert decide(epoch=5, req=(42, 5)).error == Errors.PRODUCER_FENCED
    # previous pid with a non-exhausted epoch does not pass validPid
    assert decide(pid=N, prev=P, epoch=0, last=3, req=(P, 3)).error == Errors.PRODUCER_FENCED


@pytest.mark.parametrize("shipped", [True, False])
@pytest.mark.parametrize("req", [(P, -1), (-1, 5)])
def test_only_one_of_pid_and_epoch_is_invalid_request(shipped: bool, req: tuple[int, int]) -> None:
    out = decide(shipped=shipped, epoch=5, req=req)
    assert out == InitPidOutcome(Errors.INVALID_REQUEST, P, 5, -1, P)


# --- KIP-360 as designed: cases 1a .. 2c -----------------------------------------------------

def test_designed_1b_i_bump_last_empty() -> None:
    assert decide(shipped=False, epoch=5, last=4, prev=P) == ok(P, 6, -1, -1)


def test_designed_1b_ii_overflow_new_pid_last_empty() -> None:
    assert decide(shipped=False, epoch=MAX - 1) == ok(N, 0, -1, -1)


def test_designed_2a_i_bump_last_is_old_pair() -> None:
    assert decide(shipped=False, epoch=5, req=(P, 5)) == ok(P, 6, 5, P)


def test_designed_2a_ii_overflow_last_is_old_pair() -> None:
    assert decide(shipped=False, epoch=MAX - 1, req=(P, MAX - 1)) == ok(N, 0, MAX - 1, P)


def test_designed_2b_retry_returns_current_even_at_exhausted_epoch() -> None:
    # the retry that the shipped coordinator answers with UNKNOWN_SERVER_ERROR (§1.7)
    out = decide(shipped=False, epoch=MAX - 1, last=MAX - 2, prev=P, req=(P, MAX - 2))
    assert out == ok(P, MAX - 1, MAX - 2, P)


def test_designed_2b_retry_after_rotation() -> None:
    assert decide(shipped=False, pid=N, prev=P, epoch=0, last=7, req=(P, 7)) == ok(N, 0, 7, P)


def test_designed_2c_invalid_producer_epoch() -> None:
    assert decide(shipped=False, epoch=6, last=5, prev=P, req=(P, 3)).error == Errors.INVALID_PRODUCER_EPOCH
    # another producer id took the transactional id's place: fenced too (INVALID_PRODUCER_ID_MAPPING retry)
    assert decide(shipped=False, pid=N, epoch=0, req=(P, 4)).error == Errors.INVALID_PRODUCER_EPOCH


def test_designed_and_shipped_differ_on_lost_last_epoch() -> None:
    # after a failover that lost lastProducerEpoch (-1), a retry of the bump is fenced in both
    for shipped in (True, False):
        assert decide(shipped=shipped, epoch=6, last=-1, req=(P, 5)).error != Errors.NONE


# --- before KIP-360 ----------------------------------------------------------------------------

def test_pre_kip360_ignores_request_fields_and_bumps() -> None:
    assert decide(kip360=False, epoch=5, req=(42, 1)) == ok(P, 6, -1, -1)
    assert decide(kip360=False, epoch=MAX - 1) == ok(N, 0, -1, -1)
    assert decide(kip360=False, exists=False) == ok(N, 0, -1, -1)


def test_small_max_epoch_threshold() -> None:
    # explicit runs use max_epoch = 3: epoch 2 is exhausted, 3 is reserved for fencing
    assert decide(max_epoch=3, epoch=1) == ok(P, 2, -1, P)
    assert decide(max_epoch=3, epoch=2) == ok(N, 0, -1, P)


# --- fencing and the idempotent bump (§1.5) ------------------------------------------------------

def test_fence_bumps_once_then_not_again_after_failed_fence_or_at_max() -> None:
    assert fence_producer_epoch(CONCRETE, max_epoch=MAX, epoch=MAX - 1, has_failed_epoch_fence=False) == MAX
    assert fence_producer_epoch(CONCRETE, max_epoch=MAX, epoch=5, has_failed_epoch_fence=True) == 5
    assert fence_producer_epoch(CONCRETE, max_epoch=MAX, epoch=MAX, has_failed_epoch_fence=False) == MAX


def test_idempotent_bump_resets_pid_only_at_short_max() -> None:
    assert bump_idempotent_epoch(CONCRETE, max_epoch=MAX, producer_id=P, epoch=MAX - 1) == (False, MAX)
    assert bump_idempotent_epoch(CONCRETE, max_epoch=MAX, producer_id=P, epoch=MAX) == (True, -1)


# --- sequences (§2.3) ----------------------------------------------------------------------------

INT_MAX = 2**31 - 1


def test_in_sequence_and_wrap() -> None:
    assert in_sequence(CONCRETE, max_seq=INT_MAX, last_seq=4, next_seq=5)
    assert not in_sequence(CONCRETE, max_seq=INT_MAX, last_seq=4, next_seq=6)
    assert not in_sequence(CONCRETE, max_seq=INT_MAX, last_seq=4, next_seq=4)
    assert in_sequence(CONCRETE, max_seq=INT_MAX, last_seq=INT_MAX, next_seq=0)
    assert not in_sequence(CONCRETE, max_seq=INT_MAX, last_seq=INT_MAX - 1, next_seq=0)
    # marker-only state: lastSeq -1, the next batch must start at 0
    assert in_sequence(CONCRETE, max_seq=INT_MAX, last_seq=-1, next_seq=0)


def test_increment_sequence_wraps_like_default_record_batch() -> None:
    assert increment_sequence(CONCRETE, max_seq=INT_MAX, seq=INT_MAX, inc=100) == 99
    assert increment_sequence(CONCRETE, max_seq=INT_MAX, seq=INT_MAX - 10, inc=11) == 0
    assert increment_sequence(CONCRETE, max_seq=INT_MAX, seq=5, inc=3) == 8
    assert increment_sequence(CONCRETE, max_seq=7, seq=7, inc=1) == 0


def test_valid_pid_accepts_current_new_or_previous_with_exhausted_epoch() -> None:
    from eoscheck.model.coordinator.init_producer_id import valid_producer_id

    def valid(exists=True, epoch=0, req=(P, 3)):
        return valid_producer_id(CONCRETE, max_epoch=MAX, meta_exists=exists, meta_producer_id=N,
                                 meta_prev_producer_id=P, meta_epoch=epoch, req_producer_id=req[0], req_epoch=req[1])
    assert valid(req=(N, 9))
    assert not valid(req=(P, 3)) and valid(req=(P, MAX - 1))
    assert valid(exists=False, req=(42, 1)) and valid(epoch=-1, req=(42, 1))
    assert not valid(req=(42, MAX - 1))


def test_rules_registry_lists_every_shared_rule_with_kafka_widths() -> None:
    names = set(RULES)
    assert {"init_producer_id_decision.kip360_shipped", "init_producer_id_decision.kip360_designed",
            "init_producer_id_decision.pre_kip360", "fence_producer_epoch", "bump_idempotent_epoch",
            "in_sequence", "increment_sequence"} <= names
    widths = {a: w for a, w, _ in RULES["init_producer_id_decision.kip360_shipped"].args}
    assert widths["meta_epoch"] == 16 and widths["meta_producer_id"] == 64 and widths["meta_exists"] == 1
    assert {a: w for a, w, _ in RULES["in_sequence"].args} == {"last_seq": 32, "next_seq": 32}
    for rule in RULES.values():  # every rule runs on concrete values with only its declared args
        rule.func(CONCRETE, **{a: (False if k == "bool" else 0) for a, _, k in rule.args})
