"""Review finding 23 for kafka.eos (fid16): what its ``max_epoch`` bound cuts.

``max_epoch`` is Kafka's Short.MaxValue made small, not a budget: the epoch is exhausted at
``max_epoch - 1`` (``TransactionMetadata.isEpochExhausted``), where InitProducerId (KIP-360) and a TV2
EndTxn (KIP-890 part 2) rotate to a new producer id, and a fence at ``max_epoch`` keeps the epoch. So a
run never needs more epochs than the bound: each transaction's TV2 bump ends in a rotation, and the
state constraint (a coordinator epoch above ``max_epoch``) cuts only what Kafka reaches by overflowing.

Measured, with a fence (a transaction timeout, or a restart whose InitProducerId fences the Ongoing
transaction) at ``max_epoch = 3``: the only cut is the TV2 fence-abort of an Ongoing transaction at the
exhausted epoch with the double bump (``tv2_fence_double_bump``: 4.0.0 and the 2024-10 snapshot). There
``TransactionCoordinator.endTransaction`` bumps once for the fence (``prepareFenceProducerEpoch``,
Short.MaxValue - 1 -> Short.MaxValue) and once more for the TV2 abort (``prepareAbortOrCommit``:
``(producerEpoch + 1).toShort``, with no new producer id because the pending state is PrepareEpochFence),
so Kafka writes a PrepareAbort at epoch -32768: a behaviour the model does not explore (it needs 32,766
TV2 transactions of one producer id before the fence). With one bump per fence-abort (KAFKA-19367) and
with TV1 nothing is cut."""

from __future__ import annotations

from typing import Any

import pytest
from eoscheck.model.machines.eos import machine
from eoscheck.model.transactions.codes import TxnState
from reachable_states import reachable

MAX_EPOCH = 3
#: the two ways kafka.eos fences an Ongoing transaction (its coordinator's timeout abort, a restarted
#: instance's InitProducerId), each with enough transactions to reach the exhausted epoch under TV2
FENCES = {"AbortTimedOutTransaction": {"txn_timeouts": 1}, "InitProducerId": {"restarts": 1}}


def _cuts(variant: str, bounds: dict[str, int]) -> dict[tuple[Any, ...], int]:
    """Every successor the constraint cuts, by (action, (state, epoch) before, (state, epoch, lastEpoch) after)."""
    m = machine(variant, transactions=3, max_epoch=MAX_EPOCH, **bounds)
    out: dict[tuple[Any, ...], int] = {}
    for s in reachable(m, 10**6):
        for step, t in m.successors(s):
            if not m.within_bounds(t):
                (a,), (b,) = m.view(s).txn, m.view(t).txn
                key = (step[0], (a.state, a.epoch), (b.state, b.epoch, b.last_epoch))
                out[key] = out.get(key, 0) + 1
    return out


@pytest.mark.parametrize("variant", ["kafka-4.0", "kafka-4.0-dev-2025-01", "kafka-later-trunk"])
@pytest.mark.parametrize("action", sorted(FENCES))
def test_only_the_double_bump_fence_at_the_exhausted_epoch_is_cut(variant: str, action: str) -> None:
    cuts = _cuts(variant, FENCES[action])
    exhausted = MAX_EPOCH - 1
    assert set(cuts) == {(action, (TxnState.ONGOING, exhausted),
                          (TxnState.PREPARE_ABORT, MAX_EPOCH + 1, MAX_EPOCH))}, cuts


@pytest.mark.parametrize("variant", ["kafka-trunk-2026-01", "kafka-3.8-3.9", "kafka-2.4.1"])
@pytest.mark.parametrize("action", sorted(FENCES))
def test_one_bump_per_fence_and_tv1_cut_nothing(variant: str, action: str) -> None:
    """KAFKA-19367's single bump (``kafka-trunk-2026-01``) and TV1 (3.8-3.9, 2.4.1): every run stays within
    the bound."""
    assert _cuts(variant, FENCES[action]) == {}
