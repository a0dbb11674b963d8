"""Conformance of the coordinator's InitProducerId rules with kafka-semantics.md §1.2-1.7.

Written from the reference (not from the model's code): each test is one row or edge case of the
reference, with the reference's numbers. P = the transactional id's current producer id,
PP = its previous producer id (after a rotation), N = the id the allocator hands out next.
"""

from __future__ import annotations

import pytest
from eoscheck.checker.ops import CONCRETE
from eoscheck.model.coordinator.fencing import fence_producer_epoch
from eoscheck.model.coordinator.init_producer_id import init_producer_id_decision
from eoscheck.model.errors import Errors
from eoscheck.model.partition.sequence import in_sequence, increment_sequence
from eoscheck.model.producer.idempotent_epoch import bump_idempotent_epoch

SHORT_MAX = 32767          # Short.MAX_VALUE
EXHAUSTED = SHORT_MAX - 1  # isEpochExhausted(e) := e >= 32766
INT_MAX = 2**31 - 1
P, PP, N = 41, 17, 900
NONE_REQ = (-1, -1)


class Meta:
    """A transactional id's metadata as the reference's M = (pid P, prev Pp, epoch E, last L)."""

    def __init__(self, pid: int = P, prev: int = P, epoch: int = 5, last: int = -1, exists: bool = True):
        self.pid, self.prev, self.epoch, self.last, self.exists = pid, prev, epoch, last, exists


NO_META = Meta(pid=-1, prev=-1, epoch=-1, last=-1, exists=False)


def init(meta: Meta, req: tuple[int, int] = NONE_REQ, *, mode: str = "shipped", max_epoch: int = SHORT_MAX,
         new_pid: int = N):
    return init_producer_id_decision(
        CONCRETE, kip360=mode != "pre-kip360", shipped=mode == "shipped", max_epoch=max_epoch,
        meta_exists=meta.exists, meta_producer_id=meta.pid, meta_prev_producer_id=meta.prev,
        meta_epoch=meta.epoch, meta_last_epoch=meta.last, req_producer_id=req[0], req_epoch=req[1],
        new_producer_id=new_pid)


def after(meta: Meta, out) -> Meta:
    """The metadata once the outcome's Empty transition is written (errors change nothing)."""
    if out.error != Errors.NONE:
        return meta
    return Meta(out.producer_id, out.prev_producer_id, out.epoch, out.last_epoch)


# --- §1.2 request pre-validation --------------------------------------------------------------------

@pytest.mark.parametrize("req", [(P, -1), (-1, 5)])
def test_only_one_of_pid_and_epoch_is_invalid_request(req: tuple[int, int]) -> None:
    out = init(Meta(epoch=5), req)
    assert out.error == Errors.INVALID_REQUEST
    assert (out.producer_id, out.epoch) == (P, 5)  # never reaches the coordinator: nothing changes


def test_invalid_request_does_not_consume_a_new_pid_for_unknown_tid() -> None:
    out = init(NO_META, (P, -1))
    assert out.error == Errors.INVALID_REQUEST
    assert out.producer_id != N


# --- §1.4 summary table, Kafka as shipped ---------------------------------------------------------

def test_row_none_no_metadata_new_pid_epoch_0() -> None:
    out = init(NO_META)
    assert (out.error, out.producer_id, out.epoch, out.last_epoch) == (Errors.NONE, N, 0, -1)


def test_row_expected_no_metadata_new_pid_epoch_0() -> None:
    # transactional id expired: validPid accepts through E == -1 and the new pid is returned (§3.3)
    out = init(NO_META, (P, 12))
    assert (out.error, out.producer_id, out.epoch) == (Errors.NONE, N, 0)


def test_metadata_created_never_written_accepts_any_expected_pid() -> None:
    # validPid: meta.epoch == -1 -> accept; the metadata's own (freshly generated) pid is used
    out = init(Meta(pid=77, prev=-1, epoch=-1, last=-1), (12345, 3))
    assert (out.error, out.producer_id, out.epoch) == (Errors.NONE, 77, 0)


@pytest.mark.parametrize("last", [-1, 3])
def test_row_none_bumps_and_clears_last(last: int) -> None:
    out = init(Meta(epoch=5, last=last))
    assert (out.error, out.producer_id, out.epoch, out.last_epoch) == (Errors.NONE, P, 6, -1)


