"""Leader failover of ``kafka.eos``'s transactional output partitions, a mixin of ``EosMachine``.

``TxnLeaderFailover(p, rebuilt, snapshot, marker_of)`` moves the leadership of output partition ``p`` to another
replica, spending one of three budgets, one per kind of replica (``partition.replica``):

- ``output_leader_failovers``: the in-sync follower (its producer state is the leader's: it
  replicated the same appends);
- ``output_restarted_replica_failovers``: a replica restarted without producer-state snapshots,
  which rebuilt its table from its log above the log start offset;
- ``output_snapshot_restored_failovers``: a replica restored from the producer-state snapshot it took
  at offset ``snapshot`` (any offset from the log start offset to the log end: one successor each),
  then the log above it replayed.

Produce requests still in flight to the old leader are answered NOT_LEADER_OR_FOLLOWER (the broker
that lost the leadership answers what it has not appended), and the producer retries them to the
new leader with their sequences. A failover may also cut the answer to a WriteTxnMarkers request
the old leader had appended (``marker_of``: the transactional id whose marker it was, -1 if none):
the coordinator still waits for the partition and sends the marker again, now to the new leader,
which already has it (a retry its epoch check must let through: KAFKA-19999). The replicas' logs are equal: a batch or marker is acknowledged
only once replicated (acks=all, markers with required acks -1), so the new leader has every
acknowledged entry, and an append the old leader made but whose answer the failover cut (a lost
response, ``lost_responses``) is on the new leader too.

Abstractions: WriteTxnMarkers stays one atomic step of the coordinator and the leader of the
moment, so a marker request to the old leader that failed with NOT_LEADER_OR_FOLLOWER and was
retried to the new leader is a marker written to the new leader later; KIP-890's verification state is
the old leader's alone (with ``verification_steps``: no entry moves, a held request is answered at the
failover, ``answered_at_failover``), and the new leader verifies a producer again whenever its own table
shows no open transaction for it; the old leader
becomes an in-sync follower at once (a later in-sync failover hands back the current table); a
snapshot's table is rebuilt from the log below its offset, without the expiry checks the replica
ran before taking it (only the expiry check at load is modelled); the log start offset moves with
the leadership.

Every budget at 0 (the default) compiles no rule, adds no action, and hides the three budgets in
``fields``: existing specs keep their counts. With a budget, log entries carry their sequence and
timestamp (``replica.StampedEntry``) so that a replica can replay them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from eoscheck.checker.compose import Scalar, precondition, rule
from eoscheck.checker.registry import Bound

from ..errors import Errors
from ..partition.replica import (
    rebuilt_from_log,
    restored_from_snapshot,
    snapshot_offsets,
    stamp,
)
from ..partition.txn_produce import write_marker
from ..protocol import Protocol, TransactionVersion
from ..state import (
    ProduceRequest,
    ProduceResponse,
    Routed,
    TxnMetadata,
    TxnPartitionState,
)
from ..transactions.markers import TxnMarker

#: the kinds of replica a leadership moves to (``TxnLeaderFailover``'s ``rebuilt``)
IN_SYNC, REBUILT, SNAPSHOT = 0, 1, 2
KIND_NAMES = ("in-sync follower", "restarted from its log", "restored from a snapshot")

#: this module's bounds (name -> its ``eoscheck list`` entry)
TXN_FAILOVER_BOUNDS: dict[str, Bound] = {
    "output_leader_failovers": Bound(
        "leaderships of a transactional output partition moved to its in-sync follower; produce requests in "
        "flight to the old leader get NOT_LEADER_OR_FOLLOWER and are retried (0 removes TxnLeaderFailover)",
        0, 0, 3),
    "output_restarted_replica_failovers": Bound(
        "leaderships of an output partition moved to a replica restarted without producer-state snapshots: its "
        "producers, open transactions (the LSO) and markers rebuilt from the log above the log start offset",
        0, 0, 3),
    "output_snapshot_restored_failovers": Bound(
        "leaderships of an output partition moved to a replica restored from a producer-state snapshot taken at "
        "any offset from the log start offset to the log end (one batch per producer, expired entries skipped at "
        "load), with the log above it replayed",
        0, 0, 3),
}
_KINDS = tuple(TXN_FAILOVER_BOUNDS)  # the bound of each kind, in kind order


def spent(packed: int, kind: int) -> int:
    """Failovers of ``kind`` spent, from the packed ``output_failovers``."""
    return packed >> 2 * kind & 3


def _failing_over(kind: int) -> Any:
    """The partitions as a domain: bound only when the kind's budget is not 0."""
    def domain(machine: Any) -> range:
        return range(machine.n_partitions) if machine.txn_failover and machine.bounds.get(_KINDS[kind]) else range(0)
    return domain


