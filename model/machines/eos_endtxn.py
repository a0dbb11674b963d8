"""``kafka.eos``'s late EndTxn and the client's transaction version, a mixin of ``EosMachine``.

**Late EndTxn** (``endtxn_timeouts`` > 0). The client sends EndTxn, gets no answer within
request.timeout.ms, closes the connection and sends the same request again (``TransactionManager``
re-enqueues an EndTxn whose connection dropped, with the same producer id, epoch and result). The
first copy may still reach the coordinator, before the retry or after it, and nobody reads its
answer. ``EndTxnTimesOut`` puts that first copy on ``late_end_txn`` and leaves the client waiting to
end the transaction; the client's next ``EndTxn`` is the retry (atomic with its answer, as every
EndTxn of ``kafka.eos``); ``StaleEndTxnArrives`` is the coordinator handling the first copy whenever
it arrives (``TransactionCoordinator.handleEndTransaction``), by the request's own transaction
version:

* TV1 (``transaction.end_txn``): a copy arriving after the retry completed meets CompleteCommit
  (COMMIT: a retry, answered NONE) or, once the producer began its next transaction with the same
  epoch, Ongoing: it ends that transaction (the bug KIP-890 part 2 fixes);
* TV2 (``transaction.end_txn_tv2``, KIP-890 part 2): every EndTxn bumps the epoch, so a copy one
  epoch below is recognised as a retry, and one further below is fenced.

Both orders of copy and retry are covered: a copy delivered before the retry makes the retry meet
PrepareX (CONCURRENT_TRANSACTIONS, retried) or CompleteX (a retry, answered NONE). A TV2 EndTxn(ABORT)
copy may start an abort of an empty transaction (Empty/CompleteX and the current epoch); the
coordinator completes it without markers (``CompleteEmptyTransaction``).

**Client transaction version** (``client_tv_change``): each producer keeps the transaction version
its EndTxn carries (``TxnProducer.tv``: 0 or 2) and may switch it once, between two transactions
(``ClientTransactionVersion``; KIP-890 part 2's rolling upgrade: the version is carried by each
transaction, ``TxnMetadata.tv``). The broker then runs TV2 (its InitProducerId, timeout abort and
state table), while each EndTxn is validated by its own version. A TV2 client does not bump its epoch
with InitProducerId after an abort: the EndTxn answer carries the bumped epoch (KAFKA-17898).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from eoscheck.checker.compose import (
    Channel,
    Delivery,
    Network,
    precondition,
    rule,
)

from ..errors import error_name
from ..producer import transactional as tx
from ..protocol import ClientTvChange, TransactionVersion
from ..state import TXN_READY, TxnMetadata, TxnProducer
from ..transactions.codes import TxnResult, TxnState
from ..transactions.end_txn import end_txn, end_txn_tv2
from ..transactions.markers import complete_if_done
from .optional_budget import OptionalBudget, OptionalBudgets

#: the actions of this mixin (listed only when their bound or switch is on)
LATE_ACTIONS = frozenset({"EndTxnTimesOut", "StaleEndTxnArrives", "CompleteEmptyTransaction"})
TV_ACTIONS = frozenset({"ClientTransactionVersion"})
#: ``fields`` keys hidden while the mechanism is off (counterexamples of other configurations unchanged)
_LATE_FIELDS = frozenset({"late_end_txn"})
#: the parts whose shown producers carry ``tv`` (hidden while no client changes its version)
_TV_OWNERS = frozenset({"producer", "zombie"})


class EndTxnRequest(NamedTuple):
    """An EndTxn request the client gave up on, still on its way to the coordinator."""

    client: int
    producer_id: int
    epoch: int
    result: int  # TxnResult
    tv: int  # the transaction version the request carries (0, or 2: EndTxn v5)


def _show_late(msgs: tuple[EndTxnRequest, ...]) -> list[str]:
    return [f"EndTxn({TxnResult(m.result).name}, producer{m.client}, pid {m.producer_id}, epoch {m.epoch}, "
            f"TV{m.tv})" for m in msgs]


def _timing_out(machine: Any) -> range:
    return range(machine.n_producers) if machine.optional_bound("endtxn_timeouts") else range(0)


def _empty_aborts(machine: Any) -> range:
    return range(machine.n_producers) if machine.server_tv2 and machine.empty_aborts_possible() else range(0)


def _changing(machine: Any) -> range:
    return range(machine.n_producers) if machine.tv_change != ClientTvChange.NONE else range(0)


def end_request(producer: TxnProducer, consume: bool) -> int | None:
    """The result of the EndTxn request the producer would send now (None: it sends none)."""
    if tx.ready_to_commit(producer, consume):
        return int(TxnResult.COMMIT)
    # an abort after an InvalidPidMappingException sends InitProducerId, no EndTxn (2.5.0 .. 3.9.x)
    if tx.ready_to_abort(producer) and not tx.skips_end_txn(producer) and (producer.added or producer.offsets):
        return int(TxnResult.ABORT)
    return None


class LateEndTxn(OptionalBudgets):
    """Late EndTxn requests and per-producer transaction versions of ``kafka.eos`` (see the module doc)."""

    n_producers: int
    consume: bool
    max_epoch: int
    protocol: Any
    tv2: bool

    late_end_txn = Channel(network=Network(Delivery.UNORDERED), show=_show_late,
                           doc="EndTxn requests the client gave up on (request.timeout.ms), still in flight")
    endtxn_timeouts = OptionalBudget("endtxn_timeouts", actions=("EndTxnTimesOut", "StaleEndTxnArrives"),
                                     doc="EndTxn requests timed out on the client and sent again")

    def _end_txn_setup(self) -> None:
        """This mixin's attributes (its budget's are ``OptionalBudgets``'); ValueError (one line) for a
        configuration it cannot honour."""
        p = self.protocol
        self.tv_change = p.client_tv_change
        tv2 = p.transaction_version == TransactionVersion.TV2
        if self.tv_change == ClientTvChange.UPGRADE and tv2:
            raise ValueError("client_tv_change=upgrade needs transaction_version=tv1 (the clients start on TV1 and "
                             "upgrade to TV2)")
        if self.tv_change == ClientTvChange.DOWNGRADE and not tv2:
            raise ValueError("client_tv_change=downgrade needs transaction_version=tv2 (the clients start on TV2 and "
                             "downgrade to TV1)")
        # the broker runs TV2 once any client may send a TV2 EndTxn
        self.server_tv2 = tv2 or self.tv_change != ClientTvChange.NONE

    def empty_aborts_possible(self) -> bool:
        """Whether a TV2 EndTxn(ABORT) can find nothing added: a late copy (``endtxn_timeouts``), or the client's
        own abort after an abortable error that can come before any partition is added at the coordinator (a
        TV2 client sends EndTxn once a send() was triggered, ``EosMachine.end_transaction``): a failed send(),
        or, where the leader adds partitions, a batch whose delivery timed out or whose connection closed
        before its leader added it, or (``verification_steps``) that the leader refused after it skipped the
        add, the marker having closed the transaction it counted on (KAFKA-18575's second outcome). Otherwise
        every TV2 abort has a partition, and the rule stays unlisted."""
        b = self.bounds  # type: ignore[attr-defined]
        leader = getattr(self, "leader_adds_partitions", False) and (
            b.get("produce_timeouts", 0) or b.get("lost_responses", 0) or b.get("verification_steps", 0))
        return bool(self.optional_bound("endtxn_timeouts") or b.get("send_errors", 0) or leader)

    def end_txn_idle_actions(self) -> set[str]:
        """Actions with no bindings in this configuration (not listed), besides the budget's."""
        idle: set[str] = set()
        if not (self.server_tv2 and self.empty_aborts_possible()):
            idle.add("CompleteEmptyTransaction")
        return idle | (set(TV_ACTIONS) if self.tv_change == ClientTvChange.NONE else set())

    def fields(self, state: tuple) -> dict[str, Any]:
        """Every part by name, without this mixin's while it is off."""
        out: dict[str, Any] = super().fields(state)
        if not self.optional_bound("endtxn_timeouts"):
            out = {k: v for k, v in out.items() if k not in _LATE_FIELDS}
        if self.tv_change == ClientTvChange.NONE:
            out = {k: v for k, v in out.items() if not (k.endswith("].tv") and k.split("[")[0] in _TV_OWNERS)}
        return out

    def end_txn_itf_fields(self, v: Any) -> dict[str, Any]:
        """``late_end_txn`` as records for ITF (while the mechanism is on)."""
        if not self.optional_bound("endtxn_timeouts"):
            return {}
        from .itf_data import record
        return {"late_end_txn": [record(m, result=TxnResult(m.result).name) for m in v.late_end_txn]}

    def coordinator_end_txn(self, txn: TxnMetadata, producer_id: int, epoch: int, result: int, tv: int,
                            next_producer_id: int) -> Any:
        """``handleEndTransaction`` validated by the request's transaction version (an exhausted TV2
        epoch rotates to the allocator's next producer id)."""
        if tv >= 2:
            # kafka.eos writes PrepareX in one step, its completion to come: Kafka's CompleteX pending
            return end_txn_tv2(txn, producer_id, epoch, result, new_producer_id=next_producer_id,
                               max_epoch=self.max_epoch, prepare_pending=True,
                               epoch_first=not self.protocol.tv2_end_txn_pending_first,
                               producer_id_first=not self.protocol.tv2_end_txn_pending_before_producer_id,
                               late_commit_fenced=self.protocol.tv2_late_commit_fenced)
        return end_txn(txn, producer_id, epoch, result)

    def bumps_after_abort(self, producer: TxnProducer) -> bool:
        """Whether the client bumps its epoch with InitProducerId after an abort that needs it: a KIP-360
        client on TV1 (a TV2 EndTxn answer already carries the bumped epoch)."""
        return self.protocol.client_epoch_bump_after_abort and producer.tv < 2

    # --- rules ------------------------------------------------------------------------------------

    @rule("EndTxnTimesOut", params={"t": _timing_out}, reads=("producer[t]",), sends=("late_end_txn",),
          spends="endtxn_timeouts", results=("result",))
    def end_txn_times_out(self, t: int, producer: TxnProducer) -> Any:
        """request.timeout.ms passes for the EndTxn the client sent: it closes the connection and will send
        the request again; the first copy stays in flight."""
        result = end_request(producer, self.consume)
        if result is None:
            return None
        return {"late_end_txn": EndTxnRequest(t, producer.producer_id, producer.epoch, result, producer.tv),
                "result": TxnResult(result).name}

    @rule("StaleEndTxnArrives", receive="late_end_txn", params=("client", "epoch"),
          reads=("txn[client]", "next_producer_id"), writes=("txn[client]", "txn_log[client]", "next_producer_id"),
          results=("result", "error"), show={"error": error_name})
    def stale_end_txn_arrives(self, msg: EndTxnRequest, txn: TxnMetadata, next_producer_id: int) -> Any:
        """The coordinator handles the first copy; its answer goes to a closed connection."""
        out = self.coordinator_end_txn(txn, msg.producer_id, msg.epoch, msg.result, msg.tv, next_producer_id)
        step = {"result": TxnResult(msg.result).name, "error": int(out.error)}
        if not out.wrote:
            return step
        rotated = out.meta.next_producer_id >= 0
        return {**self._coordinator(out.meta), **step,  # type: ignore[attr-defined]
                "next_producer_id": next_producer_id + (1 if rotated else 0)}

    @precondition(lambda self, txn: txn.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT)
                  and not txn.partitions)
    @rule("CompleteEmptyTransaction", params={"t": _empty_aborts}, reads=("txn[t]",), writes=("txn[t]", "txn_log[t]"))
    def complete_empty_transaction(self, txn: TxnMetadata) -> Any:
        """A TV2 abort of a transaction with no partition completes at once (no markers to send)."""
        done, wrote = complete_if_done(txn)
        return self._coordinator(done) if wrote else None  # type: ignore[attr-defined]

    @precondition(lambda self, producer: producer.phase == TXN_READY and producer.tv == self.tv_from
                  and (not self.consume or producer.position >= 0))
    @rule("ClientTransactionVersion", params={"t": _changing}, reads=("producer[t]",), writes=("producer[t]",),
          results=("tv",))
    def client_transaction_version(self, producer: TxnProducer) -> Any:
        """The client switches its transaction version between two transactions (a rolling upgrade or
        downgrade of the application); its next EndTxn carries the new one."""
        return {"producer": producer._replace(tv=2 - producer.tv), "tv": 2 - producer.tv}

    @property
    def tv_from(self) -> int:
        """The transaction version a client switches from (it switches at most once)."""
        return 0 if self.tv_change == ClientTvChange.UPGRADE else 2


__all__ = ["LATE_ACTIONS", "TV_ACTIONS", "EndTxnRequest", "LateEndTxn", "end_request"]
