"""The safety properties, one function each, with a one-line doc (the doc is what the user sees).

Invariants take a state; transition properties take (state, step, next_state).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .producer.client import RAISED_OUT_OF_ORDER
from .state import (
    INIT_FATAL,
    INIT_FENCED,
    INIT_IN_TXN,
    INIT_INITIALIZING,
    INIT_READY,
    IdempotentClient,
    IdempotentState,
    InitPidState,
    LogRecord,
    TxnMetadata,
    TxnPartitionState,
    TxnProducer,
)
from .transactions.codes import TxnState
from .transactions.log import (
    EntryKind,
    LogEntry,
    committed_values,
    open_transactions,
    outcome_of,
)

_new_tuple = tuple.__new__

# --- idempotent produce ------------------------------------------------------------------------


def no_duplicates(s: IdempotentState) -> bool:
    """No record is appended to the partition log twice."""
    log = s.partition.log
    return len({(r.client, r.record) for r in log}) == len(log)


def send_order_no_loss(s: IdempotentState) -> bool:
    """Per producer, records appear in send order with no gap, and nothing acknowledged is lost."""
    log = s.partition.log
    return all(client_send_order_no_loss(log, c, client) for c, client in enumerate(s.clients))


#: per (log object, client): (the log, in send order?, records logged as a bitmask, highest logged record's
#: mask below it). Idempotent SendOrderNoLoss misses on every new client state while the log moves
#: less; the scan of the log is the part that depends on the log alone. Each entry holds its log, so
#: an id is never reused while its entry lives.
_LOG_ORDER: dict[tuple[int, int], tuple[tuple[LogRecord, ...], bool, int, int]] = {}


def _log_order(log: tuple[LogRecord, ...], c: int) -> tuple[tuple[LogRecord, ...], bool, int, int]:
    key = (id(log), c)
    hit = _LOG_ORDER.get(key)
    if hit is not None and hit[0] is log:
        return hit
    last = -1
    logged = 0
    in_order = True
    for r in log:
        if r.client == c and not logged >> r.record & 1:
            if last >= 0 and r.record < last:
                in_order = False  # out of send order
                break
            last = r.record
            logged |= 1 << r.record
    if len(_LOG_ORDER) >= 1 << 16:
        _LOG_ORDER.clear()
    out = _LOG_ORDER[key] = (log, in_order, logged, (1 << (last + 1)) - 1 if last >= 0 else 0)
    return out


def client_send_order_no_loss(log: tuple[LogRecord, ...], c: int, client: IdempotentClient) -> bool:
    """SendOrderNoLoss for client ``c`` alone (the property holds when it holds for every client)."""
    return send_order_no_loss_of(log, c, send_order_view(client))


class SendOrderView(NamedTuple):
    """What SendOrderNoLoss reads of a client: its acknowledged and failed records, and the records
    of its batches (bit sets by record)."""

    acked: int
    failed: int
    pending: int


def send_order_view(client: IdempotentClient) -> SendOrderView:
    # fields by position (batches, acked, failed; a batch's record): a projection of every client value
    pending = 0
    for b in client[6]:
        pending |= 1 << b[0]
    return _new_tuple(SendOrderView, (client[7], client[8], pending))


def send_order_no_loss_of(log: tuple[LogRecord, ...], c: int, client: SendOrderView) -> bool:
    """``client_send_order_no_loss`` on the client's ``SendOrderView``."""
    _, in_order, logged, below = _log_order(log, c)
    if not in_order:
        return False
    if client.acked & ~logged:
        return False  # an acknowledged record is not in the log
    return not below & ~(logged | client.failed | client.pending)  # else a gap: neither written, failed nor pending


def _acked_data_lost(s: IdempotentState, client: int) -> bool:
    """An acknowledged record of ``client`` is missing from the log at or above the log start
    offset, i.e. lost by a fault rather than removed by retention."""
    present = 0
    for offset, r in enumerate(s.partition.log):
        if r.client == client:
            present |= 1 << r.record
    return bool(s.clients[client].acked & ~present)


def out_of_order_only_on_data_loss(s: IdempotentState, step: tuple, t: IdempotentState) -> bool:
    """OutOfOrderSequenceException reaches the application only when acknowledged data was lost."""
    if step[0] != "HandleProduceResponse" or step[4] != RAISED_OUT_OF_ORDER:
        return True
    return _acked_data_lost(t, step[1])