def test_row_none_exhausted_rotates() -> None:
    out = init(Meta(epoch=EXHAUSTED, last=7))
    assert (out.error, out.producer_id, out.epoch, out.last_epoch, out.prev_producer_id) == (
        Errors.NONE, N, 0, -1, P)


def test_row_same_instance_bumps_and_records_last() -> None:
    out = init(Meta(epoch=5), (P, 5))
    assert (out.error, out.producer_id, out.epoch, out.last_epoch) == (Errors.NONE, P, 6, 5)
    # a normal bump leaves previousProducerId == producerId (§1.3 completeTransitionTo)
    assert out.prev_producer_id == P


def test_row_same_instance_exhausted_rotates_recording_last() -> None:
    out = init(Meta(epoch=EXHAUSTED), (P, EXHAUSTED))
    assert (out.error, out.producer_id, out.epoch, out.last_epoch, out.prev_producer_id) == (
        Errors.NONE, N, 0, EXHAUSTED, P)


def test_row_retry_of_lost_bump_returns_current_pair_without_bump() -> None:
    meta = Meta(epoch=6, last=5)
    out = init(meta, (P, 5))
    assert (out.error, out.producer_id, out.epoch, out.last_epoch) == (Errors.NONE, P, 6, 5)
    assert out.producer_id != N


@pytest.mark.parametrize("e", [0, 3, 7, 100])
def test_row_stale_epoch_is_producer_fenced(e: int) -> None:
    out = init(Meta(epoch=6, last=5), (P, e))
    assert out.error == Errors.PRODUCER_FENCED
    assert (out.producer_id, out.epoch, out.last_epoch) == (P, 6, 5)


@pytest.mark.parametrize("e", [EXHAUSTED - 1, 5])
def test_row_exhausted_epoch_mismatch_is_server_error_no_change(e: int) -> None:
    # §1.4/§1.7: prepareIncrementProducerEpoch's exhaustion precondition -> IllegalStateException,
    # "server error / no state change"; includes the retry (e == L) of the bump that produced 32766
    meta = Meta(epoch=EXHAUSTED, last=EXHAUSTED - 1)
    out = init(meta, (P, e))
    assert out.error == Errors.UNKNOWN_SERVER_ERROR
    assert (out.producer_id, out.epoch, out.last_epoch) == (P, EXHAUSTED, EXHAUSTED - 1)
    assert out.producer_id != N


def test_row_retry_after_rotation_with_previous_pid_returns_current() -> None:
    # metadata after a rotation: (N, prev P, 0, L = 32766); the lost response is retried with (P, 32766)
    meta = Meta(pid=N, prev=P, epoch=0, last=EXHAUSTED)
    out = init(meta, (P, EXHAUSTED), new_pid=N + 1)
    assert (out.error, out.producer_id, out.epoch) == (Errors.NONE, N, 0)


def test_previous_pid_with_exhausted_epoch_not_last_is_fenced() -> None:
    meta = Meta(pid=N, prev=P, epoch=0, last=-1)
    out = init(meta, (P, EXHAUSTED), new_pid=N + 1)
    assert out.error == Errors.PRODUCER_FENCED


def test_previous_pid_with_small_epoch_fails_valid_pid() -> None:
    meta = Meta(pid=N, prev=P, epoch=3, last=2)
    out = init(meta, (P, 2), new_pid=N + 1)
    assert out.error == Errors.PRODUCER_FENCED


@pytest.mark.parametrize("req", [(999, 5), (999, EXHAUSTED), (PP, 5)])
def test_foreign_pid_is_fenced(req: tuple[int, int]) -> None:
    out = init(Meta(pid=P, prev=PP, epoch=5, last=4), req)
    if req == (PP, 5):
        assert out.error == Errors.PRODUCER_FENCED  # previous pid only with an exhausted epoch
    else:
        assert out.error == Errors.PRODUCER_FENCED


