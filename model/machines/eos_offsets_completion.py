"""``kafka.eos``'s scheduled completion of a marker's offsets (``delayed_offset_completions`` > 0), a mixin
of ``EosMachine``.

A COMMIT or ABORT marker on ``__consumer_offsets`` ends the producer's pending transactional offsets
in the group coordinator (``completePendingTxnOffsetCommit``: COMMIT materialises them, ABORT drops
them). From 2.0.0 (KAFKA-6917, c53e274d312, which moved it off the request thread to avoid a
deadlock) until KAFKA-17507 (4.0.0, PR 18168), ``KafkaApis.handleWriteTxnMarkersRequest`` calls
``onTransactionCompleted``, which only schedules ``handleTxnCompletion`` on the broker's scheduler,
and sends the WriteTxnMarkers response without waiting for it. The transaction coordinator can then
complete the transaction, and the producer can begin its next one and commit its next offset with
TxnOffsetCommit before the scheduled task runs. The pending offsets are keyed by producer id alone
(``pendingTransactionalOffsetCommits``), so the task completes the *new* transaction's offset with
the old marker's result: a COMMIT makes it the committed offset while its transaction is still open.
(When the new offset is prepared but not yet appended, Kafka throws the IllegalStateException that
KAFKA-17507 reports and drops it; ``kafka.eos`` prepares and appends in one step, so only the first
outcome is reachable.)

``WriteOffsetsMarkerAsync`` is ``WriteOffsetsMarker`` with the completion scheduled instead of run
(``txn_offsets_completion_async``, on the budget ``delayed_offset_completions``);
``CompleteTxnOffsets`` is the scheduler running one scheduled completion (any of them: the scheduler
is a thread pool). Without the budget, or with the switch off (0.11-1.1, 4.0), markers complete their
offsets in their own step as before. Stale markers of a coordinator that failed over
(``StaleOffsetsMarkerArrives``) still complete at once.
"""

from __future__ import annotations

from typing import Any

from eoscheck.checker.compose import precondition, rule
from eoscheck.checker.liveness.temporal import WF, Fairness

from .. import properties as props
from ..group.pending_offsets import run_txn_offset_completion
from ..state import TxnMetadata, TxnPartitionState
from ..transactions.codes import TxnResult, TxnState
from .eos_group import GroupOffsets
from .optional_budget import OptionalBudget, OptionalBudgets

_PREPARING = frozenset({int(TxnState.PREPARE_COMMIT), int(TxnState.PREPARE_ABORT)})


def _deferring(machine: Any) -> range:
    on = machine.optional_bound("delayed_offset_completions") and machine.protocol.txn_offsets_completion_async
    return range(machine.n_producers) if on and machine.input_records else range(0)


def _scheduled(machine: Any) -> range:
    return range(machine.optional_bound("delayed_offset_completions")) if _deferring(machine) else range(0)


class ScheduledOffsetCompletion(OptionalBudgets):
    """Markers on __consumer_offsets whose offsets the group coordinator completes later (module doc)."""

    n_producers: int
    input_records: int
    protocol: Any

    # on with the switch and consume-transform-produce as well as the budget
    delayed_offset_completions = OptionalBudget(
        "delayed_offset_completions", actions=("WriteOffsetsMarkerAsync", "CompleteTxnOffsets"), live=_deferring,
        doc="markers on __consumer_offsets answered before their offsets completed")

    def offsets_completion_fairness(self) -> tuple[Fairness, ...]:
        """The broker's scheduler runs every scheduled task eventually (weak fairness; nothing without
        the mechanism)."""
        return (WF("CompleteTxnOffsets"),) if _deferring(self) else ()

    @precondition(lambda self, txn: txn.state in _PREPARING and props.OFFSETS_PARTITION in txn.partitions)
    @rule("WriteOffsetsMarkerAsync", params={"t": _deferring},
          reads=("txn[t]", "offsets_leader", "group:offsets", "coordinator_epoch", "now"),
          writes=("txn[t]", "txn_log[t]", "offsets_leader", "group:offsets"), results=("result",),
          spends="delayed_offset_completions")
    def write_offsets_marker_async(self, txn: TxnMetadata, offsets_leader: TxnPartitionState, group: GroupOffsets,
                                   coordinator_epoch: int, now: int) -> Any:
        """The marker on __consumer_offsets is written and answered; the group coordinator's completion of
        the producer's pending offsets is only scheduled (2.0-3.9)."""
        return self._offsets_marker(txn, offsets_leader, group, coordinator_epoch, now,  # type: ignore[attr-defined]
                                    deferred=True)

    @precondition(lambda self, i, group: i < len(group.completing))
    @rule("CompleteTxnOffsets", params={"i": _scheduled}, reads=("group:offsets",), writes=("group:offsets",),
          results=("producer_id", "result"))
    def complete_txn_offsets(self, i: int, group: GroupOffsets) -> Any:
        """The scheduler runs ``handleTxnCompletion``: the producer id's offsets pending now are completed
        with the marker's result."""
        producer_id, commit = group.completing[i]
        return {"group": run_txn_offset_completion(group, i),  # type: ignore[arg-type]
                "producer_id": producer_id, "result": (TxnResult.COMMIT if commit else TxnResult.ABORT).name}
