"""``kafka.eos``'s liveness properties of transactions and the group (``kafka.eos_pipeline``'s), under the
pipeline's fairness with kafka.eos's step names.

A mixin of ``EosMachine``; with no transactional producer (``producers = 0``) it declares nothing, so
the idempotent and instance liveness of the other mixins is checked under their own fairness only.

- TransactionsComplete ``[]<>``: infinitely often no transaction is open on an output partition or on
  ``__consumer_offsets`` (with finitely many records: the LSO eventually passes every transaction).
- MarkersComplete ``~>``: a transaction in PrepareCommit or PrepareAbort eventually completes.
- RebalanceSettles ``~>``: a group preparing a rebalance is eventually Stable again.

Fairness: the protocol's own steps are weakly fair, each action name across its parameters (as the
pipeline's ``WF(A)``): a request that can be sent is eventually sent, one in flight eventually arrives
and its answer is read, the coordinator's timer eventually fires, markers are eventually written,
rebalances and assignments complete, a member that must rejoin does. Faults may happen, never must:
session timeouts, delivery timeouts, lost responses, coordinator failovers, DeleteRecords, restarts.
"""

from __future__ import annotations

from eoscheck.checker.liveness.temporal import (
    WF,
    Fairness,
    TemporalProperty,
    always_eventually,
    leads_to,
)

from ..group.metadata import GroupState
from ..transactions.codes import TxnState
from ..transactions.log import open_transactions

#: the liveness properties of transactions and the group (checked when a spec names them)
TEMPORAL_DOCS: dict[str, str] = {
    "TransactionsComplete": "every transaction open on an output partition or __consumer_offsets eventually "
                            "completes: infinitely often none is open, so the LSO reaches the log end ([]<>)",
    "MarkersComplete": "a transaction in PrepareCommit or PrepareAbort eventually completes (its markers are "
                       "written and acknowledged) (~>)",
    "RebalanceSettles": "a rebalance that started eventually settles: the group is Stable again (~>)",
}

#: ``kafka.eos_pipeline``'s ``FAIR_ACTIONS`` under kafka.eos's names: its Produce is Drain, its
#: ProduceArrives HandleProduce (and HandleProduceResponse, the answer read); kafka.eos's
#: BeginTransaction, RequestTimeout and the offsets marker are steps of their own.
FAIR_ACTIONS = ("InitProducerId", "OffsetFetch", "BeginTransaction", "AddPartitionsToTxn", "Drain", "HandleProduce",
                "HandleProduceResponse", "RequestTimeout", "AddOffsetsToTxn", "TxnOffsetCommit", "EndTxn",
                "AbortTimedOutTransaction", "WriteTxnMarker", "WriteOffsetsMarker", "StaleTxnMarkerArrives",
                "StaleOffsetsMarkerArrives", "Rebalance", "OnAssignment", "Rejoin")
FAIRNESS: tuple[Fairness, ...] = tuple(WF(a) for a in FAIR_ACTIONS)

_PREPARING = (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT)


class EosLiveness:
    """The transactions' and the group's liveness (see the module doc); mixed into ``EosMachine``."""

    n_producers: int
    n_partitions: int
    _txn_slots: tuple[int, int]
    _group_slot: int

    def temporal_properties(self) -> dict[str, TemporalProperty]:
        others: dict[str, TemporalProperty] = super().temporal_properties()  # type: ignore[misc]
        if not self.n_producers:
            return others
        # each predicate is memoised on the slots it reads (liveness evaluates it on every node)
        lo = self.slot("leader")  # type: ignore[attr-defined]
        logs = (*range(lo, lo + self.n_partitions), self.slot("offsets_leader"))  # type: ignore[attr-defined]
        # the tables are fetched on a miss, not kept (compose's advice: a pickled machine rebuilds them)
        table = self.part_values  # type: ignore[attr-defined]
        # the slots are logical: read a state through readers (a slot the states leave out is a constant)
        read_logs = self.slot_reader(logs)  # type: ignore[attr-defined]
        read_txn = self.slot_reader(range(*self._txn_slots))  # type: ignore[attr-defined]
        read_group = self.slot_reader((self._group_slot,))  # type: ignore[attr-defined]
        none_open: dict[tuple, bool] = {}
        preparing: dict[tuple, bool] = {}
        settling: dict[int, int] = {}

        def no_open_transaction(s: tuple) -> bool:
            key = read_logs(s)
            ok = none_open.get(key)
            if ok is None:
                leaders, offsets = table("leader"), table("offsets_leader")
                parts = [leaders[i] for i in key[:-1]] + [offsets[key[-1]]]
                ok = none_open[key] = not any(open_transactions(p.log) for p in parts)
            return ok

        def some_preparing(s: tuple) -> bool:
            key = read_txn(s)
            ok = preparing.get(key)
            if ok is None:
                txn = table("txn")
                ok = preparing[key] = any(txn[i].state in _PREPARING for i in key)
            return ok

        def none_preparing(s: tuple) -> bool:
            return not some_preparing(s)

        def group_state(s: tuple) -> int:
            (g,) = read_group(s)
            state = settling.get(g)
            if state is None:
                state = settling[g] = table("group")[g].state
            return state

        def rebalancing(s: tuple) -> bool:
            return group_state(s) == GroupState.PREPARING_REBALANCE

        def stable(s: tuple) -> bool:
            return group_state(s) == GroupState.STABLE

        return {**others,
                "TransactionsComplete": always_eventually("TransactionsComplete", TEMPORAL_DOCS["TransactionsComplete"],
                                                          no_open_transaction),
                "MarkersComplete": leads_to("MarkersComplete", TEMPORAL_DOCS["MarkersComplete"], some_preparing,
                                            none_preparing),
                "RebalanceSettles": leads_to("RebalanceSettles", TEMPORAL_DOCS["RebalanceSettles"], rebalancing,
                                             stable)}

    def fairness(self) -> tuple[Fairness, ...]:
        others: tuple[Fairness, ...] = super().fairness()  # type: ignore[misc]
        # a scheduled completion of a marker's offsets runs eventually (eos_offsets_completion; none
        # without its bound, so the fairness of other configurations is unchanged)
        scheduled: tuple[Fairness, ...] = self.offsets_completion_fairness()  # type: ignore[attr-defined]
        return others + (FAIRNESS if self.n_producers else ()) + scheduled


__all__ = ["FAIRNESS", "FAIR_ACTIONS", "TEMPORAL_DOCS", "EosLiveness"]
