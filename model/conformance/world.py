"""One vector's state, held in the model's own records (``model.api``), and its rendering in the
vectors' vocabulary (``state_objects`` of the schema)."""

from __future__ import annotations

import json
import re
from typing import Any

from ..api.coordinator import CoordinatorState
from ..api.group import GroupCoordinatorState, OffsetsPartition
from ..api.leader import LeaderState
from ..api.protocol import Protocol, client_tv2
from ..api.txn_partition import TxnPartitionCache, lookup_error
from ..coordinator.producer_ids import ProducerIdBlocks
from ..coordinator.txn_log import NO_METADATA
from ..coordinator.txn_partitions import partition_for
from ..errors import Errors
from ..group.metadata import (
    NO_MEMBER_ID,
    CommittedOffset,
    GroupMeta,
    GroupState,
    PendingTxnOffset,
    new_group,
)
from ..partition.producer_state import first_sequence
from ..partition.verification import VerificationEntry
from ..producer.partition_sequences import PartitionEntry
from ..state import CachedBatch, ProducerStateEntry, TxnMetadata
from ..transactions.codes import NO_PENDING
from .values import Names, NotExpressible, integer, state_id, state_name, value

DEFAULT_TID = "known"
_PARTITION = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*-\d+$")

#: fields the vectors assert that the model does not keep, and why
ABSTRACTED: dict[str, str] = {
    "txn_timeout_ms": "the model abstracts time: TransactionMetadata keeps no transaction timeout "
                      "(the timeout abort is a nondeterministic step)",
    "txn_last_update_timestamp": "the model abstracts time: TransactionMetadata keeps no timestamps",
    "txn_start_timestamp": "the model abstracts time: TransactionMetadata keeps no timestamps",
    "leader_epoch": "OffsetFetch's leader epoch is not modelled",
    "metadata": "offset metadata strings are not modelled",
}


def partition_names(v: Any) -> list[str]:
    """Every 'topic-N' name in a vector, in order of appearance (they become the model's ints)."""
    found: list[str] = []

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            for k, y in x.items():
                if isinstance(k, str) and _PARTITION.match(k) and k not in found:
                    found.append(k)
                walk(y)
        elif isinstance(x, list):
            for y in x:
                walk(y)
        elif isinstance(x, str) and _PARTITION.match(x) and x not in found:
            found.append(x)

    walk(v)
    return found


