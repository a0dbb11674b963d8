"""The transaction coordinator, one function per request or event (for one transactional id).

Every function takes a ``CoordinatorState`` and a ``Protocol`` and returns ``(response, state)``.
The rules underneath are the machines' own: ``coordinator.handler.handle_init_producer_id`` (the
InitProducerId machine), ``transactions.end_txn`` / ``add_partitions`` / ``timeout`` / ``markers``
(the pipeline machine). What this layer adds is Kafka's request handling around the rules:
KafkaApis' INVALID_REQUEST for exactly one of producer id and epoch, empty and null transactional
ids, the transaction-timeout check, COORDINATOR_LOAD_IN_PROGRESS while the log loads, the result
of the ``__transaction_state`` append, (-1, -1) in every error answer, and the down-conversion of
PRODUCER_FENCED for old request versions (InitProducerId v < 4, EndTxn / AddPartitionsToTxn /
AddOffsetsToTxn v < 2).
"""

from __future__ import annotations

from typing import NamedTuple

from eoscheck.checker.ops import CONCRETE

from ..coordinator.fencing import fence_producer_epoch
from ..coordinator.handler import CoordinatorConfig
from ..coordinator.handler import handle_init_producer_id as _handle_init
from ..coordinator.init_producer_id import init_producer_id_decision, is_epoch_exhausted
from ..coordinator.txn_log import NO_METADATA
from ..coordinator.txn_log import append_error_answer as _append_error_answer
from ..errors import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, Errors
from ..protocol import TransactionVersion
from ..state import TxnMetadata
from ..transactions.add_partitions import add_partitions_to_txn
from ..transactions.add_partitions import verify_partitions as _verify
from ..transactions.codes import NO_PENDING, TxnResult, TxnState
from ..transactions.end_txn import (
    answer_after_end_txn,
    end_txn,
    end_txn_snapshot,
    end_txn_tv2,
    prepare_abort_or_commit,
)
from ..transactions.failover import load_transaction
from ..transactions.markers import complete_if_done, on_marker_response
from ..transactions.metadata import new_metadata, to_log_record
from ..transactions.states import EXPIRATION_ALLOWED, is_valid_transition
from ..transactions.timeout import abort_timed_out as _abort_timed_out
from ..transactions.timeout import fence_write_failed
from .protocol import Protocol, two_phase_commit

_MODES = {"pre-kip360": (False, False), "kip360-designed": (True, False), "kip360-shipped": (True, True)}


class CoordinatorState(NamedTuple):
    """One transactional id on its coordinator: its metadata (``NO_METADATA``: none), the producer
    id allocator's next id, and whether the ``__transaction_state`` partition is still loading."""

    metadata: TxnMetadata
    next_producer_id: int
    loading: bool = False
    #: what ``getTransactionState`` answers instead of the metadata (NOT_COORDINATOR: another
    #: broker owns the partition; 0: nothing)
    lookup_error: int = 0


def _lookup_error(state: CoordinatorState) -> int:
    if state.loading:
        return int(Errors.COORDINATOR_LOAD_IN_PROGRESS)
    return state.lookup_error


def put_transaction_state_if_not_exists(state: CoordinatorState, metadata: TxnMetadata) -> tuple[int, CoordinatorState]:
    """``TransactionStateManager.putTransactionStateIfNotExists`` (``getAndMaybeAddTransactionState``,
    as InitProducerId uses it for a new transactional id): the lookup's error (the partition loading, or
    not owned here); else the cached metadata, the new one cached only when there was none."""
    err = _lookup_error(state)
    if err or state.metadata.exists:
        return err, state
    return 0, state._replace(metadata=metadata)


class InitProducerIdRequest(NamedTuple):
    transactional_id: str | None  # None: an idempotent producer
    producer_id: int = NO_PRODUCER_ID
    epoch: int = NO_PRODUCER_EPOCH
    txn_timeout_ms: int = 60000
    version: int = 5
    #: KIP-939's Enable2Pc and KeepPreparedTxn (v6+, ``TWO_PC_SINCE``)
    enable_2pc: bool = False
    keep_prepared_txn: bool = False


#: the first InitProducerId version with Enable2Pc and KeepPreparedTxn (4.1.0 InitProducerIdRequest.json, "Version 6
#: adds support for 2PC (KIP-939)", latestVersionUnstable through 4.2.0-rc1); an older request reads both as false
TWO_PC_SINCE = 6


def _two_pc_fields(request: InitProducerIdRequest, protocol: Protocol) -> tuple[bool, bool]:
    """(enable2Pc, keepPreparedTxn) as the broker reads them: false unless its version has KIP-939 (4.1.0+) and the
    request is v6+ (the generated data class leaves a field of a later version at its default, false)."""
    if not two_phase_commit(protocol) or request.version < TWO_PC_SINCE:
        return False, False
    return request.enable_2pc, request.keep_prepared_txn


#: the timeout a 2PC transaction is stored with (4.1.0 TransactionCoordinator.scala l.146: ``if (enableTwoPCFlag)
#: Int.MaxValue``), by which ``TransactionMetadata.isDistributedTwoPhaseCommitTxn`` knows it
TWO_PC_TIMEOUT_MS = 2**31 - 1


