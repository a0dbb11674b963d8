"""The safety properties, one function each, with a one-line doc (the doc is what the user sees).

Invariants take a state; transition properties take (state, step, next_state).
"""

from __future__ import annotations

from .producer.client import RAISED_OUT_OF_ORDER
from .state import INIT_FATAL, INIT_FENCED, INIT_INITIALIZING, INIT_IN_TXN, INIT_READY, IdempotentClient, IdempotentState, InitPidState, LogRecord

# --- idempotent produce ------------------------------------------------------------------------


def no_duplicates(s: IdempotentState) -> bool:
    """No record is appended to the partition log twice."""
    log = s.partition.log
    return len({(r.client, r.record) for r in log}) == len(log)


def send_order_no_loss(s: IdempotentState) -> bool:
    """Per producer, records appear in send order with no gap, and nothing acknowledged is lost."""
    log = s.partition.log
    return all(client_send_order_no_loss(log, c, client) for c, client in enumerate(s.clients))


def client_send_order_no_loss(log: tuple[LogRecord, ...], c: int, client: IdempotentClient) -> bool:
    """SendOrderNoLoss for client ``c`` alone (the property holds when it holds for every client)."""
    seen: list[int] = []
    logged = 0
    for r in log:
        if r.client == c and not logged >> r.record & 1:
            if seen and r.record < seen[-1]:
                return False  # out of send order
            seen.append(r.record)
            logged |= 1 << r.record
    if client.acked & ~logged:
        return False  # an acknowledged record is not in the log
    pending = 0
    for b in client.batches:
        pending |= 1 << b.record
    below = (1 << (seen[-1] + 1)) - 1 if seen else 0
    return not below & ~(logged | client.failed | pending)  # else a gap: neither written, failed nor pending


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