def fenced_epoch_never_writes(s: IdempotentState) -> bool:
    """Once a producer id wrote with a newer epoch, no batch with an older epoch is appended."""
    newest: dict[int, int] = {}
    for r in s.partition.log:
        if r.epoch < newest.get(r.producer_id, -1):
            return False
        newest[r.producer_id] = r.epoch
    return True


# --- InitProducerId / coordinator ----------------------------------------------------------------

def unique_producer_id_epoch(s: InitPidState) -> bool:
    """No two producer instances ever hold the same (producer id, epoch)."""
    held = [(c.producer_id, c.epoch) for c in s.clients if c.phase in (INIT_READY, INIT_IN_TXN)]
    return len(set(held)) == len(held)


def coordinator_epoch_monotonic(s: InitPidState, step: tuple, t: InitPidState) -> bool:
    """The coordinator's (producer id, epoch) never decreases, and the epoch never exceeds the maximum."""
    for before, after in ((s.metadata, t.metadata), (s.txn_log, t.txn_log)):
        if before.exists and after.exists and (after.producer_id, after.epoch) < (before.producer_id, before.epoch):
            return False
    return True


def sole_instance_never_fenced(s: InitPidState) -> bool:
    """A producer instance is fenced only after another instance of its transactional id started."""
    if s.faults.restarts:
        # a restarted slot's predecessor is another instance (its delayed request may fence)
        return True
    for i, c in enumerate(s.clients):
        if c.phase == INIT_FENCED and not any(o.started for j, o in enumerate(s.clients) if j != i):
            return False
    return True


def newest_instance_never_fenced(s: InitPidState) -> bool:
    """A producer instance is fenced only after a newer instance of its transactional id started."""
    for i, c in enumerate(s.clients):
        if c.phase == INIT_FENCED and not any(o.started > c.started for j, o in enumerate(s.clients) if j != i):
            return False
    return True


def no_unexpected_server_error(s: InitPidState, step: tuple, t: InitPidState) -> bool:
    """InitProducerId never fails with UNKNOWN_SERVER_ERROR (an IllegalStateException on the coordinator)."""
    return not (step[0] == "HandleInitProducerId" and step[-1] == -1)


def coordinator_epoch_monotonic_within(max_epoch: int):
    """CoordinatorEpochMonotonic for a given maximum epoch."""
    def check(s: InitPidState, step: tuple, t: InitPidState) -> bool:
        if t.metadata.epoch > max_epoch or t.txn_log.epoch > max_epoch:
            return False
        return coordinator_epoch_monotonic(s, step, t)
    check.__doc__ = coordinator_epoch_monotonic.__doc__
    return check


def coordinator_legal_state(s: InitPidState, step: tuple, t: InitPidState) -> bool:
    """The coordinator never reaches an illegal state: every metadata transition is one TransactionMetadata allows."""
    from .transactions.states import is_valid_transition
    before, after = s.metadata, t.metadata
    if after.exists and after.epoch < 0:
        return False  # completed metadata always has an epoch
    if before.exists and after.exists and before.state != after.state:
        return is_valid_transition(before.state, after.state)
    if before.exists and not after.exists:
        return is_valid_transition(before.state, 6)  # removal goes through Dead
    return True


# --- liveness (state predicates of the temporal properties) --------------------------------------

def _client_settled(c: IdempotentClient) -> bool:
    sent = (1 << c.sent) - 1
    return c.fatal or (c.acked | c.failed) & sent == sent


def sends_outstanding(s: IdempotentState) -> bool:
    """Some record handed to send() is neither acknowledged nor failed to the application yet."""
    return not sends_completed(s)


def sends_completed(s: IdempotentState) -> bool:
    """Every record the idempotent producer sends is eventually acknowledged or failed to the application (or the producer reports a fatal error)."""
    return all(_client_settled(c) for c in s.clients)


def init_pending(s: InitPidState) -> bool:
    """Some producer instance is running initTransactions (InitProducerId not answered for good yet)."""
    return any(c.phase == INIT_INITIALIZING for c in s.clients)


def init_settled(s: InitPidState) -> bool:
    """Every producer instance that runs initTransactions eventually gets a producer id and epoch or is fenced (never stuck retrying, never failed fatally)."""
    return all(c.phase not in (INIT_INITIALIZING, INIT_FATAL) for c in s.clients)


# --- kafka.eos: transactions with sequences across partitions ----------------------------------------
# Each takes the parts it reads by their kafka.eos names: ``leader`` (every output partition's
# leader), ``producer`` (every producer), ``txn`` (the coordinator's metadata per transactional id).
# A data entry's value is record_value(producer, record); a producer's record r on a partition belongs
# to its transaction r // batches.