class TxnLeaderFailover:
    """Leader failover of the transactional output partitions (see the module doc)."""

    bounds: dict[str, int]
    protocol: Protocol
    n_partitions: int
    txn_failover: bool
    tv2_marker_check: str
    if TYPE_CHECKING:
        def _markers(self, meta: TxnMetadata, coordinator_epoch: int) -> tuple[TxnMarker, ...]: ...

    # One slot for the three budgets (2 bits each; every bound is at most 3): a state is a slot wider,
    # not three, whatever the configuration. ``fields`` shows them as three budgets.
    output_failovers = Scalar(init=0, doc="output leader failovers spent: 2 bits per kind (in-sync, restarted, "
                                          "snapshot-restored)")

    def txn_failover_setup(self, bounds: Mapping[str, int]) -> dict[str, int]:
        """Read this module's bounds (0 when left out) and the marker check; its parts name no configuration."""
        self.txn_failover = any(bounds.get(name, 0) for name in TXN_FAILOVER_BOUNDS) and bounds.get("partitions", 0) > 0
        tv2 = self.protocol.transaction_version == TransactionVersion.TV2
        # every leader's marker check, failovers or not: a coordinator failover resends markers too
        self.tv2_marker_check = self.protocol.tv2_marker_epoch_check.value if tv2 else "lenient"
        return {}

    def txn_failover_idle(self) -> set[str]:
        return set() if self.txn_failover else {"TxnLeaderFailover"}

    def stamped(self, before: TxnPartitionState, after: TxnPartitionState, seq: int, timestamp: int) -> TxnPartitionState:
        """A leader after an append, its new entry stamped for replay when leaderships can move."""
        return stamp(before, after, seq, timestamp) if self.txn_failover else after

    def fields(self, state: tuple) -> dict[str, Any]:
        out: dict[str, Any] = super().fields(state)  # type: ignore[misc]
        packed = out.pop("output_failovers", 0)
        if self.txn_failover:
            out.update({f"faults.{bound}": spent(packed, kind) for kind, bound in enumerate(_KINDS)})
        return out

    def _left(self, kind: int, output_failovers: int) -> bool:
        return spent(output_failovers, kind) < self.bounds.get(_KINDS[kind], 0)

    def _moved(self, p: int, leader: TxnPartitionState, producers: tuple, kind: int, snapshot: int, marker_of: int,
               requests: tuple[Routed, ...], responses: tuple[Routed, ...], output_failovers: int) -> dict[str, Any]:
        """The new leader with ``producers``; the old one answers its pending requests NOT_LEADER_OR_FOLLOWER.
        KIP-890's verification state is the old leader's alone (``verification_steps``): the new leader
        starts with no verification entry and holds no request, and each request the old one held gets
        its answer (``answered_at_failover``) before the requests behind it on its connection."""
        bounced = self.answered_at_failover(p, leader)
        for m in requests:
            if m.partition == p:
                req = m.message
                assert isinstance(req, ProduceRequest)
                bounced.append(m._replace(message=ProduceResponse(req.client, m.connection, req.record,
                                                                  int(Errors.NOT_LEADER_OR_FOLLOWER), -1, -1)))
        if leader.pending or leader.verifications:
            leader = leader._replace(verifications=(), pending=())
        out: dict[str, Any] = {"leader": leader._replace(producers=producers), "rebuilt": kind, "snapshot": snapshot,
                               "marker_of": marker_of, "output_failovers": output_failovers + (1 << 2 * kind)}
        if bounced:
            out["requests"] = tuple(m for m in requests if m.partition != p)
            out["responses"] = responses + tuple(bounced)
        return out

    def answered_at_failover(self, p: int, leader: TxnPartitionState) -> list[Routed]:
        """The answers to the requests the old leader held between verification and append (none
        without ``verification_steps``; ``eos_verification`` answers them)."""
        return []

    def _before_failover(self, p: int, leader: TxnPartitionState, txn: tuple[TxnMetadata, ...],
                         coordinator_epoch: int, now: int) -> list[tuple[int, TxnPartitionState]]:
        """The old leader's log as the failover finds it: as it is, or with a marker the coordinator sent
        for ``p`` appended (and replicated) but its answer cut by the failover, so the coordinator still
        waits for ``p`` and will send the marker again to the new leader."""
        logs: list[tuple[int, TxnPartitionState]] = [(-1, leader)]
        for t, meta in enumerate(txn):
            marker = next((m for m in self._markers(meta, coordinator_epoch) if m.partition == p), None)
            if marker is None:
                continue
            error, written = write_marker(leader, marker, timestamp=now,
                                          check_coordinator_epoch=self.protocol.marker_coordinator_epoch_check,
                                          sets_timestamp=self.protocol.marker_sets_producer_timestamp,
                                          tv2_epoch_check=self.tv2_marker_check)
            if error == Errors.NONE:
                logs.append((t, self.stamped(leader, written, -1, now)))
        return logs

    @rule("TxnLeaderFailover", params={"p": _failing_over(IN_SYNC)},
          reads=("leader[p]", "requests", "responses", "txn", "coordinator_epoch", "now", "output_failovers"),
          writes=("leader[p]", "requests", "responses", "output_failovers"), results=("rebuilt", "snapshot", "marker_of"),
          show={"rebuilt": KIND_NAMES.__getitem__})
    @precondition(lambda self, output_failovers: self._left(IN_SYNC, output_failovers))
    def txn_in_sync_failover(self, p: int, leader: TxnPartitionState, requests: tuple[Routed, ...],
                             responses: tuple[Routed, ...], txn: tuple[TxnMetadata, ...], coordinator_epoch: int,
                             now: int, output_failovers: int) -> Any:
        """The in-sync follower leads with the producer state it built by replication."""
        return [self._moved(p, old, old.producers, IN_SYNC, -1, t, requests, responses, output_failovers)
                for t, old in self._before_failover(p, leader, txn, coordinator_epoch, now)]

    @rule("TxnLeaderFailover", params={"p": _failing_over(REBUILT)},
          reads=("leader[p]", "requests", "responses", "txn", "coordinator_epoch", "now", "output_failovers"),
          writes=("leader[p]", "requests", "responses", "output_failovers"), results=("rebuilt", "snapshot", "marker_of"),
          show={"rebuilt": KIND_NAMES.__getitem__})
    @precondition(lambda self, output_failovers: self._left(REBUILT, output_failovers))
    def txn_restarted_failover(self, p: int, leader: TxnPartitionState, requests: tuple[Routed, ...],
                               responses: tuple[Routed, ...], txn: tuple[TxnMetadata, ...], coordinator_epoch: int,
                               now: int, output_failovers: int) -> Any:
        """A replica that restarted without snapshots leads with the state it rebuilt from its log."""
        protocol = self.protocol
        return [self._moved(p, old, rebuilt_from_log(old, cache_size=protocol.broker_batch_cache,
                                                     sets_timestamp=protocol.marker_sets_producer_timestamp),
                            REBUILT, -1, t, requests, responses, output_failovers)
                for t, old in self._before_failover(p, leader, txn, coordinator_epoch, now)]

    @rule("TxnLeaderFailover", params={"p": _failing_over(SNAPSHOT)},
          reads=("leader[p]", "requests", "responses", "txn", "coordinator_epoch", "now", "output_failovers"),
          writes=("leader[p]", "requests", "responses", "output_failovers"), results=("rebuilt", "snapshot", "marker_of"),
          show={"rebuilt": KIND_NAMES.__getitem__})
    @precondition(lambda self, output_failovers: self._left(SNAPSHOT, output_failovers))
    def txn_snapshot_failover(self, p: int, leader: TxnPartitionState, requests: tuple[Routed, ...],
                              responses: tuple[Routed, ...], txn: tuple[TxnMetadata, ...], coordinator_epoch: int,
                              now: int, output_failovers: int) -> Any:
        """A replica restored from the snapshot it took at some offset leads with that state and the log
        above it replayed."""
        protocol = self.protocol
        return [self._moved(p, old, restored_from_snapshot(
            old, offset, now=now, expiration=self.bounds["producer_id_expiration"],
            cache_size=protocol.broker_batch_cache, sets_timestamp=protocol.marker_sets_producer_timestamp,
            retain_producer_state=protocol.broker_retain_producer_state), SNAPSHOT, offset, t, requests, responses,
            output_failovers)
            for t, old in self._before_failover(p, leader, txn, coordinator_epoch, now)
            for offset in snapshot_offsets(old)]


__all__ = ["IN_SYNC", "REBUILT", "SNAPSHOT", "TXN_FAILOVER_BOUNDS", "TxnLeaderFailover"]
