"""The state records of the Kafka model: flat NamedTuples of ints, bools and tuples.

Everything here is immutable and hashes the same in every process (no str/None/float), as the
engine's fingerprints require. Actors update a record with ``_replace``; unchanged parts are
shared between states, so a successor costs one new tuple per level it touches.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .transactions.log import LogEntry

# --- the partition leader ------------------------------------------------------------------------


class CachedBatch(NamedTuple):
    """``BatchMetadata`` in a ``ProducerStateEntry``: the batch's last sequence and last offset;
    ``delta`` (``offsetDelta``) is its record count - 1, so its first sequence is ``seq - delta``
    (the machines write one record per batch: delta 0)."""

    seq: int
    offset: int
    delta: int = 0


class ProducerStateEntry(NamedTuple):
    """The leader's state for one producer id (``ProducerStateEntry``)."""

    producer_id: int
    epoch: int
    batches: tuple[CachedBatch, ...]  # oldest first, at most the broker's cache size (5; 1 in 0.11)
    last_timestamp: int  # the last batch's CreateTime, in ticks
    #: the coordinator epoch of the last marker written for the producer (-1: none)
    coordinator_epoch: int = -1
    #: ``currentTxnFirstOffset``: the offset of the producer's open transaction on the partition (-1: none)
    current_txn_first_offset: int = -1


class LogRecord(NamedTuple):
    """A record in the partition log. ``client``/``record`` identify the application's record
    (ghost fields for the properties); the rest is what the batch header carries."""

    client: int
    record: int
    producer_id: int
    epoch: int
    seq: int
    timestamp: int  # the batch's CreateTime (ticks): a rebuilt producer state takes it from here


class PartitionState(NamedTuple):
    """The partition leader: the full log history (offset = index), the log start offset, and the
    producer state table (sorted by producer id)."""

    log: tuple[LogRecord, ...]
    log_start_offset: int
    producers: tuple[ProducerStateEntry, ...]


class FollowerState(NamedTuple):
    """The follower replica's own view: the log is replicated before an ack (acks=all), but the
    log start offset reaches the follower only with a later fetch, and its producer state is its
    own (built by replication, truncated by its own log start offset, expired by its own check)."""

    log_start_offset: int
    producers: tuple[ProducerStateEntry, ...]


# --- the idempotent producer client ------------------------------------------------------------

QUEUED, INFLIGHT, RETRY = 0, 1, 2
BATCH_STATUS_NAMES = {QUEUED: "queued", INFLIGHT: "in-flight", RETRY: "to-retry"}


class ProducerBatch(NamedTuple):
    """A batch in the client's accumulator or in flight (one record per batch)."""

    record: int  # the application's record id, in send order
    created: int  # the tick send() was called: CreateTime, delivery.timeout.ms counts from here
    status: int  # QUEUED (no sequence yet) / INFLIGHT (request outstanding) / RETRY
    producer_id: int
    epoch: int
    seq: int  # NO_SEQUENCE until first drained
    sequence_reset: bool  # ``ProducerBatch.sequenceHasBeenReset``
    retried: bool = False  # ``ProducerBatch.inRetry``: sent again after a retriable failure


class IdempotentClient(NamedTuple):
    """One idempotent producer instance writing to the partition."""

    producer_id: int
    epoch: int
    next_seq: int
    last_acked_seq: int
    last_acked_offset: int
    sent: int  # records handed to send() so far (the next record id)
    batches: tuple[ProducerBatch, ...]  # not yet completed, in record order
    acked: int  # bitmask of acknowledged record ids
    failed: int  # bitmask of record ids whose send failed (reported to the application)
    connection: int  # generation of the connection to the leader (a timeout closes it)
    epoch_bump_required: bool  # KIP-360: bump the epoch for this partition
    #: ``partitionsWithUnresolvedSequences``: -1, or the sequence right after a batch that expired
    #: after being sent (the partition's sequence is unresolved until its in-flight batches complete)
    unresolved: int
    fatal: bool  # the producer is in a fatal error state
    known_leader_epoch: int = 0  # the leader in the client's metadata; refreshed after NOT_LEADER_OR_FOLLOWER


# --- the network -----------------------------------------------------------------------------


class ProduceRequest(NamedTuple):
    client: int
    connection: int
    record: int
    producer_id: int
    epoch: int
    seq: int
    created: int
    leader_epoch: int = 0  # the leader the client sent to; another leader answers NOT_LEADER_OR_FOLLOWER


class ProduceResponse(NamedTuple):
    client: int
    connection: int
    record: int
    error: int
    base_offset: int
    log_start_offset: int