class World:
    """Everything a vector's steps can touch; parts a vector does not use stay at their defaults."""

    def __init__(self, protocol: Protocol, vector_json: Any, initial: dict[str, Any]) -> None:
        self.protocol = protocol
        self.symbols: dict[str, int] = {}
        self.partitions = Names()
        for name in partition_names(vector_json):
            self.partitions.id(name)
        self.members = Names(first=1, fixed={"": NO_MEMBER_ID})
        self.instances = Names()
        # the transaction coordinator
        self.txns: dict[str, TxnMetadata] = {}
        self.next_pid = 0
        self.loading = False
        self.lookup_error = 0
        #: the coordinator has started (``TransactionCoordinator.isActive``); false: COORDINATOR_NOT_AVAILABLE
        self.coordinator_active = True
        #: transactional id -> its transaction's start time (``txnStartTimestamp``), for ListTransactions' duration
        #: filter only (the model's TransactionMetadata keeps no timestamps)
        self.txn_start_ms: dict[str, int] = {}
        #: the coordinator epoch the cache holds the transactional ids at (None: the one each append gives)
        self.coordinator_epoch: int | None = None
        #: the __transaction_state partition's cache once a load or unload step ran (None: the initial state's answers)
        self.txn_partition: TxnPartitionCache | None = None
        #: the cache entries of the __transaction_state partitions a load or unload step named (``partition``): a
        #: transactional id's lookup reads its own partition's (``txn_log_partition``), as
        #: ``getAndMaybeAddTransactionState`` reads ``transactionMetadataCache.get(partitionFor(id))``
        self.txn_partition_caches: dict[int, TxnPartitionCache] = {}
        self.blocks: ProducerIdBlocks | None = None
        self.last_update: dict[str, int] = {}
        self.tid_expiration_ms = 604800000
        #: the broker's transaction.two.phase.commit.enable (KIP-939, 4.1.0+; default false)
        self.two_phase_commit_enable = False
        #: transactional id -> its stored transaction timeout where known (initial_state, or an InitProducerId that
        #: succeeded): only the timeout abort reads it, for KIP-939's 2PC timeout (``api.coordinator.may_time_out``)
        self.txn_timeout_ms: dict[str, int] = {}
        self.now = integer("now", "now")
        # the partition leader
        self.leader = LeaderState((), 0, self.now, ())
        self.pid_expiration_ms = 86400000
        #: several __transaction_state partitions (TransactionStateManagerTest's numPartitions): their count, a
        #: transactional id's partition when the vector names it (else partitionFor), those without a log config
        #: (offline) and the log's max.message.bytes (KAFKA-13099's batch bound)
        self.txn_log_partition_count: int | None = None
        self.txn_log_partition_of: dict[str, int] = {}
        self.txn_log_offline: frozenset[int] = frozenset()
        self.txn_log_max_message_bytes: int | None = None
        #: the ProducerStateManager's maxTransactionTimeoutMs (the broker's transaction.max.timeout.ms; None: the
        #: profile's default), which hasLateTransaction reads (KIP-664)
        self.psm_max_txn_timeout_ms: int | None = None
        self.log_start_offset = 0
        self.high_watermark = 0
        #: transactions completed on the leader: (first offset, marker offset), for the first unstable offset
        self.completed_txns: list[tuple[int, int]] = []
        #: the leader's aborted transaction index (``partition.stable_read.AbortedTxn``), for a read_committed fetch
        self.aborted_txns: list[Any] = []
        self._open_txns: dict[int, int] = {}
        self.snapshots: Any = ()
        #: snapshot offsets whose file does not parse (emptied, cut short or overwritten, or created empty by the
        #: test): ``truncate_and_reload`` deletes one when its load reaches it and falls back to the next older
        self.unreadable_snapshots: set[int] = set()
        #: the base offsets of the log's segments after the first (a roll starts one at the log end)
        self.segment_bases: list[int] = []
        #: the first segment's base offset (segment deletion moves it; ``segment_bases`` stay above it)
        self.first_segment_base = 0
        #: the batches and markers in the log, in offset order (``api.ProduceBatch`` / ``api.MarkerRequest``
        #: with their offsets), for a UnifiedLog truncation that rebuilds the producer state from the log
        self.log: list[Any] = []
        #: the same log as the log cleaner reads it (``log_cleaner.LogBatch``, with the records' keys a step gave)
        self.keyed_log: list[Any] = []
        #: the initial state gave producers whose batches are not in ``log``
        self.log_incomplete = False
        #: producer id -> (first sequence, first offset) of the batches appended through the current
        #: ``ProducerAppendInfo`` of a vector that says which steps share one (``append_info``)
        self.append_infos: dict[int, tuple[int, int]] = {}
        #: a ReplicaManager append waiting for its verification's answer
        self.pending_append: Any = None
        #: AddPartitionsToTxnManager's queued verifications: transactional id -> (producer id, epoch, partitions)
        self.verify_queue: dict[str, tuple[int, int, tuple[str, ...]]] = {}
        # the group coordinator
        self.group = GroupCoordinatorState(None, max(1, len(self.partitions)))
        self.plain_commits: dict[int, int] = {}
        #: each committed offset's commit timestamp (``initial_state.group.commit_timestamps``), which only the offset
        #: retention reads
        self.commit_timestamps: dict[int, int] = {}
        #: a world of several groups (``initial_state.groups``): group id -> its coordinator state, and its
        #: __consumer_offsets partition; ``group`` is the one the current step names (``input.group_id``)
        self.groups: dict[str, GroupCoordinatorState] = {}
        self.group_offsets_partition: dict[str, int] = {}
        self.group_id: str | None = None
        #: the classic coordinator's view of the group's __consumer_offsets partition (its coordinator epoch and the log
        #: a load replays)
        self.offsets_partition = OffsetsPartition(None, ())
        self.last_txn_pid = -1
        # the client
        self.client: dict[str, Any] = {}
        self.client_partitions: dict[str, PartitionEntry] = {}
        self.client_seq: dict[str, int] = {}
        #: KafkaApis' metadata cache: topic -> its number of partitions (None: every partition is known)
        self.metadata_cache: dict[str, int] | None = None
        #: the partitions this broker hosts -> their log's message format (None: every one, format v2)
        self.replica_magic: dict[str, int] | None = None
        #: the waiting ReplicaManager append's transactionSupportedOperation (``steps_leader.replica_append``)
        self.pending_operation = "genericError"
        self.source_file = ""
        self.component = ""
        #: produce batches go through UnifiedLog (duplicate pre-check) unless the vector drives
        #: ProducerAppendInfo / ProducerStateManager directly
        self.unified_log = True
        # 'E' is the metadata epoch a step gives (each step a separate test)
        for st in (vector_json.get("steps") or []) if isinstance(vector_json, dict) else []:
            inp = st.get("input", {}) if isinstance(st, dict) else {}
            if isinstance(inp, dict) and isinstance(inp.get("metadata_epoch"), int):
                self.symbols.setdefault("E", inp["metadata_epoch"])
        self._load(initial)

    # --- initial state -----------------------------------------------------------------------

    def _load(self, init: dict[str, Any]) -> None:
        for key, v in init.items():
            loader = _LOADERS.get(key)
            if loader is not None:
                loader(self, v)
            elif re.fullmatch(r"txn\d+", key) and isinstance(v, dict):
                self._load_txn_object(v)
            else:
                raise NotExpressible(f"initial_state.{key}: not a state the model keeps")

    def _load_txn_object(self, v: dict[str, Any]) -> None:
        tid = str(v.get("transactional_id", DEFAULT_TID))
        self.txns[tid] = self.meta_from(v)
        self.note_txn_timeout(tid, v)
        self.note_txn_start(tid, v)
        if "txn_last_update_timestamp" in v:
            self.last_update[tid] = integer(v["txn_last_update_timestamp"], "txn_last_update_timestamp")
        if "txn_partition" in v:
            self.txn_log_partition_of[tid] = integer(v["txn_partition"], "txn_partition")

    def note_txn_timeout(self, tid: str, v: Any) -> None:
        if isinstance(v, dict) and isinstance(v.get("txn_timeout_ms"), int):
            self.txn_timeout_ms[tid] = v["txn_timeout_ms"]

    def note_txn_start(self, tid: str, v: Any) -> None:
        # only a number or a known symbol is kept: the duration filter refuses a transaction whose start is unknown,
        # and nothing else reads it (time is abstracted)
        start = value(v.get("txn_start_timestamp"), self.symbols) if isinstance(v, dict) else None
        if isinstance(start, int) and not isinstance(start, bool):
            self.txn_start_ms[tid] = start

    def meta_from(self, v: dict[str, Any] | None) -> TxnMetadata:
        if not v or v.get("exists") is False:
            return NO_METADATA
        pid = integer(v.get("producer_id", 0), "producer_id")
        pending = v.get("pending_state")
        parts = tuple(sorted(self.partitions.id(p) for p in v.get("partitions", [])))
        return TxnMetadata(
            True, pid, integer(v.get("prev_producer_id", -1), "prev_producer_id"),
            integer(v.get("producer_epoch", 0), "producer_epoch", self.symbols),
            integer(v.get("last_producer_epoch", -1), "last_producer_epoch"),
            state_id(str(v.get("state", "Empty"))), bool(v.get("has_failed_epoch_fence", False)),
            NO_PENDING if pending is None else state_id(str(pending)), parts,
            integer(v.get("next_producer_id", -1), "next_producer_id"),
            integer(v.get("client_transaction_version", 0), "client_transaction_version"))

    # --- views in the vectors' vocabulary -------------------------------------------------------

    def txn_log_partition(self, tid: str) -> int | None:
        """The __transaction_state partition of ``tid``: the vector's ``txn_partition``, else ``partitionFor`` over
        ``transaction_state_partitions``, else None (a world of one partition)."""
        if tid in self.txn_log_partition_of:
            return self.txn_log_partition_of[tid]
        return None if self.txn_log_partition_count is None else partition_for(tid, self.txn_log_partition_count)

    def txn_partition_cache(self, tid: str) -> TxnPartitionCache | None:
        """The cache entry ``tid``'s lookup reads when a step named its partition (None: the world's one answer)."""
        part = self.txn_log_partition(tid) if self.txn_partition_caches else None
        return None if part is None else self.txn_partition_caches.get(part)

    def coordinator(self, tid: str) -> CoordinatorState:
        cache = self.txn_partition_cache(tid)
        if cache is not None:
            loading = bool(cache.loading)
            return CoordinatorState(self.txns.get(tid, NO_METADATA), self.next_pid, loading,
                                    0 if loading else lookup_error(cache))
        return CoordinatorState(self.txns.get(tid, NO_METADATA), self.next_pid, self.loading, self.lookup_error)

    def set_coordinator(self, tid: str, st: CoordinatorState) -> None:
        self.txns[tid] = st.metadata
        self.next_pid = st.next_producer_id

    def meta_view(self, m: TxnMetadata) -> dict[str, Any]:
        if not m.exists:
            return {"exists": False}
        return {"exists": True, "producer_id": m.producer_id, "prev_producer_id": m.prev_producer_id,
                "next_producer_id": m.next_producer_id, "producer_epoch": m.epoch,
                "last_producer_epoch": m.last_epoch, "state": state_name(m.state),
                "partitions": sorted(self.partitions.name(p) for p in m.partitions),
                "client_transaction_version": m.tv,
                "pending_state": None if m.pending_state == NO_PENDING else state_name(m.pending_state),
                "has_failed_epoch_fence": m.has_failed_epoch_fence}

    def entry_view(self, e: ProducerStateEntry) -> dict[str, Any]:
        last = e.batches[-1] if e.batches else None
        # Kafka's ProducerStateEntry.firstSeq is the oldest cached batch's first sequence
        return {"epoch": e.epoch, "last_seq": last.seq if last else -1,
                "first_offset": e.batches[0].offset - e.batches[0].delta if e.batches else -1,
                "first_seq": first_sequence(e.batches[0]) if e.batches else -1,
                "last_offset": last.offset if last else -1,
                "coordinator_epoch": e.coordinator_epoch,
                "txn_first_offset": None if e.current_txn_first_offset < 0 else e.current_txn_first_offset,
                "last_timestamp": e.last_timestamp,
                "batches": [{"first_seq": first_sequence(b), "last_seq": b.seq, "last_offset": b.offset}
                            for b in e.batches]}

    def note_transactions(self) -> None:
        """Record which transactions a step completed (``CompletedTxn``): an open transaction of the
        previous step that is no longer open ended with a marker at the log end offset - 1."""
        now_open = {e.producer_id: e.current_txn_first_offset for e in self.leader.producers
                    if e.current_txn_first_offset >= 0}
        for pid, first in self._open_txns.items():
            if now_open.get(pid) != first:
                self.completed_txns.append((first, self.leader.log_end_offset - 1))
        self._open_txns = now_open

    def reset_open_transactions(self) -> None:
        self._open_txns = {e.producer_id: e.current_txn_first_offset for e in self.leader.producers
                           if e.current_txn_first_offset >= 0}

    def first_unstable_offset(self) -> int | None | bool:
        """``firstUnstableOffset``: the earliest of the open transactions and the completed ones whose
        marker the high watermark has not passed (None: none); UnifiedLog's is at least the log start
        offset. False: the vector drives ProducerAppendInfo alone, which has no high watermark."""
        if re.match(r"ProducerAppendInfo\b", self.component):
            return False
        firsts = list(self._open_txns.values()) + [f for f, last in self.completed_txns if last >= self.high_watermark]
        if not firsts:
            return None
        return max(min(firsts), self.log_start_offset)

    def producers_view(self) -> dict[str, Any]:
        return {str(e.producer_id): self.entry_view(e) for e in self.leader.producers}

    def use_group(self, group_id: str) -> None:
        """Make ``group_id`` of ``initial_state.groups`` the group the steps act on (the current one is kept)."""
        if group_id not in self.groups:
            raise NotExpressible(f"group_id {group_id!r}: not one of initial_state.groups ({', '.join(self.groups)})")
        if self.group_id is not None:
            self.groups[self.group_id] = self.group
        self.group, self.group_id = self.groups[group_id], group_id

    def group_meta(self) -> GroupMeta:
        return self.group.group if self.group.group is not None else new_group(self.group.num_partitions)

    def committed_view(self) -> dict[str, int]:
        g = self.group.group
        if g is None:
            return {}
        return {self.partitions.name(p): c.offset for p, c in enumerate(g.offsets) if c.offset >= 0}

    def pending_view(self) -> dict[str, dict[str, int]]:
        g = self.group.group
        out: dict[str, dict[str, int]] = {}
        for e in (g.pending if g is not None else ()):
            out.setdefault(str(e.producer_id), {})[self.partitions.name(e.partition)] = e.offset
        return out