RECORD_BITS = 8
# kinds and states as plain ints: these checks run on every memo miss, and reading an IntEnum member
# (and comparing with it) costs ~100 ns, an int constant a few
_TXN_DATA, _COMMIT, _ABORT = int(EntryKind.TXN_DATA), int(EntryKind.COMMIT), int(EntryKind.ABORT)
_PREPARING = frozenset({int(TxnState.PREPARE_COMMIT), int(TxnState.PREPARE_ABORT)})
_LIVE = frozenset({int(TxnState.ONGOING)}) | _PREPARING
#: the partition id kafka.eos gives the group's __consumer_offsets partition inside a transaction
OFFSETS_PARTITION = 7

Leaders = tuple[TxnPartitionState, ...]
Producers = tuple[TxnProducer, ...]


def record_value(producer: int, record: int) -> int:
    """The payload kafka.eos writes for a producer's record (what the properties identify it by)."""
    return producer << RECORD_BITS | record


def record_of(value: int) -> tuple[int, int]:
    return value >> RECORD_BITS, value & ((1 << RECORD_BITS) - 1)


def _outcomes(log: tuple[LogEntry, ...]) -> list[tuple[int, int]]:
    """(value, outcome kind) of every transactional data entry (outcome TXN_DATA while undecided)."""
    return [(e.value, outcome_of(log, off)) for off, e in enumerate(log) if e.kind == _TXN_DATA]


#: ``committed_values`` and the values not aborted per log, by the log's identity. kafka.eos's
#: properties are memoised per state part, and a new leader (a produce, a marker) misses every
#: property that reads it; they read one log, which is one object (the leader's interned value), so
#: its scans are shared. Each entry holds its log, so an id is never reused while its entry lives.
_BY_LOG: dict[int, tuple[tuple[LogEntry, ...], tuple[int, ...], frozenset[int]]] = {}
_BY_LOG_MAX = 1 << 16


def _log_values(log: tuple[LogEntry, ...]) -> tuple[tuple[LogEntry, ...], tuple[int, ...], frozenset[int]]:
    hit = _BY_LOG.get(id(log))
    if hit is not None and hit[0] is log:
        return hit
    if len(_BY_LOG) >= _BY_LOG_MAX:
        _BY_LOG.clear()
    out = _BY_LOG[id(log)] = (log, committed_values(log),
                              frozenset(v for v, outcome in _outcomes(log) if outcome != _ABORT))
    return out


def log_committed(log: tuple[LogEntry, ...]) -> tuple[int, ...]:
    """``committed_values(log)``, computed once per log object."""
    return _log_values(log)[1]


def eos_no_duplicate(leader: Leaders) -> bool:
    """No record is committed twice on a partition."""
    for part in leader:
        values = log_committed(part.log)
        if len(values) != len(set(values)):
            return False
    return True


def eos_no_loss(leader: Leaders, producer: Producers, batches: int) -> bool:
    """Every record of a transaction the producer saw committed is in its partition's log and not aborted."""
    return all(eos_no_loss_at(t, part, prod, batches) for part in leader for t, prod in enumerate(producer))


def eos_no_loss_at(t: int, part: TxnPartitionState, prod: TxnProducer, batches: int) -> bool:
    """``eos_no_loss`` for producer ``t`` on one partition (kafka.eos memoises it per pair)."""
    if not prod.committed:
        return True
    kept = _log_values(part.log)[2]
    for txn in range(prod.txn):
        if prod.committed >> txn & 1 and any(record_value(t, r) not in kept
                                             for r in range(txn * batches, (txn + 1) * batches)):
            return False
    return True