class IdempotentFaults(NamedTuple):
    """Faults used so far (each bounded by the spec)."""

    lost_responses: int
    transient_errors: int
    delete_records: int
    leader_failovers: int
    restarted_replica_failovers: int
    snapshot_restored_failovers: int = 0


class IdempotentState(NamedTuple):
    now: int  # abstract time in ticks
    next_producer_id: int  # the producer id block allocator's next id
    partition: PartitionState  # the leader's log, log start offset and producer state
    follower: tuple[FollowerState, ...]  # empty when the spec allows no leader failover
    leader_epoch: int
    clients: tuple[IdempotentClient, ...]
    requests: tuple[ProduceRequest, ...]  # in send order
    responses: tuple[ProduceResponse, ...]  # in send order
    faults: IdempotentFaults


# --- the transaction coordinator (InitProducerId machine) --------------------------------------


class TxnMetadata(NamedTuple):
    """``TransactionMetadata`` for one transactional id on its transaction coordinator (in memory).

    One record for both halves of the model: ``kafka.init_producer_id`` keeps its pending append in
    a ``PendingAppend`` beside the metadata (so ``pending_state`` stays -1 and ``partitions`` empty
    there); the transaction state machine (``model.transactions``, ``kafka.eos_pipeline``) uses all
    of it. ``model.transactions.metadata.TxnMeta`` is this class.
    """

    #: False: no metadata for the transactional id (never initialised, or expired)
    exists: bool
    producer_id: int
    #: ``previousProducerId`` (KIP-360's LastProducerId)
    prev_producer_id: int
    #: ``producerEpoch``
    epoch: int
    #: ``lastProducerEpoch`` (KIP-360; in memory only in Kafka)
    last_epoch: int
    #: TransactionState id (``model.transactions.codes.TxnState``)
    state: int
    #: ``hasFailedEpochFence`` (KAFKA-9666): a fence whose PrepareAbort write failed does not bump again
    has_failed_epoch_fence: bool
    #: ``pendingState``; -1 (``transactions.codes.NO_PENDING``) when None
    pending_state: int = -1
    #: ``topicPartitions``: the partitions added to the ongoing transaction, sorted
    partitions: tuple[int, ...] = ()
    #: ``nextProducerId`` (KIP-890 part 2): the producer id a TV2 EndTxn at an exhausted epoch
    #: allocated; it replaces the producer id when the transaction completes (-1: none)
    next_producer_id: int = -1
    #: ``clientTransactionVersion`` recorded by the last transition (0, 1 or 2): each transaction
    #: carries the version its EndTxn was sent with, so a client can upgrade or downgrade midway
    tv: int = 0


class TxnLogValue(NamedTuple):
    """The latest ``__transaction_state`` record for a transactional id (``TransactionLogValue``;
    exists=False: a tombstone or nothing written yet). Which fields it holds depends on the
    persistence switches (``model.coordinator.txn_log``); one record for both halves of the model
    (``model.transactions.metadata.TxnLogRecord`` is this class)."""

    exists: bool
    producer_id: int
    prev_producer_id: int
    epoch: int
    last_epoch: int
    state: int
    #: the transaction's partitions (none for Empty: ``TransactionLog.valueToBytes`` writes null)
    partitions: tuple[int, ...] = ()
    #: ``ClientTransactionVersion`` (tagged field 2 of value version 1, written from the 2024-10 snapshot on when
    #: transaction.version >= 1; every metadata whose version is not 0 is written so)
    tv: int = 0


class PendingAppend(NamedTuple):
    """A transition being appended to the transaction log (``pendingState`` is set meanwhile)."""

    client: int  # who gets the response when the append completes
    attempt: int
    metadata: TxnMetadata  # the transit to complete


INIT_IDLE, INIT_INITIALIZING, INIT_READY, INIT_FENCED, INIT_FATAL, INIT_IN_TXN = 0, 1, 2, 3, 4, 5
CLIENT_PHASE_NAMES = {INIT_IDLE: "idle", INIT_INITIALIZING: "initializing", INIT_READY: "ready",
                      INIT_FENCED: "fenced", INIT_FATAL: "fatal", INIT_IN_TXN: "in-transaction"}


class TxnClient(NamedTuple):
    """A transactional producer instance (one slot may host successive instances)."""

    phase: int
    producer_id: int
    epoch: int
    attempt: int  # correlation: responses to an older attempt are dropped with its connection
    req_producer_id: int  # what the outstanding InitProducerId carries (-1: not given)
    req_epoch: int
    #: ghost: 0 before any instance ran in this slot; -1 until the coordinator handles the current
    #: instance's InitProducerId; then the order (1, 2, ...) in which the coordinator last handled an
    #: InitProducerId without producer id/epoch from it (which instance is newer)
    started: int