# --- loaders for the initial-state objects ------------------------------------------------------


def _default_tid(w: World, v: Any) -> None:
    global_tid = str(v)
    if DEFAULT_TID in w.txns and global_tid not in w.txns:
        w.txns[global_tid] = w.txns.pop(DEFAULT_TID)


def _txn_metadata(w: World, v: Any) -> None:
    tid = str(v.get("transactional_id", DEFAULT_TID)) if isinstance(v, dict) else DEFAULT_TID
    w.txns[tid] = w.meta_from(v)
    w.note_txn_timeout(tid, v)
    w.note_txn_start(tid, v)


def _coordinator(w: World, v: Any) -> None:
    """``{"loading": true}`` or any field naming the error ``getTransactionState`` answers
    (``{"get_transaction_state": "NOT_COORDINATOR"}``); ``coordinator_epoch``: the epoch the
    transactions were loaded at; ``owned_partitions: []``: no ``__transaction_state`` partition is
    loaded or loading (NOT_COORDINATOR)."""
    items = v.items() if isinstance(v, dict) else [("state", v)]
    for key, x in items:
        if key == "coordinator_epoch":
            w.coordinator_epoch = integer(x, "coordinator_epoch")
        elif key == "owned_partitions":
            if not isinstance(x, list):
                raise NotExpressible(f"coordinator.owned_partitions {x!r}: give a list")
            if not x:
                w.lookup_error = int(Errors.NOT_COORDINATOR)
        elif key in ("loading", "load_in_progress") and x:
            w.loading = True
        elif key == "active":
            if not isinstance(x, bool):
                raise NotExpressible(f"coordinator.active {x!r}: give true or false")
            w.coordinator_active = x
        elif isinstance(x, str) and x in _ERROR_NAMES:
            w.lookup_error = int(Errors[x])
        elif isinstance(x, str) and "load" in x.lower():
            w.loading = True
        elif isinstance(x, str) and "not coordinator" in x.lower().replace("_", " "):
            w.lookup_error = int(Errors.NOT_COORDINATOR)