def eos_atomic_transactions(leader: Leaders, batches: int) -> bool:
    """No transaction of the application is committed on one partition and aborted on another."""
    committed: set[tuple[int, int]] = set()
    aborted: set[tuple[int, int]] = set()
    for part in leader:
        for value, outcome in _outcomes(part.log):
            t, r = record_of(value)
            if outcome == _COMMIT:
                committed.add((t, r // batches))
            elif outcome == _ABORT:
                aborted.add((t, r // batches))
    return not committed & aborted


def eos_no_aborted_read(leader: Leaders) -> bool:
    """read_committed never reads an undecided batch: the leader's LSO never passes an open transaction's batch above the log start offset."""
    from .partition.txn_produce import producer_state_lso
    for part in leader:
        for off in range(part.log_start_offset, min(producer_state_lso(part), len(part.log))):
            if part.log[off].kind == _TXN_DATA and outcome_of(part.log, off) == _TXN_DATA:
                return False
    return True


def eos_no_aborted_delivery(leader: Leaders, reader: tuple[tuple[int, tuple[int, ...]], ...]) -> bool:
    """No read_committed consumer delivered a record whose transaction is aborted."""
    return all(outcome_of(part.log, off) != _ABORT for part, (_, delivered) in zip(leader, reader)
               for off in delivered)


def eos_no_hanging_transaction(leader: Leaders, txn: tuple[TxnMetadata, ...],
                               offsets_leader: TxnPartitionState | None = None) -> bool:
    """Every transaction open on a partition is one its coordinator tracks there (Ongoing or PrepareX with the partition)."""
    live = _LIVE
    partitions = list(enumerate(leader))
    if offsets_leader is not None:
        partitions.append((OFFSETS_PARTITION, offsets_leader))
    for p, part in partitions:
        for pid, _ in open_transactions(part.log):
            if not any(m.exists and m.producer_id == pid and m.state in live and p in m.partitions for m in txn):
                return False
    return True


def eos_exactly_once(leader: Leaders, producer: Producers, group: Any, txn: tuple[TxnMetadata, ...],
                     batches: int) -> bool:
    """Consume-transform-produce: once a producer's transaction is decided, the committed output is exactly that of the input records below its committed offset, once each."""
    return all(eos_exactly_once_at(t, part, prod, group, txn[t], batches)
               for t, prod in enumerate(producer) for part in leader)


def eos_exactly_once_at(t: int, part: TxnPartitionState, prod: TxnProducer, group: Any, meta: TxnMetadata,
                        batches: int) -> bool:
    """``eos_exactly_once`` for producer ``t`` on one partition (kafka.eos memoises it per pair)."""
    if not prod.inputs or meta.state in _PREPARING or bool(getattr(group, "completing", None)):
        # a marker's offsets still to be completed by the group coordinator (2.0-3.9's scheduled
        # completion) are as undecided as a PrepareX: require_stable readers wait for them
        return True
    committed = max(group.offsets[t].offset, 0)
    counts: dict[int, int] = {}
    for value in log_committed(part.log):
        owner, r = record_of(value)
        if owner == t:
            source = prod.inputs[r // batches]
            counts[source] = counts.get(source, 0) + 1
    return counts == {i: batches for i in range(committed)}


def eos_per_partition_order(leader: Leaders) -> bool:
    """On each partition a producer's committed records appear in the order it sent them."""
    for part in leader:
        last: dict[int, int] = {}
        for value in log_committed(part.log):
            t, r = record_of(value)
            if r <= last.get(t, -1):
                return False
            last[t] = r
    return True


def eos_no_zombie_write(leader: Leaders, offsets_leader: TxnPartitionState | None = None) -> bool:
    """Once a producer id's epoch was superseded on a partition (by data or a marker), no batch or offset commit of an older epoch is appended."""
    for part in leader + ((offsets_leader,) if offsets_leader is not None else ()):
        newest: dict[int, int] = {}
        for e in part.log:
            if e.kind == _TXN_DATA and e.producer_epoch < newest.get(e.producer_id, -1):
                return False
            newest[e.producer_id] = max(newest.get(e.producer_id, -1), e.producer_epoch)
    return True


def eos_out_of_order_only_on_loss(step: tuple, before: Any, after: Any) -> bool:
    """OutOfOrderSequenceException reaches the application only when one of its acknowledged records was lost."""
    if step[0] != "HandleProduceResponse" or step[-1] != RAISED_OUT_OF_ORDER:
        return True
    partition, t = step[1], step[2]
    logged = {e.value for e in after.leader[partition].log}
    acked = after.producer[t].parts[partition].acked
    return any(acked >> r & 1 and record_value(t, r) not in logged for r in range(acked.bit_length()))


def _awaited_refusal(step: tuple, before: Any, error: int) -> Any:
    """The leader's held request that an AppendVerifiedProduce ``step`` refuses with ``error``, when its producer
    still awaits that batch (in flight on the request's connection); None otherwise."""
    from .state import INFLIGHT
    if step[0] != "AppendVerifiedProduce" or step[-1] != error:
        return None
    partition, client, record = step[1], step[2], step[3]
    item = next((p for p in before.leader[partition].pending
                 if p.request.client == client and p.request.record == record), None)
    if item is None:
        return None
    part = before.producer[client].parts[partition]
    awaited = item.request.connection == part.connection and any(
        b.record == record and b.status == INFLIGHT for b in part.batches)
    return item.request if awaited else None


def eos_no_spurious_txn_state_refusal(step: tuple, before: Any, after: Any) -> bool:
    """A leader refuses a batch its producer still awaits as outside any transaction (INVALID_TXN_STATE) only when the coordinator no longer has that transaction ongoing with the partition in it."""
    from .errors import Errors
    req = _awaited_refusal(step, before, Errors.INVALID_TXN_STATE)
    if req is None:
        return True
    meta = before.txn[req.client]
    return not (meta.exists and meta.state == TxnState.ONGOING and meta.producer_id == req.producer_id
                and meta.epoch == req.epoch and step[1] in meta.partitions)


def eos_no_spurious_out_of_order(step: tuple, before: Any, after: Any) -> bool:
    """A leader refuses as out of order (OUT_OF_ORDER_SEQUENCE_NUMBER) a batch its producer still awaits that directly follows the producer's last one at its epoch only behind a lower sequence of that epoch being verified."""
    from .errors import Errors
    from .partition.producer_state import find_entry
    from .partition.verification import find_verification
    req = _awaited_refusal(step, before, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER)
    if req is None:
        return True
    leader = before.leader[step[1]]
    entry = find_entry(leader.producers, req.producer_id)
    follows = entry is not None and entry.epoch == req.epoch and bool(entry.batches) and (
        req.seq == entry.batches[-1].seq + 1)
    verifying = find_verification(leader.verifications, req.producer_id)
    behind_own_epoch = verifying is not None and verifying.epoch == req.epoch and verifying.lowest_sequence < req.seq
    return not (follows and not behind_own_epoch)


def eos_fenced_gets_fencing_error(step: tuple, before: Any, after: Any) -> bool:
    """A producer whose epoch the coordinator has superseded fails with a fencing error, never another one."""
    from .producer.transactional import FENCING_ERRORS
    pairs = list(enumerate(zip(before.producer, after.producer)))
    pairs += [(i, (old, new)) for i, (old, new) in enumerate(zip(getattr(before, "zombie", ()),
                                                               getattr(after, "zombie", ()))) if old and new]
    for i, (old, new) in pairs:
        if new.fatal_error and not old.fatal_error:
            meta = after.txn[i]
            # a producer holding the producer id the coordinator rotates to (TV2, still completing) is not
            # superseded: it was answered that id (``answer_after_end_txn``)
            rotated_to = new.producer_id >= 0 and new.producer_id == meta.next_producer_id
            superseded = meta.exists and (meta.producer_id != new.producer_id and not rotated_to
                                          or meta.producer_id == new.producer_id and meta.epoch > new.epoch)
            if superseded and new.fatal_error not in FENCING_ERRORS:
                return False
    return True


def eos_no_spurious_fencing(step: tuple, before: Any, after: Any) -> bool:
    """A producer is fenced (a fencing error, or 4.0's fatal INVALID_PRODUCER_ID_MAPPING) only once a newer instance or the coordinator's own fence has superseded it."""
    from .producer.transactional import FENCED_OUTCOMES
    zombies = getattr(after, "zombie", ())
    for i, (old, new) in enumerate(zip(before.producer, after.producer)):
        if new.fatal_error in FENCED_OUTCOMES and not old.fatal_error and not (i < len(zombies) and zombies[i]):
            # no newer instance (no zombie: the live one is the newest, and a zombie re-initialising may
            # have the coordinator fence it); the coordinator still holds the producer's pair, or only the
            # producer's own TV2 rotation moved it: completed (the previous producer id is the producer's)
            # or still completing (the next producer id is)
            meta = after.txn[i]
            own = meta.exists and ((meta.producer_id, meta.epoch) == (old.producer_id, old.epoch)
                                   or meta.producer_id != old.producer_id == meta.prev_producer_id >= 0
                                   or meta.next_producer_id == old.producer_id >= 0)
            if own:
                return False
    return True


def eos_epoch_in_range(producer: Producers, txn: tuple[TxnMetadata, ...], max_epoch: int) -> bool:
    """Every epoch the coordinator or a producer holds is within range, and live producers hold distinct (producer id, epoch)."""
    held = [(p.producer_id, p.epoch) for p in producer if p.producer_id >= 0 and not p.fatal_error]
    return len(held) == len(set(held)) and all(m.epoch <= max_epoch for m in txn) and all(e <= max_epoch
                                                                                      for _, e in held)