class InitPidRequest(NamedTuple):
    client: int
    attempt: int
    producer_id: int
    epoch: int


class InitPidResponse(NamedTuple):
    client: int
    attempt: int
    error: int
    producer_id: int
    epoch: int


class InitPidFaults(NamedTuple):
    lost_responses: int
    failovers: int
    abortable_errors: int
    restarts: int
    expirations: int
    transactions: int


class InitPidState(NamedTuple):
    next_producer_id: int
    metadata: TxnMetadata
    txn_log: TxnLogValue
    pending: tuple[PendingAppend, ...]  # empty or one
    clients: tuple[TxnClient, ...]
    requests: tuple[InitPidRequest, ...]
    responses: tuple[InitPidResponse, ...]
    faults: InitPidFaults


# --- kafka.eos: transactional producers, transaction coordinator, output partitions ----------------

TXN_INIT, TXN_READY, TXN_IN_TXN, TXN_ABORTABLE, TXN_BUMP, TXN_FENCED, TXN_FATAL = 0, 1, 2, 3, 4, 5, 6
#: a per-partition (EOS alpha) task's producer at a member that does not run the task: closed, none created
TXN_CLOSED = 7
TXN_PHASE_NAMES = {TXN_INIT: "initializing", TXN_READY: "ready", TXN_IN_TXN: "in-transaction",
                   TXN_ABORTABLE: "abortable-error", TXN_BUMP: "bumping-epoch", TXN_FENCED: "fenced",
                   TXN_FATAL: "fatal", TXN_CLOSED: "closed (no task)"}


class TxnProducer(NamedTuple):
    """A transactional producer instance (``KafkaProducer`` + ``TransactionManager``) with its own
    transactional id. Its per-partition sequence state (``TxnPartitionEntry``: next sequence, last
    acknowledged, batches queued and in flight) is an ``IdempotentClient`` per output partition, whose
    record ids count the records sent to that partition (record r belongs to transaction r // batches)."""

    phase: int  # TXN_*
    producer_id: int
    epoch: int
    txn: int  # the application's current transaction (0, 1, ...): the next to begin when READY
    added: int  # bitmask of the partitions AddPartitionsToTxn added to the open transaction
    parts: tuple[IdempotentClient, ...]
    committed: int  # ghost: transactions whose EndTxn(COMMIT) was answered NONE
    aborted: int  # ghost: transactions the application aborted
    #: the abortable error needs an epoch bump after the abort (KIP-360: a sent batch failed or timed out);
    #: 2 (``transactional.SKIP_END_TXN``): the last error was InvalidPidMappingException, the abort skips EndTxn;
    #: set in READY or IN_TRANSACTION: epochBumpRequired survived an abort that InitProducerId's answer ended
    #: (``transactional.keeps_partitions_added``), so the next EndTxn, commit or abort, is followed by a bump
    bump_after_abort: int
    #: ghost: the error that made the producer fenced or fatal (0 while it is neither)
    fatal_error: int = 0
    #: consume-transform-produce: the next input offset to process (-1: unknown, OffsetFetch first)
    position: int = -1
    #: consume-transform-produce, ghost: the input offset each transaction processed (by transaction)
    inputs: tuple[int, ...] = ()
    #: consume-transform-produce: 0 nothing yet, 1 AddOffsetsToTxn done, 2 TxnOffsetCommit written
    offsets: int = 0
    #: the transaction version its EndTxn carries (0, or 2: EndTxn v5, KIP-890 part 2); it may change
    #: between two transactions (``client_tv_change``)
    tv: int = 0


class TxnPartitionState(NamedTuple):
    """An output partition's leader in ``kafka.eos``: the log of data batches and markers
    (``transactions.log.LogEntry``, so the LSO and read_committed rules read it), the log start offset
    and the producer state table."""

    log: tuple[LogEntry, ...]
    log_start_offset: int
    producers: tuple[ProducerStateEntry, ...]
    #: KIP-890 verification entries (``partition.verification.VerificationEntry``) and the produce requests
    #: waiting between their verification and their append (``partition.txn_produce.PendingProduce``); both
    #: stay empty unless ``verification_steps`` splits the two (the one-step rule keeps neither)
    verifications: tuple[Any, ...] = ()
    pending: tuple[Any, ...] = ()


class Routed(NamedTuple):
    """A produce request or response on its way between a producer and a partition leader: the
    routing (partition, the producer as ``client``, its connection to the leader, the record) and the
    message."""

    partition: int
    client: int
    connection: int
    record: int
    message: ProduceRequest | ProduceResponse