def _pid_next(w: World, v: Any) -> None:
    w.next_pid = integer(v, "pid_generator_next")


def _block_size(w: World, v: Any) -> None:
    w.blocks = (w.blocks or ProducerIdBlocks(0, ()))._replace(block_size=integer(v, "block_size"))


def _zk_block(w: World, v: Any) -> None:
    """``null``: no block claimed yet; ``{start, length}``: the last block claimed (by any broker),
    so the next one starts after it."""
    w.blocks = w.blocks or ProducerIdBlocks(0, ())
    if v is None:
        return
    if not isinstance(v, dict) or "start" not in v:
        raise NotExpressible(f"initial_state.zk_block {v!r}: give the last claimed block as {{start, length}}")
    length = integer(v.get("length", w.blocks.block_size), "zk_block.length")
    w.blocks = w.blocks._replace(next_block_start=integer(v["start"], "zk_block.start") + length)


def _producers(w: World, v: Any) -> None:
    entries = []
    for pid, e in (v or {}).items():
        last = integer(e.get("last_seq", -1), "last_seq")
        first = integer(e.get("first_seq", last), "first_seq")
        batches = tuple(CachedBatch(integer(b["last_seq"], "last_seq"), integer(b.get("last_offset", 0), "last_offset"),
                                    integer(b["last_seq"], "last_seq") - integer(b.get("first_seq", b["last_seq"]), "first_seq"))
                        for b in e.get("batches", []) if isinstance(b, dict))
        if not batches and last >= 0:
            batches = (CachedBatch(last, integer(e.get("last_offset", 0), "last_offset"), last - first),)
        tfo = e.get("txn_first_offset")
        entries.append(ProducerStateEntry(int(pid), integer(e.get("epoch", -1), "epoch"), batches,
                                          integer(e.get("last_timestamp", 0), "last_timestamp"),
                                          integer(e.get("coordinator_epoch", -1), "coordinator_epoch"),
                                          -1 if tfo is None else integer(tfo, "txn_first_offset")))
    w.leader = w.leader._replace(producers=tuple(sorted(entries)))
    w.log_incomplete = w.log_incomplete or bool(entries)


