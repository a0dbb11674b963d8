"""``kafka.eos``'s failed fence appends (``failed_fence_appends`` > 0), a mixin of ``EosMachine``.

The coordinator fences an Ongoing transaction's producer in two places, the transaction timeout
(``abortTimedOutTransactions``) and an InitProducerId of a new instance (``handleInitProducerId``):
``prepareFenceProducerEpoch``, then ``endTransaction(ABORT, isFromClient = false)``, which installs the
fenced epoch in memory before appending PrepareAbort to ``__transaction_state``. ``FenceAppendFails``
is that append failing (fewer in-sync replicas than min.insync.replicas, a timeout): nothing is
written, the transaction stays Ongoing at the fenced epoch in memory, no marker is sent, and
(2.6.0+, KAFKA-9666) ``hasFailedEpochFence`` is set so the next fence keeps that epoch; before, every
fence bumps again (``failed_fence_keeps_epoch``). With transaction.version 2 after KAFKA-19367 (4.0.1,
4.1.0: ``tv2_failed_fence_leaves_epoch``) nothing was installed in memory before the append and no flag is
set on its failure, so the metadata is left as it was: the producer's epoch stays current until a fence is
written, and the next fence bumps from it. The rule is ``transactions.timeout.fence_write_failed``, the one
the conformance API checks against Kafka's unit tests (INIT-11, SM-33; SM-123 for the TV2 path).

The two causes leave the same coordinator state: an InitProducerId that triggered the fence is
answered with the append's error mapped to COORDINATOR_NOT_AVAILABLE (``append_error_answer``), on
which the client looks the coordinator up and resends InitProducerId unchanged, so the step does not
touch the producer. A failure happens only where its fence is tried again within the bounds (a new
instance still sending InitProducerId, or a timeout abort left in ``txn_timeouts``): Kafka retries a
timed-out transaction's abort every cleanup interval, and a failure with no retry left would only
leave the transaction Ongoing for good (a deadlock of the bounds, not of Kafka). A later successful fence (the next timeout or the retried InitProducerId) writes
PrepareAbort, which clears the flag (``prepareComplete``); a coordinator failover loses it with the
in-memory epoch (``load_metadata``).

The instances mixin (``eos_instances``) has the InitProducerId cause for the instances' transactional id
(``InstanceFenceAppendFails``: the same rule, on the same budget; the instances have no transaction
timeout).
"""

from __future__ import annotations

from typing import Any

from eoscheck.checker.compose import precondition, rule

from ..state import TXN_BUMP, TXN_INIT, TxnMetadata, TxnProducer
from ..transactions.timeout import can_time_out, fence_write_failed
from .optional_budget import OptionalBudget, OptionalBudgets


def _fencing(machine: Any) -> range:
    return range(machine.n_producers) if machine.optional_bound("failed_fence_appends") else range(0)


class FailedFenceAppends(OptionalBudgets):
    """Failed PrepareAbort appends of the coordinator's fences (see the module doc)."""

    n_producers: int
    max_epoch: int
    bounds: dict[str, int]
    protocol: Any
    server_tv2: bool

    failed_fence_appends = OptionalBudget("failed_fence_appends", actions=("FenceAppendFails",),
                                          doc="fences whose PrepareAbort append to __transaction_state failed")

    # a gate on the metadata alone: only an Ongoing transaction with no transition pending is fenced
    @precondition(lambda self, txn: can_time_out(txn))
    @rule("FenceAppendFails", params={"t": _fencing}, reads=("txn[t]", "producer[t]", "txn_timeouts"),
          writes=("txn[t]",), results=("cause", "epoch"), spends="failed_fence_appends")
    def fence_append_fails(self, txn: TxnMetadata, producer: TxnProducer, txn_timeouts: int) -> Any:
        """The coordinator fences the Ongoing transaction and the PrepareAbort append fails: the fenced
        epoch stays in memory, nothing is written. The fence is one that will be tried again within the
        bounds, so the transaction is not left Ongoing for good: the transaction timeout while a timeout
        abort is left (the coordinator retries it every cleanup interval), or the InitProducerId of the
        producer's new instance (answered COORDINATOR_NOT_AVAILABLE, which the client resends)."""
        if producer.phase in (TXN_INIT, TXN_BUMP):
            cause = "InitProducerId"
        elif txn_timeouts < self.bounds["txn_timeouts"]:
            cause = "timeout"
        else:
            return None
        failed = self.failed_fence(txn)
        return {"txn": failed, "cause": cause, "epoch": failed.epoch}

    def failed_fence(self, txn: TxnMetadata) -> TxnMetadata:
        """The metadata after a fence-abort whose PrepareAbort append failed. The coordinator's own abort
        runs at the server's transaction version (``transactionVersionLevel()``), not the client's, so the
        TV2 rule (KAFKA-19367) applies whenever the server has TV2 (``server_tv2``: also while clients
        upgrade or downgrade)."""
        return fence_write_failed(txn, max_epoch=self.max_epoch, keeps_epoch=self.protocol.failed_fence_keeps_epoch,
                                  leaves_epoch=self.server_tv2 and self.protocol.tv2_failed_fence_leaves_epoch)