def test_lost_response_retry_scenario_no_extra_bump() -> None:
    # the reference's story: bump (P,5)->(P,6) answered but lost; the retry (P,5) gets (P,6) again,
    # then the producer's next bump (P,6) gives (P,7)
    m0 = Meta(epoch=5)
    o1 = init(m0, (P, 5))
    m1 = after(m0, o1)
    o2 = init(m1, (P, 5))
    assert (o2.error, o2.producer_id, o2.epoch) == (Errors.NONE, P, 6)
    m2 = after(m1, o2)
    o3 = init(m2, (P, 6))
    assert (o3.error, o3.epoch, o3.last_epoch) == (Errors.NONE, 7, 6)


def test_rotation_then_retry_chain() -> None:
    m0 = Meta(epoch=EXHAUSTED)
    o1 = init(m0, (P, EXHAUSTED))
    m1 = after(m0, o1)
    assert (m1.pid, m1.epoch, m1.prev, m1.last) == (N, 0, P, EXHAUSTED)
    o2 = init(m1, (P, EXHAUSTED), new_pid=N + 1)
    assert (o2.error, o2.producer_id, o2.epoch) == (Errors.NONE, N, 0)


# --- §1.5 thresholds with a small max epoch (explicit runs) -----------------------------------------

def test_threshold_scales_with_max_epoch() -> None:
    # max_epoch 5: exhausted at 4; 3 -> 4 by a bump, 4 -> rotation
    assert init(Meta(epoch=3), max_epoch=5).epoch == 4
    out = init(Meta(epoch=4), max_epoch=5)
    assert (out.producer_id, out.epoch) == (N, 0)


def test_init_producer_id_never_hands_out_max_epoch() -> None:
    for e in range(6):
        for req in (NONE_REQ, (P, e)):
            out = init(Meta(epoch=e, last=-1), req, max_epoch=6)
            if out.error == Errors.NONE:
                assert out.epoch <= 6 - 1


# --- pre-KIP-360 coordinator (§1.5) ------------------------------------------------------------------

def test_pre_kip360_ignores_request_fields_and_bumps() -> None:
    out = init(Meta(epoch=5), (P, 2), mode="pre-kip360")
    assert (out.error, out.producer_id, out.epoch) == (Errors.NONE, P, 6)


def test_pre_kip360_same_32766_threshold() -> None:
    out = init(Meta(epoch=EXHAUSTED), mode="pre-kip360")
    assert (out.error, out.producer_id, out.epoch) == (Errors.NONE, N, 0)
    assert init(Meta(epoch=EXHAUSTED - 1), mode="pre-kip360").epoch == EXHAUSTED


def test_pre_kip360_retry_bumps_again() -> None:
    # no retry safety: the retry of a lost answer is a second bump
    m0 = Meta(epoch=5)
    m1 = after(m0, init(m0, mode="pre-kip360"))
    assert init(m1, mode="pre-kip360").epoch == 7


# --- KIP-360 as designed (KIP text cases) ---------------------------------------------------------------

def test_kip_1a_no_state_new_pid() -> None:
    out = init(NO_META, mode="designed")
    assert (out.error, out.producer_id, out.epoch) == (Errors.NONE, N, 0)


def test_kip_1b_i_bump_last_empty() -> None:
    out = init(Meta(epoch=5, last=4), mode="designed")
    assert (out.error, out.producer_id, out.epoch, out.last_epoch) == (Errors.NONE, P, 6, -1)


def test_kip_1b_ii_overflow_new_pid_last_empty() -> None:
    out = init(Meta(epoch=EXHAUSTED), mode="designed")
    assert (out.error, out.producer_id, out.epoch, out.last_epoch) == (Errors.NONE, N, 0, -1)


def test_kip_2a_i_bump_last_is_previous_pair() -> None:
    out = init(Meta(epoch=5), (P, 5), mode="designed")
    assert (out.error, out.producer_id, out.epoch, out.prev_producer_id, out.last_epoch) == (
        Errors.NONE, P, 6, P, 5)


def test_kip_2a_ii_overflow_last_is_old_pair() -> None:
    out = init(Meta(epoch=EXHAUSTED), (P, EXHAUSTED), mode="designed")
    assert (out.error, out.producer_id, out.epoch, out.prev_producer_id, out.last_epoch) == (
        Errors.NONE, N, 0, P, EXHAUSTED)