def _log_end(w: World, v: Any) -> None:
    w.leader = w.leader._replace(log_end_offset=integer(v, "log_end_offset"))


def _now(w: World, v: Any) -> None:
    w.now = integer(v, "now_ms")
    w.leader = w.leader._replace(now=w.now)


def _pid_expiration(w: World, v: Any) -> None:
    w.pid_expiration_ms = integer(v, "producer_id_expiration_ms")


def _tid_expiration(w: World, v: Any) -> None:
    w.tid_expiration_ms = integer(v, "transactional.id.expiration.ms")


def _txn_log_partitions(w: World, v: Any) -> None:
    w.txn_log_partition_count = integer(v, "transaction_state_partitions")
    if w.txn_log_partition_count <= 0:
        raise NotExpressible("initial_state.transaction_state_partitions: a positive partition count")


def _txn_log_offline(w: World, v: Any) -> None:
    if not isinstance(v, list):
        raise NotExpressible("initial_state.offline_partitions: a list of __transaction_state partitions")
    w.txn_log_offline = frozenset(integer(p, "offline_partitions") for p in v)


def _txn_log_max_message_bytes(w: World, v: Any) -> None:
    w.txn_log_max_message_bytes = integer(v, "max_message_bytes")


def _verification_guard(w: World, v: Any) -> None:
    m = re.search(r"pid\s*=\s*(\d+).*?seq\s*=\s*(\d+).*?epoch\s*=\s*(\d+)", str(v))
    if not m:
        raise NotExpressible(f"initial_state.verification_guard {v!r}: producer id, sequence and epoch not given")
    w.leader = w.leader._replace(verifications=(VerificationEntry(int(m.group(1)), int(m.group(2)),
                                                                  int(m.group(3)), w.now),))