def resolved_txn_timeout(request: InitProducerIdRequest, protocol: Protocol) -> int:
    """The timeout an InitProducerId that succeeds stores: Int.MaxValue with 2PC, else the request's."""
    return TWO_PC_TIMEOUT_MS if _two_pc_fields(request, protocol)[0] else request.txn_timeout_ms


def may_time_out(txn_timeout_ms: int, protocol: Protocol) -> bool:
    """``TransactionStateManager.timedOutTransactions`` lists an Ongoing transaction only if it is not a 2PC one
    (``!txnMetadata.isDistributedTwoPhaseCommitTxn``, l.139 at 4.1.0, l.141 at 4.2.0-rc1): from 4.1.0 a transaction
    whose timeout is Int.MaxValue is never aborted for its timeout. Before, any timeout can pass (the model's clock is
    abstract: the timeout abort is a step, not a comparison of times)."""
    return not (two_phase_commit(protocol) and txn_timeout_ms == TWO_PC_TIMEOUT_MS)


def authorize_init(request: InitProducerIdRequest, protocol: Protocol, denied: frozenset[str]) -> int:
    """KafkaApis.handleInitProducerIdRequest's checks on a transactional id before anything else: WRITE, and with
    enable2Pc also TWO_PHASE_COMMIT (KIP-939, 4.1.0 .. 4.2.0-rc1 KafkaApis.scala l.1600-1606), each refused with
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED. ``denied``: the operations the authorizer denies on the transactional id
    (none without an authorizer). An idempotent producer's IDEMPOTENT_WRITE / topic WRITE check is not modelled."""
    if request.transactional_id is None:
        return 0
    if "WRITE" in denied or ("TWO_PHASE_COMMIT" in denied and _two_pc_fields(request, protocol)[0]):
        return int(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    return 0


class Response(NamedTuple):
    error: int
    producer_id: int = NO_PRODUCER_ID
    epoch: int = NO_PRODUCER_EPOCH


def _error(error: int) -> Response:
    return Response(int(error), NO_PRODUCER_ID, NO_PRODUCER_EPOCH)


def config(protocol: Protocol) -> CoordinatorConfig:
    kip360, shipped = _MODES[protocol.init_producer_id]
    return CoordinatorConfig(kip360=kip360, shipped=shipped, max_epoch=protocol.max_epoch,
                             persist_last_epoch=False, persist_prev_producer_id=False)


def _tv2_fence(meta: TxnMetadata, protocol: Protocol) -> bool:
    """The fence-abort runs TV2's endTransaction: a 4.0+ server (kafka.eos's ``transaction_version`` tv2), for
    which the metadata's client version stands here, as in ``_fence_failed``. Before 4.0 (the 2024-10 snapshot
    included, whose kafka.eos variant is 3.8-3.9's) the fence is the TV1 one."""
    return meta.tv >= 2 and protocol.eos.transaction_version == TransactionVersion.TV2


def _as_short(meta: TxnMetadata) -> TxnMetadata:
    """Epochs are Java shorts: 4.0.0's TV2 fence-abort at Short.MaxValue - 1 installs Short.MaxValue and
    ``prepareAbortOrCommit`` bumps it again, ``(producerEpoch + 1).toShort`` = -32768 (4.0.0
    TransactionMetadata.scala l.339, "We already ensured that we do not overflow here"; the overflow KAFKA-19367's
    shouldHandleTimeoutAtEpochOverflowBoundaryCorrectlyTV2, first tag 4.0.1, tests against)."""
    def short(v: int) -> int:
        return (v + 2**15) % 2**16 - 2**15
    return meta._replace(epoch=short(meta.epoch), last_epoch=short(meta.last_epoch))


def _fence_failed(meta: TxnMetadata, protocol: Protocol) -> TxnMetadata:
    """The PrepareAbort of a fence was not written: the fenced epoch stays in memory (lastEpoch -1),
    the transaction stays Ongoing, and the next fence does not bump again (KAFKA-9666, 2.6.0; before,
    the next fence bumps again and 2.5's lastEpoch is the epoch before the fence). A TV2 fence after
    KAFKA-19367 (4.0.1, 4.1.0) leaves the metadata as it was; the fence runs at the server's transaction
    version, for which the metadata's client version stands here (kafka.eos's ``tv2_failed_fence_leaves_epoch``, read through ``Protocol.eos``)."""
    if protocol.eos.tv2_failed_fence_leaves_epoch and meta.tv >= 2:
        return fence_write_failed(meta, max_epoch=protocol.max_epoch, keeps_epoch=True, leaves_epoch=True)
    failed = fence_write_failed(meta, max_epoch=protocol.max_epoch, keeps_epoch=protocol.failed_fence_keeps_epoch)
    return failed._replace(last_epoch=_fence_last_epoch(meta, protocol))


def _before_kafka_9666(meta: TxnMetadata, protocol: Protocol) -> TxnMetadata:
    """Before KAFKA-9666 (2.6.0) TransactionMetadata has no hasFailedEpochFence: every fence bumps."""
    if protocol.failed_fence_keeps_epoch or not meta.has_failed_epoch_fence:
        return meta
    return meta._replace(has_failed_epoch_fence=False)


def _fence_last_epoch(before: TxnMetadata, protocol: Protocol) -> int:
    """lastProducerEpoch after a fence-abort: -1 (2.6.0+), or, in 2.5.x, the in-memory epoch before the
    fence (``txnMetadata.lastProducerEpoch = txnMetadata.producerEpoch`` in endTransaction)."""
    return before.epoch if protocol.fence_keeps_last_epoch else NO_PRODUCER_EPOCH


def _after_fence_abort(fenced: TxnMetadata, before: TxnMetadata, protocol: Protocol) -> TxnMetadata:
    if not protocol.fence_keeps_last_epoch:
        return fenced
    return fenced._replace(last_epoch=_fence_last_epoch(before, protocol))


#: the first version of each request whose clients know PRODUCER_FENCED (KAFKA-9911, 2.7)
FENCED_SINCE = {"InitProducerId": 4, "EndTxn": 2, "AddPartitionsToTxn": 2, "AddOffsetsToTxn": 2}


def down_convert_fenced(error: int, api: str, version: int, protocol: Protocol) -> int:
    """``KafkaApis``: an older client does not know code 90, so PRODUCER_FENCED goes out as
    INVALID_PRODUCER_EPOCH (which it treats as fatal too). Before KIP-588 (2.7) there is no code 90:
    every fence is INVALID_PRODUCER_EPOCH, whatever the version."""
    if error != Errors.PRODUCER_FENCED:
        return error
    if not protocol.producer_fenced or (protocol.down_convert_fenced and version < FENCED_SINCE[api]):
        return int(Errors.INVALID_PRODUCER_EPOCH)
    return error


def handle_init_producer_id(state: CoordinatorState, request: InitProducerIdRequest, protocol: Protocol, *,
                            append_error: int = Errors.NONE, two_phase_commit_enable: bool = False,
                            denied: frozenset[str] = frozenset()) -> tuple[Response, CoordinatorState]:
    """InitProducerId (``KafkaApis.handleInitProducerIdRequest`` + ``TransactionCoordinator.
    handleInitProducerId``). ``append_error``: what the ``__transaction_state`` append answers;
    ``two_phase_commit_enable``: the broker's transaction.two.phase.commit.enable (KIP-939, default false);
    ``denied``: the ACL operations on the transactional id the authorizer denies (``authorize_init``)."""
    refused = authorize_init(request, protocol, denied)
    if refused:
        return _error(refused), state
    resp, new = _init(state, request, protocol, append_error, two_phase_commit_enable)
    err = down_convert_fenced(resp.error, "InitProducerId", request.version, protocol)
    return (resp if err == resp.error else _error(err)), new


def _init(state: CoordinatorState, request: InitProducerIdRequest, protocol: Protocol,
          append_error: int, two_phase_commit_enable: bool = False) -> tuple[Response, CoordinatorState]:
    pid, epoch = request.producer_id, request.epoch
    if request.version < 3:
        pid, epoch = NO_PRODUCER_ID, NO_PRODUCER_EPOCH  # the fields exist from v3 (KIP-360)
    if (pid == NO_PRODUCER_ID) != (epoch == NO_PRODUCER_EPOCH):
        return _error(Errors.INVALID_REQUEST), state
    if request.transactional_id is None:
        # idempotent: a fresh producer id at epoch 0; the request's producer id and epoch are ignored
        return Response(int(Errors.NONE), state.next_producer_id, 0), state._replace(
            next_producer_id=state.next_producer_id + 1)
    if request.transactional_id == "":
        return _error(Errors.INVALID_REQUEST), state
    # KIP-939 (4.1.0 .. 4.2.0-rc1 TransactionCoordinator.handleInitProducerId l.133-146): 2PC needs the broker's
    # transaction.two.phase.commit.enable, keepPreparedTxn is "not implemented yet", and a 2PC transaction's timeout is
    # not validated (it is stored as Int.MaxValue, which the model's metadata does not keep: it has no timeout)
    enable_2pc, keep_prepared_txn = _two_pc_fields(request, protocol)
    if enable_2pc and not two_phase_commit_enable:
        return _error(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED), state
    if keep_prepared_txn:
        return _error(Errors.UNSUPPORTED_VERSION), state
    if not valid_txn_timeout(request.txn_timeout_ms, protocol, enable_2pc):
        return _error(Errors.INVALID_TRANSACTION_TIMEOUT), state
    if _lookup_error(state):
        return _error(_lookup_error(state)), state
    meta = _before_kafka_9666(state.metadata, protocol)
    # 4.0.0's TV2 fence-abort bumps twice (the fenced epoch installed, then prepareAbortOrCommit's bump); KAFKA-19367
    # (4.0.1, 4.1.0) once: kafka.eos's tv2_fence_double_bump
    cfg = config(protocol)._replace(tv2=_tv2_fence(meta, protocol),
                                    tv2_fence_double_bump=protocol.eos.tv2_fence_double_bump)
    pending = meta.exists and meta.pending_state != NO_PENDING
    result = _handle_init(meta, pending, pid, epoch, state.next_producer_id, cfg)
    next_pid = state.next_producer_id + (1 if result.used_new_producer_id else 0)
    if not meta.exists and cfg.kip360:
        # Kafka puts the new metadata (epoch -1) in its cache before deciding; it stays on a failure
        created = new_metadata(state.next_producer_id)
        next_pid = state.next_producer_id + 1
    else:
        created = meta
    if result.transit is not None:
        if append_error != Errors.NONE:
            return _error(append_error), state._replace(metadata=created, next_producer_id=next_pid)
        transit = result.transit._replace(tv=0)  # the InitProducerId transition is written with TV_0
        return (Response(int(Errors.NONE), transit.producer_id, transit.epoch),
                state._replace(metadata=transit, next_producer_id=next_pid))
    if result.fenced is not None:
        # an Ongoing transaction: fence and abort (PrepareAbort written), or the write failed
        if append_error != Errors.NONE:
            return _error(append_error), state._replace(metadata=_fence_failed(meta, protocol))
        return _error(result.error), state._replace(metadata=_as_short(_after_fence_abort(result.fenced, meta, protocol)))
    return _error(result.error), state._replace(metadata=created, next_producer_id=next_pid)


class TransitionResult(NamedTuple):
    """A ``TransactionMetadata.prepareX`` call: the error, or None and the metadata once completed;
    ``exception``: the Java exception a precondition throws (IllegalStateException), else ''."""

    error: int
    metadata: TxnMetadata
    exception: str = ""


def prepare_increment_producer_epoch(meta: TxnMetadata, expected_epoch: int | None,
                                     protocol: Protocol) -> TransitionResult:
    """``TransactionMetadata.prepareIncrementProducerEpoch`` then ``completeTransitionTo``: the
    InitProducerId rule on the Empty/CompleteX branch without rotation (its precondition: the
    epoch is not exhausted)."""
    if is_epoch_exhausted(CONCRETE, max_epoch=protocol.max_epoch, epoch=meta.epoch):
        return TransitionResult(int(Errors.UNKNOWN_SERVER_ERROR), meta, "IllegalStateException")
    kip360, shipped = _MODES[protocol.init_producer_id]
    req_pid, req_epoch = (NO_PRODUCER_ID, NO_PRODUCER_EPOCH) if expected_epoch is None else (meta.producer_id,
                                                                                             expected_epoch)
    out = init_producer_id_decision(
        CONCRETE, kip360=kip360, shipped=shipped, max_epoch=protocol.max_epoch, meta_exists=True,
        meta_producer_id=meta.producer_id, meta_prev_producer_id=meta.prev_producer_id, meta_epoch=meta.epoch,
        meta_last_epoch=meta.last_epoch, req_producer_id=req_pid, req_epoch=req_epoch,
        new_producer_id=NO_PRODUCER_ID)
    if out.error != Errors.NONE:
        return TransitionResult(int(out.error), meta)
    return TransitionResult(int(Errors.NONE), meta._replace(
        producer_id=out.producer_id, prev_producer_id=out.prev_producer_id, epoch=out.epoch,
        last_epoch=out.last_epoch, state=int(TxnState.EMPTY), partitions=(), tv=0))


class EndTxnRequest(NamedTuple):
    transactional_id: str | None
    producer_id: int
    epoch: int
    result: int  # TxnResult
    #: 0 (EndTxn <= v4) or 2 (EndTxn v5, KIP-890 part 2)
    client_tv: int = 0
    version: int = 5


def _end_txn_rule(meta: TxnMetadata, req: EndTxnRequest, protocol: Protocol, new_pid: int, *,
                  is_from_client: bool = True):
    if protocol.end_txn == "snapshot-2024-10":
        return end_txn_snapshot(meta, req.producer_id, req.epoch, req.result, client_tv=req.client_tv,
                                is_from_client=is_from_client, max_epoch=protocol.max_epoch, new_producer_id=new_pid)
    if protocol.end_txn == "later-trunk" and req.client_tv >= 2:
        return end_txn_tv2(meta, req.producer_id, req.epoch, req.result, max_epoch=protocol.max_epoch,
                           new_producer_id=new_pid)
    # before KAFKA-9600 a client's request was checked like the coordinator's own (epoch not lower)
    return end_txn(meta, req.producer_id, req.epoch, req.result,
                   is_from_client=is_from_client and protocol.end_txn_exact_epoch, client_tv=min(req.client_tv, 1))


def handle_end_txn(state: CoordinatorState, request: EndTxnRequest, protocol: Protocol, *,
                   append_error: int = Errors.NONE) -> tuple[Response, CoordinatorState]:
    """EndTxn (``TransactionCoordinator.handleEndTransaction``). Success answers the metadata's
    producer id and epoch once PrepareX is written (TV2: the bumped epoch), or at once for a retry of
    a completed transaction; errors answer (-1, -1)."""
    resp, new = _end_txn(state, request, protocol, append_error)
    err = down_convert_fenced(resp.error, "EndTxn", request.version, protocol)
    return (resp if err == resp.error else _error(err)), new


def _end_txn(state: CoordinatorState, request: EndTxnRequest, protocol: Protocol,
             append_error: int) -> tuple[Response, CoordinatorState]:
    if not request.transactional_id:
        return _error(Errors.INVALID_REQUEST), state
    if _lookup_error(state):
        return _error(_lookup_error(state)), state
    meta = state.metadata
    if not meta.exists:
        return _error(Errors.INVALID_PRODUCER_ID_MAPPING), state
    out = _end_txn_rule(meta, request, protocol, state.next_producer_id)
    if out.error != Errors.NONE:
        return _error(out.error), state
    if not out.wrote:
        return Response(int(Errors.NONE), meta.producer_id, meta.epoch), state
    if append_error != Errors.NONE:
        return _error(append_error), state
    used = out.meta.next_producer_id == state.next_producer_id and out.meta.next_producer_id >= 0
    if protocol.eos.tv2_rotation_answer_next_producer_id and protocol.end_txn == "later-trunk" and request.client_tv >= 2:
        # 4.0.0 answers the pair the transaction completes to: the next producer id at epoch 0 after a rotation
        return (Response(int(Errors.NONE), *answer_after_end_txn(out.meta)),
                state._replace(metadata=out.meta, next_producer_id=state.next_producer_id + (1 if used else 0)))
    return (Response(int(Errors.NONE), out.meta.producer_id, out.meta.epoch),
            state._replace(metadata=out.meta, next_producer_id=state.next_producer_id + (1 if used else 0)))


def prepare_abort_or_commit_transition(meta: TxnMetadata, state: int, client_tv: int, next_producer_id: int) -> TxnMetadata:
    """``TransactionMetadata.prepareAbortOrCommit`` + completion (the metadata-level rule)."""
    return prepare_abort_or_commit(meta, state, client_tv, next_producer_id)


def complete_transaction(state: CoordinatorState, protocol: Protocol) -> tuple[bool, CoordinatorState]:
    """Every marker of a PrepareX acknowledged: CompleteCommit/CompleteAbort written (``prepareComplete``;
    TV2 at an exhausted epoch: the producer id rotates). Returns whether anything was written."""
    done, wrote = complete_if_done(state.metadata._replace(partitions=()),
                                   tv2_last_epoch=protocol.tv2_last_epoch)
    return wrote, state._replace(metadata=done) if wrote else state


def handle_add_partitions(state: CoordinatorState, producer_id: int, epoch: int, partitions: tuple[int, ...],
                          protocol: Protocol, *, append_error: int = Errors.NONE,
                          transactional_id: str | None = "t", version: int = 5,
                          api: str = "AddPartitionsToTxn") -> tuple[Response, CoordinatorState, bool]:
    """AddPartitionsToTxn / AddOffsetsToTxn (``api``); the third value says whether an Ongoing record
    was written (its transition is made with TV_0)."""
    resp, new, wrote = _add_partitions(state, producer_id, epoch, partitions, append_error, transactional_id,
                                       pending_first=protocol.eos.add_partitions_pending_first)
    err = down_convert_fenced(resp.error, api, version, protocol)
    return (resp if err == resp.error else _error(err)), new, wrote


def _add_partitions(state: CoordinatorState, producer_id: int, epoch: int, partitions: tuple[int, ...],
                    append_error: int, transactional_id: str | None, *,
                    pending_first: bool = False) -> tuple[Response, CoordinatorState, bool]:
    if not transactional_id:
        return _error(Errors.INVALID_REQUEST), state, False
    if _lookup_error(state):
        return _error(_lookup_error(state)), state, False
    if pending_first and state.metadata.exists and state.metadata.pending_state != NO_PENDING:
        # 4.0.0's pendingTransitionInProgress check, before the producer id and epoch (a PrepareX with nothing
        # pending is still checked for them first: the machines' ``completing`` also counts PrepareX, which they
        # write with its completion to come)
        return _error(Errors.CONCURRENT_TRANSACTIONS), state, False
    out = add_partitions_to_txn(state.metadata if state.metadata.exists else None, producer_id, epoch, partitions)
    if out.error != Errors.NONE:
        return _error(out.error), state, False
    if not out.wrote:
        return Response(int(Errors.NONE)), state, False
    if append_error != Errors.NONE:
        return _error(append_error), state, True
    return Response(int(Errors.NONE)), state._replace(metadata=out.meta._replace(tv=0)), True


def abort_timed_out(state: CoordinatorState, protocol: Protocol, *, tv2_server: bool = False,
                    append_error: int = Errors.NONE) -> tuple[bool, CoordinatorState]:
    """``abortTimedOutTransactions`` for this transactional id (time abstracted: the transaction is
    timed out): fence + PrepareAbort, or nothing when not Ongoing or a transition is pending. A
    failed PrepareAbort write keeps the fenced epoch and sets hasFailedEpochFence."""
    before = _before_kafka_9666(state.metadata, protocol)
    out = _abort_timed_out(before, max_epoch=protocol.max_epoch, tv2=tv2_server or _tv2_fence(before, protocol),
                           tv2_double_bump=protocol.eos.tv2_fence_double_bump)
    if out.wrote and append_error != Errors.NONE:
        return True, state._replace(metadata=_fence_failed(state.metadata, protocol))
    return out.wrote, state._replace(metadata=_as_short(_after_fence_abort(out.meta, before, protocol))) if out.wrote \
        else state


def verify_partitions(state: CoordinatorState, transactional_id: str | None, producer_id: int, epoch: int,
                      partitions: tuple[int, ...], protocol: Protocol | None = None) -> tuple[tuple[int, int], ...]:
    """The verify-only AddPartitionsToTxn of KIP-890 part 1: (partition, error) for each. A partition
    outside the transaction is TRANSACTION_ABORTABLE since KAFKA-16314 (3.8.0), INVALID_TXN_STATE in
    3.6-3.7 (``protocol.verification_abortable``)."""
    if not transactional_id:
        return tuple((p, int(Errors.INVALID_REQUEST)) for p in partitions)
    if _lookup_error(state):
        return tuple((p, _lookup_error(state)) for p in partitions)
    return _verify(state.metadata, producer_id, epoch, partitions,
                   abortable=protocol is None or protocol.verification_abortable)


class FenceResult(NamedTuple):
    metadata: TxnMetadata
    exception: str = ""


def prepare_fence_producer_epoch(meta: TxnMetadata, protocol: Protocol) -> FenceResult:
    """``TransactionMetadata.prepareFenceProducerEpoch`` (pending PrepareEpochFence): epoch + 1 unless
    a fence failed before; at the largest epoch the 2024 snapshot throws, later trunk keeps it;
    a transition already pending throws, and so does a state PrepareEpochFence cannot follow (only Ongoing:
    ``prepareTransitionTo``'s valid-previous-states check, 2.5.0 to trunk)."""
    if meta.pending_state != NO_PENDING:
        return FenceResult(meta, "IllegalStateException")
    if meta.epoch >= protocol.max_epoch and protocol.fence_at_max_epoch == "throw":
        return FenceResult(meta, "IllegalStateException")
    if not is_valid_transition(meta.state, int(TxnState.PREPARE_EPOCH_FENCE)):
        return FenceResult(meta, "IllegalStateException")
    meta = _before_kafka_9666(meta, protocol)
    fenced = fence_producer_epoch(CONCRETE, max_epoch=protocol.max_epoch, epoch=meta.epoch,
                                  has_failed_epoch_fence=meta.has_failed_epoch_fence)
    return FenceResult(meta._replace(epoch=fenced, last_epoch=NO_PRODUCER_EPOCH,
                                     pending_state=int(TxnState.PREPARE_EPOCH_FENCE)))


def prepare_abort_or_commit_checked(meta: TxnMetadata, state: int, client_tv: int, next_producer_id: int,
                                    protocol: Protocol, *, no_partition_added: bool = False) -> FenceResult:
    """``prepareAbortOrCommit`` and its ``completeTransitionTo`` as metadata methods: ``prepareTransitionTo`` throws on
    a pending transition or a target state that does not accept the current one (the version's table: PrepareAbort
    from Empty / CompleteX from KAFKA-14563, 4.0.0, for any transaction version, ``Protocol.prepare_abort_from_ended``).
    From such a state ``no_partition_added`` gives the transaction the update time as its start, which the completion
    accepts only for a TV2 transit (``allowedEmptyAbort``): a TV0/1 one throws there (the model keeps no timestamps; an
    ended transaction's start, -1 for Empty, is taken to differ from the update time, as it does in the tests)."""
    if meta.pending_state != NO_PENDING or \
            not is_valid_transition(meta.state, state, tv2=protocol.prepare_abort_from_ended):
        return FenceResult(meta, "IllegalStateException")
    ended = meta.state in (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)
    if ended and no_partition_added and client_tv < 2:
        return FenceResult(meta, "IllegalStateException")
    return FenceResult(prepare_abort_or_commit(meta, state, client_tv, next_producer_id))


def prepare_producer_id_rotation(meta: TxnMetadata, new_producer_id: int, record_last_epoch: bool) -> FenceResult:
    """``TransactionMetadata.prepareProducerIdRotation`` + completion: Empty, the new producer id at
    epoch 0, lastEpoch := the old epoch if recorded, previousProducerId := the old id; a transaction
    still Ongoing or PrepareX throws."""
    if meta.state in (TxnState.ONGOING, TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT) or \
            meta.pending_state != NO_PENDING:
        return FenceResult(meta, "IllegalStateException")
    return FenceResult(meta._replace(producer_id=new_producer_id, prev_producer_id=meta.producer_id, epoch=0,
                                     last_epoch=meta.epoch if record_last_epoch else NO_PRODUCER_EPOCH,
                                     state=int(TxnState.EMPTY), partitions=(), tv=0))


def prepare_add_partitions(meta: TxnMetadata, partitions: tuple[int, ...]) -> FenceResult:
    """``TransactionMetadata.prepareAddPartitions`` + completion: Ongoing with the partitions added,
    producer id and epochs unchanged; ``prepareTransitionTo`` throws on a pending transition or a
    state Ongoing cannot follow (PrepareX, Dead, PrepareEpochFence)."""
    if meta.pending_state != NO_PENDING or not is_valid_transition(meta.state, int(TxnState.ONGOING)):
        return FenceResult(meta, "IllegalStateException")
    out = add_partitions_to_txn(meta, meta.producer_id, meta.epoch, partitions)
    return FenceResult(out.meta if out.wrote else meta)


def abort_after_fence(state: CoordinatorState, fenced_epoch: int, protocol: Protocol) -> tuple[Response, CoordinatorState]:
    """The ``endTransaction(ABORT, isFromClient = false)`` that InitProducerId sends after
    ``prepareFenceProducerEpoch``, against the metadata its own lookup finds (``state``: another
    request may have changed it since the fence). An error is InitProducerId's answer; otherwise
    PrepareAbort is written at the fenced epoch and InitProducerId answers CONCURRENT_TRANSACTIONS."""
    if _lookup_error(state):
        return _error(_lookup_error(state)), state
    meta = state.metadata
    req = EndTxnRequest("t", meta.producer_id if meta.exists else NO_PRODUCER_ID, fenced_epoch, int(TxnResult.ABORT))
    out = _end_txn_rule(meta, req, protocol, state.next_producer_id, is_from_client=False)
    if out.error != Errors.NONE:
        return _error(out.error), state
    if not out.wrote:
        return _error(Errors.CONCURRENT_TRANSACTIONS), state
    return _error(Errors.CONCURRENT_TRANSACTIONS), state._replace(metadata=out.meta._replace(tv=0))


def may_expire(meta: TxnMetadata) -> bool:
    """``removeExpiredTransactionalIds``' state condition: Empty/CompleteX with no pending transition
    (the time condition, lastUpdate <= now - transactional.id.expiration.ms, is the caller's)."""
    return meta.exists and meta.pending_state == NO_PENDING and meta.state in EXPIRATION_ALLOWED


def expire_transactional_id(state: CoordinatorState, *, append_error: int = Errors.NONE) -> tuple[bool, CoordinatorState]:
    """Expire an idle transactional id: a tombstone is written (first value) and the metadata is
    removed once the append succeeded; on a failed append it stays (pending state reset)."""
    if not may_expire(state.metadata):
        return False, state
    if append_error != Errors.NONE:
        return True, state
    return True, state._replace(metadata=NO_METADATA)


__all__ = [
    "TWO_PC_SINCE",
    "TWO_PC_TIMEOUT_MS",
    "CoordinatorState",
    "EndTxnRequest",
    "InitProducerIdRequest",
    "Response",
    "TransitionResult",
    "TxnResult",
    "abort_timed_out",
    "authorize_init",
    "complete_transaction",
    "expire_transactional_id",
    "handle_add_partitions",
    "handle_end_txn",
    "handle_init_producer_id",
    "may_expire",
    "may_time_out",
    "prepare_abort_or_commit_transition",
    "prepare_increment_producer_epoch",
    "put_transaction_state_if_not_exists",
    "resolved_txn_timeout",
]


class MarkerAnswer(NamedTuple):
    retry: bool  # resend this partition's marker
    abandon: bool  # stop sending markers for the transaction (fenced)
    #: the transaction completed (CompleteCommit/CompleteAbort written) with this answer
    completed: bool


def _marker_entry_dropped(state: CoordinatorState, marker_coordinator_epoch: int | None,
                          coordinator_epoch: int | None) -> bool:
    """What ``TransactionMarkerRequestCompletionHandler`` does for one marker entry before reading its partitions'
    answers (the same for a disconnect and an answer, 2.0.0 .. 4.2.0-rc1): True when it calls
    ``removeMarkersForTxn`` (the lookup answers NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS, or the cache holds the
    transactional id at another coordinator epoch than the entry's); ValueError (IllegalStateException) for any other
    lookup error or no metadata. A coordinator epoch left None is the entry's own."""
    if _lookup_error(state) in (Errors.NOT_COORDINATOR, Errors.COORDINATOR_LOAD_IN_PROGRESS):
        return True
    if _lookup_error(state) or not state.metadata.exists:
        raise ValueError("no transaction state for a pending marker completion")
    return marker_coordinator_epoch is not None and coordinator_epoch is not None \
        and marker_coordinator_epoch != coordinator_epoch


def handle_marker_response(state: CoordinatorState, partition: int, error: int | None,
                           protocol: Protocol, *,
                           completion_error: int = Errors.NONE, marker_coordinator_epoch: int | None = None,
                           coordinator_epoch: int | None = None) -> tuple[MarkerAnswer, CoordinatorState]:
    """``TransactionMarkerRequestCompletionHandler`` for one partition's WriteTxnMarkers answer, then
    ``writeTxnCompletion`` once no partition is left. ``error`` None: the response has no error map for the entry's
    producer id, an IllegalStateException (ValueError) before the lookup. A coordinator that no longer owns (or is
    reloading) the transactional id, or holds it at another coordinator epoch than the entry's
    (``marker_coordinator_epoch``; ``coordinator_epoch``: the cache's), drops the pending completion whatever the
    answer: the new owner resends the markers from its loaded state. An answer Kafka treats as fatal
    (CORRUPT_MESSAGE, MESSAGE_TOO_LARGE, ...) raises ValueError (IllegalStateException in Kafka)."""
    if error is None:
        raise ValueError("the WriteTxnMarkers response has no error map for the marker's producer id")
    if _marker_entry_dropped(state, marker_coordinator_epoch, coordinator_epoch):
        return MarkerAnswer(False, True, False), state
    out = on_marker_response(state.metadata, partition, error,
                             storage_error_retriable=protocol.marker_storage_error_retriable)
    if out.retry or out.abandon:
        return MarkerAnswer(out.retry, out.abandon, False), state
    done, wrote = complete_if_done(out.meta, tv2_last_epoch=protocol.tv2_last_epoch)
    if wrote and completion_outcome(completion_error) != COMPLETION_DONE:
        # the completion is retried later (complete_transaction), or left in PrepareX for the
        # coordinator that loads the transactional id, which resends the markers
        return MarkerAnswer(False, False, False), state._replace(metadata=out.meta)
    return MarkerAnswer(False, False, wrote), state._replace(metadata=done)


def handle_marker_disconnect(state: CoordinatorState, *, marker_coordinator_epoch: int | None = None,
                             coordinator_epoch: int | None = None) -> MarkerAnswer:
    """``TransactionMarkerRequestCompletionHandler`` for a WriteTxnMarkers request whose broker disconnected: the
    entry's markers are re-enqueued for every partition it named (``addTxnMarkersToBrokerQueue``, to the partitions'
    leaders at that time), unless the entry is dropped as for an answer; the metadata is not touched."""
    if _marker_entry_dropped(state, marker_coordinator_epoch, coordinator_epoch):
        return MarkerAnswer(False, True, False)
    return MarkerAnswer(True, False, False)


COMPLETION_DONE, COMPLETION_SKIP, COMPLETION_RETRY = "done", "skip", "retry"


def completion_outcome(error: int) -> str:
    """``TransactionMarkerChannelManager.tryAppendToLog``'s callback for the CompleteCommit/CompleteAbort
    append: NOT_COORDINATOR and COORDINATOR_LOAD_IN_PROGRESS skip it (the loading coordinator completes
    the transaction), COORDINATOR_NOT_AVAILABLE enqueues it for a retry; any other error is an
    IllegalStateException (ValueError)."""
    if error == Errors.NONE:
        return COMPLETION_DONE
    if error in (Errors.NOT_COORDINATOR, Errors.COORDINATOR_LOAD_IN_PROGRESS):
        return COMPLETION_SKIP
    if error == Errors.COORDINATOR_NOT_AVAILABLE:
        return COMPLETION_RETRY
    raise ValueError(f"unexpected error {error} appending the transaction's completion")


def append_error_answer(error: int) -> int:
    """What a failed ``__transaction_state`` append answers (``coordinator.txn_log.append_error_answer``);
    the ``append_error`` of the functions above is this answer (the unit tests mock the append)."""
    return _append_error_answer(error)


def valid_txn_timeout(txn_timeout_ms: int, protocol: Protocol, enable_2pc: bool = False) -> bool:
    """``TransactionStateManager.validateTransactionTimeoutMs``: positive and at most
    ``transaction.max.timeout.ms``; any timeout with 2PC (KIP-939, 4.1.0 .. 4.2.0-rc1 TransactionStateManager.scala
    ``enableTwoPC || (...)``, l.427-428 at 4.1.0; the method has no enableTwoPC before 4.1.0)."""
    if enable_2pc and two_phase_commit(protocol):
        return True
    return 0 < txn_timeout_ms <= protocol.max_txn_timeout_ms


class CacheAtAppend(NamedTuple):
    """What ``appendTransactionToLog``'s callback finds when it looks the transactional id up again
    after the ``__transaction_state`` append: the cached metadata (``NO_METADATA``: gone, e.g. the
    partition emigrated), the coordinator epoch the cache holds it at, whether its partition is
    loading, and the error ``getTransactionState`` answers instead (0: none)."""

    metadata: TxnMetadata
    coordinator_epoch: int
    loading: bool = False
    lookup_error: int = 0


class AppendOutcome(NamedTuple):
    error: int
    #: the cached metadata after the callback
    metadata: TxnMetadata
    #: a Java exception thrown instead of an answer ('' when none)
    exception: str = ""


def append_transaction_to_log(cache: CacheAtAppend, coordinator_epoch: int, transit: TxnMetadata, append_error: int,
                              *, retry_on_error: bool = False) -> AppendOutcome:
    """``TransactionStateManager.appendTransactionToLog``'s callback (2.0 to trunk) for the transition
    to ``transit`` made at ``coordinator_epoch``, the append answering ``append_error``. A successful
    append completes the transition only on the metadata still cached at the same coordinator epoch
    (loading: COORDINATOR_LOAD_IN_PROGRESS; gone or another epoch: NOT_COORDINATOR, the partition
    moved and came back); completing needs the pending state the transition set
    (``completeTransitionTo`` throws otherwise). A failed one answers the mapped error and clears the
    pending state, unless the caller retries on that error (``retryOnError``) or the cache moved on.
    The machines append and complete in one step and leave the coordinator with its partition;
    this is the rule for the conformance steps that interleave."""
    err = append_error_answer(append_error)
    meta = cache.metadata
    same = not cache.loading and not cache.lookup_error and meta.exists and cache.coordinator_epoch == coordinator_epoch
    if err != Errors.NONE:
        if same and not retry_on_error:
            meta = meta._replace(pending_state=NO_PENDING)
        return AppendOutcome(err, meta)
    if cache.loading:
        return AppendOutcome(int(Errors.COORDINATOR_LOAD_IN_PROGRESS), meta)
    if cache.lookup_error:
        return AppendOutcome(cache.lookup_error, meta)
    if not same:
        return AppendOutcome(int(Errors.NOT_COORDINATOR), meta)
    if meta.pending_state == NO_PENDING or meta.pending_state != transit.state:
        return AppendOutcome(int(Errors.NONE), meta, "IllegalStateException")
    return AppendOutcome(int(Errors.NONE), transit._replace(pending_state=NO_PENDING))


def load_and_resume(meta: TxnMetadata, coordinator_epoch: int) -> tuple[TxnMetadata, tuple[int, ...], int]:
    """``loadTransactionsForTxnTopicPartition`` for one transactional id whose last ``__transaction_state`` record is
    ``meta`` (the machines' coordinator failover, ``transactions.failover``): the metadata loaded, and for a
    PrepareCommit / PrepareAbort the partitions whose markers the new coordinator sends again (the callback
    ``sendTxnMarkers``) and their result (TxnResult; -1 when none). The record is written without
    PreviousProducerId (what the loaded metadata keeps of it depends on the version; only the markers are read)."""
    loaded, markers = load_transaction(to_log_record(meta), coordinator_epoch)
    return loaded, tuple(m.partition for m in markers), (markers[0].result if markers else -1)