def test_kip_2b_retry_returns_current_pair_also_after_overflow() -> None:
    m0 = Meta(epoch=EXHAUSTED)
    m1 = after(m0, init(m0, (P, EXHAUSTED), mode="designed"))
    out = init(m1, (P, EXHAUSTED), mode="designed", new_pid=N + 1)
    assert (out.error, out.producer_id, out.epoch) == (Errors.NONE, N, 0)
    # and the retry of the bump 32765 -> 32766 is not a server error in the KIP's design
    m = Meta(epoch=EXHAUSTED, prev=P, last=EXHAUSTED - 1)
    out = init(m, (P, EXHAUSTED - 1), mode="designed")
    assert (out.error, out.producer_id, out.epoch) == (Errors.NONE, P, EXHAUSTED)


def test_kip_2c_else_invalid_producer_epoch() -> None:
    out = init(Meta(epoch=6, prev=P, last=5), (P, 2), mode="designed")
    assert out.error == Errors.INVALID_PRODUCER_EPOCH


def test_kip_invalid_mapping_recovery_other_pid_installed() -> None:
    # "if a different producerId has been assigned, return INVALID_PRODUCER_EPOCH"
    out = init(Meta(pid=500, prev=500, epoch=0), (P, 9), mode="designed")
    assert out.error == Errors.INVALID_PRODUCER_EPOCH


# --- fencing and the idempotent local bump (§1.3, §1.5, §1.7) ------------------------------------------

def test_fence_bumps_epoch() -> None:
    assert fence_producer_epoch(CONCRETE, max_epoch=SHORT_MAX, epoch=5, has_failed_epoch_fence=False) == 6


def test_fence_at_exhausted_reaches_max() -> None:
    # shouldUseLastEpochToFenceWhenEpochsAreExhausted: 32766 -> 32767
    assert fence_producer_epoch(CONCRETE, max_epoch=SHORT_MAX, epoch=EXHAUSTED,
                                has_failed_epoch_fence=False) == SHORT_MAX


def test_fence_after_failed_fence_does_not_bump_again() -> None:
    assert fence_producer_epoch(CONCRETE, max_epoch=SHORT_MAX, epoch=6, has_failed_epoch_fence=True) == 6


def test_fence_at_max_later_trunk_no_bump() -> None:
    assert fence_producer_epoch(CONCRETE, max_epoch=SHORT_MAX, epoch=SHORT_MAX,
                                has_failed_epoch_fence=False) == SHORT_MAX


def test_idempotent_bump_below_max() -> None:
    assert bump_idempotent_epoch(CONCRETE, max_epoch=SHORT_MAX, producer_id=P, epoch=3) == (False, 4)


def test_idempotent_bump_reaches_max_locally() -> None:
    # the local bump resets only at == 32767, so 32766 -> 32767 is a normal bump
    needs_new, e = bump_idempotent_epoch(CONCRETE, max_epoch=SHORT_MAX, producer_id=P, epoch=EXHAUSTED)
    assert (bool(needs_new), e) == (False, SHORT_MAX)


def test_idempotent_bump_at_max_resets_pid() -> None:
    needs_new, _ = bump_idempotent_epoch(CONCRETE, max_epoch=SHORT_MAX, producer_id=P, epoch=SHORT_MAX)
    assert bool(needs_new)


# --- sequence arithmetic (§2.3) -------------------------------------------------------------------------

@pytest.mark.parametrize("last,nxt,expected", [
    (-1, 0, True), (-1, 3, False), (4, 5, True), (4, 6, False), (4, 4, False), (4, 3, False),
    (INT_MAX, 0, True), (INT_MAX - 1, INT_MAX, True), (INT_MAX, 1, False),
])
def test_in_sequence(last: int, nxt: int, expected: bool) -> None:
    assert bool(in_sequence(CONCRETE, max_seq=INT_MAX, last_seq=last, next_seq=nxt)) is expected


@pytest.mark.parametrize("seq,inc,expected", [
    (0, 1, 1), (10, 5, 15), (INT_MAX, 100, 99), (INT_MAX - 10, 20, 9), (INT_MAX, 1, 0), (INT_MAX - 1, 1, INT_MAX),
])
def test_increment_sequence(seq: int, inc: int, expected: int) -> None:
    assert increment_sequence(CONCRETE, max_seq=INT_MAX, seq=seq, inc=inc) == expected