def _verification_enabled(w: World, v: Any) -> None:
    w.leader = w.leader._replace(verification_enabled=bool(v))


def _verification_state(w: World, v: Any) -> None:
    entries = [VerificationEntry(int(pid), integer(e.get("lowest_sequence", 0), "lowest_sequence"),
                                 integer(e.get("epoch", 0), "epoch"), integer(e.get("created_ms", "T"), "created_ms"),
                                 bool(e.get("supports_epoch_bump", False)))
               for pid, e in (v or {}).items()]
    w.leader = w.leader._replace(verifications=tuple(sorted(entries)))


def _group(w: World, v: Any) -> None:
    n = max(1, len(w.partitions))
    kind = v.get("type") if isinstance(v, dict) else None
    if kind not in (None, "classic", "consumer"):
        # a streams group (KIP-1071) or a share group checks members its own way: not one the model holds
        raise NotExpressible(f"initial_state.group.type {kind!r}: the model's groups are classic or consumer")
    new = kind == "consumer"
    if v is None:
        w.group = GroupCoordinatorState(None, n)
        return
    members_raw = v.get("members", [])
    statics = v.get("static_members", {}) or {}
    epochs = None
    if isinstance(members_raw, dict):
        epochs = tuple(sorted((w.members.id(m), integer(e.get("member_epoch", 0), "member_epoch"))
                              for m, e in members_raw.items()))
        members = [w.members.id(m) for m in members_raw]
    else:
        members = [w.members.id(str(m)) for m in members_raw]
    members += [w.members.id(str(m)) for m in statics.values()]
    static = tuple(sorted((w.instances.id(i), w.members.id(str(m))) for i, m in statics.items()))
    state = v.get("state")
    gstate = GroupState[_snake(state)] if state else (GroupState.STABLE if members else GroupState.EMPTY)
    gen = integer(v.get("generation", 0), "generation")
    offsets = [CommittedOffset(-1, -1)] * n
    for i, (p, off) in enumerate((v.get("committed") or {}).items()):
        offsets[w.partitions.id(p)] = CommittedOffset(integer(off, "committed offset"), i)
    for p, ts in (v.get("commit_timestamps") or {}).items():
        w.commit_timestamps[w.partitions.id(p)] = integer(ts, "commit timestamp")
    g = GroupMeta(int(gstate), gen, tuple(sorted(set(members))), static, (NO_MEMBER_ID,) * n, tuple(offsets), ())
    w.group = GroupCoordinatorState(g, n, len(offsets) + 1, epochs if new else None, new)


def _groups(w: World, v: Any) -> None:
    """Several groups, each ``{..., "offsets_partition": n}`` in ``_group``'s form (its __consumer_offsets partition,
    which a marker names) with its ``pending_txn_offsets`` if any; the first is current."""
    if not isinstance(v, dict) or not v or w.group.group is not None:
        raise NotExpressible("initial_state.groups: a map of group id -> group, without initial_state.group")
    for gid, spec in v.items():
        if not isinstance(spec, dict):
            raise NotExpressible(f"initial_state.groups.{gid}: not a group")
        rest = {k: x for k, x in spec.items() if k not in ("offsets_partition", "pending_txn_offsets")}
        _group(w, rest)
        if "pending_txn_offsets" in spec:
            _set_pending(w, spec["pending_txn_offsets"])
        w.groups[str(gid)] = w.group
        w.group_offsets_partition[str(gid)] = integer(spec.get("offsets_partition", 0), "offsets_partition")
    w.group_id = next(iter(w.groups))
    w.group = w.groups[w.group_id]


def _pending_txn_offsets(w: World, v: Any) -> None:
    if w.groups:
        raise NotExpressible("initial_state.pending_txn_offsets with several groups: which group's is not said "
                             "(give each group's in initial_state.groups)")
    _set_pending(w, v)


def _set_pending(w: World, v: Any) -> None:
    """The current group's pending transactional offsets: producer id -> {partition: offset}, in log order."""
    v = {} if v is None else v
    if not isinstance(v, dict) or not all(isinstance(o, dict) for o in v.values()):
        raise NotExpressible("pending_txn_offsets: a map of producer id -> {partition: offset}")
    g = w.group_meta()
    at = w.group.log_end_offset
    pending = []
    for pid, offs in (v or {}).items():
        for p, off in offs.items():
            pending.append(PendingTxnOffset(int(pid), w.partitions.id(p), integer(off, "offset"), at))
            at += 1
    w.group = w.group._replace(group=g._replace(pending=tuple(sorted(pending))), log_end_offset=at)


def _producer(w: World, v: Any) -> None:
    w.client = dict(v or {})
    if w.client.get("transaction_v2") and not client_tv2(w.protocol):
        # the TV2 client's paths are KAFKA-14563's (4.0.0); 1eb7644's client only recorded the version
        raise NotExpressible("producer.transaction_v2: this profile's client has no transaction version 2 "
                             "(KAFKA-14563, 4.0.0)")


def _client_partition(w: World, v: Any) -> None:
    for tp, e in (v or {}).items():
        w.client_partitions[tp] = PartitionEntry(integer(w.client.get("producer_id", 0), "producer_id"),
                                                 integer(w.client.get("epoch", 0), "epoch"),
                                                 integer(e.get("next_sequence", 0), "next_sequence"),
                                                 integer(e.get("last_acked_sequence", -1), "last_acked_sequence"),
                                                 integer(e.get("last_acked_offset", -1), "last_acked_offset"))


def _two_phase_commit_enable(w: World, v: Any) -> None:
    if not isinstance(v, bool):
        raise NotExpressible(f"initial_state.transaction.two.phase.commit.enable {v!r}: give true or false")
    w.two_phase_commit_enable = v


def _metadata_cache(w: World, v: Any) -> None:
    if not isinstance(v, dict):
        raise NotExpressible("initial_state.metadata_cache: not a map of topic -> number of partitions")
    w.metadata_cache = {str(t): integer(n, "metadata_cache") for t, n in v.items()}


def _replica_magic(w: World, v: Any) -> None:
    if not isinstance(v, dict):
        raise NotExpressible("initial_state.replica_magic: not a map of partition -> message format")
    w.replica_magic = {str(tp): integer(m, "replica_magic") for tp, m in v.items()}


def _psm_max_txn_timeout(w: World, v: Any) -> None:
    w.psm_max_txn_timeout_ms = integer(v, "max_transaction_timeout_ms")


def _stray_snapshots(w: World, v: Any) -> None:
    """Snapshot files the test creates empty (``Files.createFile``) before the log or manager is opened: present
    for the manager (``loadSnapshots`` lists them by name), unreadable if a load reaches them."""
    offsets = [integer(o, "stray_snapshot_offsets") for o in (v or [])]
    w.snapshots = tuple(sorted({**dict(w.snapshots), **{o: () for o in offsets}}.items()))
    w.unreadable_snapshots.update(offsets)


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper()


_LOADERS = {
    "txn_metadata": _txn_metadata, "transactional_id": _default_tid, "coordinator": _coordinator, "pid_generator_next": _pid_next,
    "block_size": _block_size, "zk_block": _zk_block, "producers": _producers, "log_end_offset": _log_end,
    "now_ms": _now, "producer_id_expiration_ms": _pid_expiration,
    "transactional.id.expiration.ms": _tid_expiration, "transactional_id_expiration_ms": _tid_expiration,
    "verification_guard": _verification_guard, "verification_state": _verification_state,
    "transaction_verification_enabled": _verification_enabled, "group": _group, "groups": _groups,
    "pending_txn_offsets": _pending_txn_offsets, "producer": _producer, "client_partition": _client_partition,
    "metadata_cache": _metadata_cache, "replica_magic": _replica_magic,
    "transaction.two.phase.commit.enable": _two_phase_commit_enable,
    "max_transaction_timeout_ms": _psm_max_txn_timeout, "transaction.max.timeout.ms": _psm_max_txn_timeout,
    "transaction_state_partitions": _txn_log_partitions, "offline_partitions": _txn_log_offline,
    "max_message_bytes": _txn_log_max_message_bytes, "stray_snapshot_offsets": _stray_snapshots,
}
_ERROR_NAMES = {e.name for e in Errors}


def dump(v: Any) -> str:
    return json.dumps(v, sort_keys=True)


__all__ = ["ABSTRACTED", "DEFAULT_TID", "World", "value"]
