"""Running a vector file against the model: each vector's initial state is built in the model's
records, each step's input goes to the interface function for its request or event, and the
answer is compared with ``expected``.

Outcome per vector: **agree** (every compared field matches; fields the model does not keep are
listed as unchecked with the reason), **disagree** (some field differs: both values are kept), or
**not expressible** (the model cannot take the vector's state or input, or no asserted field is
one it answers; the reason names the field or mechanism it abstracts away).
"""

from __future__ import annotations

import json
import os
import re
import traceback
from collections.abc import Callable
from typing import Any, NamedTuple

from ..api.coordinator import FENCED_SINCE
from ..api.protocol import (
    DEFAULT_PROFILE,
    FEATURE_FIELDS,
    FEATURE_SINCE,
    FEATURES,
    PROFILE_TABLE,
    Protocol,
    profile_for,
    profile_for_tag,
)
from ..api.protocol import protocol as make_protocol
from . import (
    steps_api_versions,
    steps_client,
    steps_coordinator,
    steps_group,
    steps_leader,
    steps_log_cleaner,
    steps_marker_channel,
    steps_markers,
    steps_producer_config,
    steps_txn_calls,
    steps_txn_listing,
    steps_txn_log_record,
)
from .compare import Difference, compare
from .values import ANSWERED_BEFORE, NotExpressible, expand
from .vectors import Vector, VectorFile
from .world import World

AGREE, DISAGREE, NOT_EXPRESSIBLE = "agree", "disagree", "not expressible"

Handler = Callable[[World, dict[str, Any]], dict[str, Any]]

#: (pattern on the input's api / event / call, handler); the first match wins
ROUTES: tuple[tuple[str, Handler], ...] = (
    # the producer client reading a coordinator's answer (the coordinator's own routes follow)
    (r"^(InitProducerId|AddPartitionsToTxn|AddOffsetsToTxn|EndTxn|FindCoordinator)Response\b", steps_client.txn_response),
    (r"^TxnOffsetCommitResponse\b", steps_txn_calls.txn_offset_commit_response),
    (r"^InitProducerId\b", steps_coordinator.init_producer_id),
    (r"^EndTxn\b", steps_coordinator.end_txn),
    (r"^(AddPartitionsToTxn|AddOffsetsToTxn)\b", steps_coordinator.add_partitions),
    (r"(^|\.)prepareIncrementProducerEpoch\b", steps_coordinator.prepare_increment_producer_epoch),
    (r"(^|\.)prepareAbortOrCommit\b", steps_coordinator.prepare_abort_or_commit),
    (r"(^|\.)prepareComplete\b", steps_coordinator.prepare_complete),
    (r"(^|\.)prepareAddPartitions\b", steps_coordinator.prepare_add_partitions),
    (r"(^|\.)prepareFenceProducerEpoch\b", steps_coordinator.prepare_fence_producer_epoch),
    (r"(^|\.)prepareProducerIdRotation\b", steps_coordinator.prepare_producer_id_rotation),
    (r"pendingState\s*=\s*None|reset (the )?pending state", steps_coordinator.reset_pending_state),
    (r"^TransactionState\.(fromId|AllStates)\b", steps_coordinator.state_ids),
    (r"^(timer tick|abortTimedOutTransactions)\b", steps_coordinator.timeout_abort),
    (r"^removeExpiredTransactionalIds\b", steps_coordinator.expire_transactional_ids),
    (r"^generateProducerId\b", steps_coordinator.generate_pid),
    (r"(?i)(grants? ProducerIdsBlock|block request fails|^retry backoff elapses)", steps_coordinator.block_event),
    (r"^ProduceBatch\b", steps_leader.produce),
    (r"(?i)^WriteTxnMarkers?\s+(request\s+)?disconnect", steps_markers.marker_disconnect),
    (r"^TransactionMarkerChannelManager\.addTxnMarkersToSend\b", steps_marker_channel.add_txn_markers_to_send),
    (r"^TransactionMarkerChannelManager\.generateRequests\b", steps_marker_channel.generate_requests),
    (r"^TransactionMarkerChannelManager\.onComplete\b", steps_marker_channel.complete_request),
    (r"^TransactionMarkerChannelManager\.removeMarkersForTxnTopicPartition\b", steps_marker_channel.remove_markers),
    (r"^TransactionMarkerChannelManager\.maybeWriteTxnCompletion\b", steps_marker_channel.maybe_write_completion),
    (r"^txnStateManager\.getTransactionState answers\b", steps_marker_channel.cache_answers),
    (r"(?i)(WriteTxnMarkers? ?(response|answer)|TransactionMarkerRequestCompletionHandler|marker_response)",
     steps_markers.marker_response),
    (r"(?i)^retry (the )?(completion|CompleteCommit|CompleteAbort) append", steps_coordinator.retry_completion),
    (r"appendTransactionToLog", steps_coordinator.append_transaction_to_log),
    (r"^validateTransactionTimeoutMs\b", steps_coordinator.validate_txn_timeout),
    (r"^getTransactionState\b", steps_coordinator.get_transaction_state),
    (r"^putTransactionStateIfNotExists\b", steps_coordinator.put_transaction_state),
    (r"^(TransactionStateManager\.)?loadTransactionsForTxnTopicPartition\b", steps_coordinator.load_transactions),
    (r"^(TransactionStateManager\.)?addLoadedTransactionsToCache\b", steps_coordinator.add_loaded_transactions),
    (r"^TransactionLog\.valueToBytes\b", steps_txn_log_record.value_to_bytes),
    (r"^TransactionLog\.readTxnRecordValue\b", steps_txn_log_record.read_txn_record_value),
    (r"^TransactionLog\.readTxnRecordKey\b", steps_txn_log_record.read_txn_record_key),
    (r"^((TransactionStateManager\.)?removeTransactionsForTxnTopicPartition|(TransactionCoordinator\.)?onResignation)\b",
     steps_coordinator.unload_transactions),
    (r"^(TransactionCoordinator\.)?handleDescribeTransactions\b", steps_txn_listing.describe_transactions),
    (r"^((TransactionStateManager\.)?listTransactionStates|(TransactionCoordinator\.)?handleListTransactions)\b",
     steps_txn_listing.list_transactions),
    # the producer's ApiVersions, with the node's versions and features as fields (a free-text call is not read)
    (r"^apiVersions\.(update|remove)$", steps_api_versions.api_versions),
    (r"^new ProducerConfig\b", steps_producer_config.new_producer_config),
    (r"^WriteTxnMarker\s*\(to __consumer_offsets", steps_group.txn_marker),
    (r"^WriteTxnMarkers?\b", steps_leader.marker),
    (r"^advance_time\b", steps_leader.advance_time),
    (r"^removeExpiredProducers\b", steps_leader.remove_expired),
    (r"^(ProducerStateManager\.|stateManager\.)?hasLateTransaction\b", steps_leader.has_late_transaction),
    (r"^(UnifiedLog\.|log\.)?deleteOldSegments\b", steps_leader.delete_old_segments),
    (r"^(ProducerStateManager\.|stateManager\.)?deleteSnapshotsBefore\b", steps_leader.delete_snapshots_before),
    (r"^(UnifiedLog\.|log\.)?flush(UptoOffsetExclusive)?\b", steps_leader.flush),
    (r"(?i)^(damage|corrupt) (the )?(producer )?snapshot( file)?\b", steps_leader.corrupt_snapshot),
    ((r"(?i)^(onLogStartOffsetIncremented|truncateHead|maybeIncrementLogStartOffset|deleteRecords|deleteOldSegments|"
     r"retention|log_start_offset|advance_log_start_offset)"), steps_leader.move_log_start_offset),
    (r"^maybeStartTransactionVerification\b", steps_leader.start_verification),
    (r"^clearVerificationStateEntry\b", steps_leader.clear_verification),
    (r"^takeSnapshot\b", steps_leader.take_snapshot),
    (r"^(UnifiedLog\.)?activeProducersWithLastSequence\b", steps_leader.active_producers),
    (r"^(UnifiedLog\.)?(truncateTo|truncateFullyAndStartAt)\b", steps_leader.log_truncate),
    (r"^close and reopen the log\b", steps_leader.reopen_log),
    (r"^roll\b", steps_leader.roll),
    (r"^(LogCleaner\.|cleaner\.)?(clean|doClean|cleanSegments)\b", steps_log_cleaner.clean),
    (r"^(read the log|LogTestUtils\.keysInLog|offsetsInLog)\b", steps_log_cleaner.read_log),
    (r"^deleteProducerSnapshotFiles\b", steps_leader.delete_snapshot_files),
    (r"^truncateAndReload\b", steps_leader.truncate_and_reload),
    (r"^(updateHighWatermark|onHighWatermarkUpdated)\b", steps_leader.update_high_watermark),
    (r"^setTransactionVerificationEnabled\b", steps_leader.set_verification_enabled),
    (r"^ReplicaManager\.(appendRecords|handleProduceAppend)\b", steps_leader.replica_append),
    (r"^ReplicaManager\.maybeStartTransactionVerificationForPartition\b", steps_leader.replica_start_verification),
    (r"^ReplicaManager\.activeProducerState\b", steps_leader.active_producer_state),
    (r"^ReplicaManager\.fetchMessages\b", steps_leader.fetch_read_committed),
    (r"^verification callback\b", steps_leader.verification_callback),
    (r"^AddPartitionsToTxnManager\.verifyTransaction\b", steps_leader.verify_transaction),
    (r"^AddPartitionsToTxnManager response\b", steps_leader.verification_response),
    (r"^TxnOffsetCommit\b", steps_group.txn_offset_commit),
    (r"^LeaveGroup\b", steps_group.leave_group),
    (r"^(OffsetDelete|deleteOffsets)\b", steps_group.offset_delete),
    (r"^cleanupExpiredOffsets\b", steps_group.cleanup_expired_offsets),
    (r"^cleanupGroupMetadata\b", steps_group.cleanup_group_metadata),
    (r"^(OffsetMetadataManager\.)?deleteAllOffsets\b", steps_group.delete_all_offsets),
    (r"^((OffsetMetadataManager|GroupCoordinator)\.)?onPartitionsDeleted\b", steps_group.partitions_deleted),
    (r"^replayOffsetCommitTombstone\b", steps_group.replay_offset_tombstone),
    (r"^(GroupMetadataManager\.)?loadGroupsAndOffsets\b", steps_group.load_groups_and_offsets),
    (r"^(GroupMetadataManager\.)?removeGroupsAndOffsets\b", steps_group.remove_groups_and_offsets),
    ((r"(?i)^(OffsetFetch ?(response|answer)|offset_fetch_response)|initWithCommittedOffsets|refreshCommittedOffsets|"
     r"fetchCommittedOffsets"), steps_client.consumer_offset_fetch),
    (r"^OffsetFetch\b", steps_group.offset_fetch),
    (r"^(replayEndTransactionMarker|completePendingTxnOffsetCommit)\b", steps_group.txn_marker),
    ((r"^(prepareTxnOffsetCommit|prepareOffsetCommit|onTxnOffsetCommitAppend|onOffsetCommitAppend|"
     r"failPendingTxnOffsetCommit)\b"), steps_group.group_event),
    (r"^incrementSequenceNumber\(", steps_client.increment_sequence),
    ((r"^(requestEpochBumpForPartition|bumpIdempotentEpochAndResetIdIfNeeded|maybeUpdateProducerIdAndEpoch|"
      r"markSequenceUnresolved|handleFailedBatch|maybeResolveSequences|transitionToFatalError|"
      r"transitionToAbortableError)\("),
     steps_client.tm_call),
    (r"^sendOffsetsToTransaction\(", steps_client.send_offsets),
    (r"^(transactionManager|sender|accumulator|result|client)\.\w+\(", steps_txn_calls.call),
    ((r"^(send|resend|produce_response|response|tp\d+ produce|abortTransaction|beginCommit|new transaction|expire|runOnce|"
      r"append tp\d+)\b"),
     steps_client.event),
)


#: input keys that name or annotate the step rather than feed the model
_NOT_INPUT = {"api", "event", "call", "error_code", "note", "notes", "comment", "expected_request"}


#: input fields the model has no counterpart for, and why leaving them out cannot change an answer
IGNORED_INPUT: dict[str, str] = {
    "new_txn_timeout_ms": "the model abstracts time: TransactionMetadata keeps no transaction timeout",
    "update_timestamp": "the model abstracts time: TransactionMetadata keeps no timestamps (a transition's update "
                        "time, even one earlier than the last, changes no id, epoch, state or partition)",
    "group_id": "the model's group coordinator holds the one group the vector is about",
    "coordinator": "OffsetFetch is answered alike by the classic and the new group coordinator (both read pending "
                   "transactional offsets the same way)",
    "producer_epoch": "the group coordinator does not check a TxnOffsetCommit's producer epoch (the transaction "
                      "coordinator does, through AddOffsetsToTxn and KIP-890 verification)",
    "min_bytes": "the model keeps no byte sizes: a fetch waiting in the purgatory for min_bytes answers, at its "
                 "timeout, what a fetch at that time reads (DelayedFetch.onComplete reads the log again)",
    "max_wait_ms": "the fetch's purgatory timeout: the step is the fetch's answer once it has expired",
}


class _Tracked(dict[str, Any]):
    """A step's input that records which keys the handler read: a key nobody read is reported, so
    a field the harness silently ignores cannot pass for an agreement unnoticed."""

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data)
        self.read: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self.read.add(key)
        return super().__contains__(key)

    def unread(self) -> list[str]:
        return sorted(k for k in self if k not in self.read and k not in _NOT_INPUT)


def route(inp: dict[str, Any]) -> Handler:
    kind = str(inp.get("api") or inp.get("event") or inp.get("call") or "").strip()
    for pattern, handler in ROUTES:
        if re.search(pattern, kind):
            return handler
    raise NotExpressible(f"input {kind!r}: no request or event of the model's interface corresponds to it")


class StepReport(NamedTuple):
    step: int
    compared: int
    differences: tuple[Difference, ...]
    unchecked: dict[str, str]


class VectorReport(NamedTuple):
    id: str
    mechanism: str
    variant: str
    outcome: str
    #: why not expressible ('' otherwise)
    reason: str
    steps: tuple[StepReport, ...]
    #: which instantiation of a '<A|B>' placeholder ('' when there is none)
    case: str = ""

    @property
    def differences(self) -> tuple[tuple[int, Difference], ...]:
        return tuple((s.step, d) for s in self.steps for d in s.differences)


def _int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default  # an unreadable field is the step reader's to report, not a feature the vector needs


def needed_features(vector: Vector, initial: dict[str, Any]) -> list[tuple[str, str]]:
    """(feature of ``FEATURES``, where the vector needs it), read from the vector's state and inputs
    (never from what it expects): a profile lacking one of them is a version the vector does not
    apply to."""
    found: list[tuple[str, str]] = []
    meta = initial.get("txn_metadata")
    if isinstance(meta, dict) and _int(meta.get("client_transaction_version", 0), 0) >= 2:
        found.append(("transaction-version-2", ("initial_state.txn_metadata.client_transaction_version "
                      f"{meta['client_transaction_version']}")))
    for key in ("verification_guard", "verification_state", "transaction_verification_enabled"):
        if initial.get(key):
            found.append(("kip-890-verification", f"initial_state.{key}"))
    if isinstance(meta, dict) and meta.get("has_failed_epoch_fence") is True:
        found.append(("kafka-9666", "initial_state.txn_metadata.has_failed_epoch_fence"))
    if initial.get("transaction.two.phase.commit.enable"):
        found.append(("kip-939", "initial_state.transaction.two.phase.commit.enable"))
    for key in ("offline_partitions", "max_message_bytes"):
        if initial.get(key):
            found.append(("kafka-13099", f"initial_state.{key}"))
    rolled = False
    for i, step in enumerate(vector.steps):
        inp, at = step.input, f"step {i + 1}: "
        kind = str(inp.get("api") or inp.get("event") or inp.get("call") or "")
        rolled = rolled or bool(re.match(r"roll\b", kind))
        if re.match(r"(UnifiedLog\.|log\.)?deleteOldSegments\b", kind) and (rolled or inp.get("retention_breached")):
            # segments the step can delete: their snapshots go with them only from KAFKA-9393
            found.append(("kafka-9393", f"{at}deleteOldSegments of a log with segments to delete"))
        tv = inp.get("client_transaction_version", 0)
        if _int(tv, 0) >= 2:
            found.append(("transaction-version-2", f"{at}input.client_transaction_version {tv}"))
        if re.match(r"WriteTxnMarkers?\b", kind) and _int(inp.get("transaction_version", 0), 0) >= 2:
            found.append(("transaction-version-2", f"{at}{kind} at transaction_version {inp['transaction_version']}"))
        if str(inp.get("transaction_supported_operation", "")) == "ADD_PARTITION":
            found.append(("transaction-version-2", f"{at}transaction_supported_operation ADD_PARTITION"))
        if re.match(r"InitProducerId\b", kind) and (_int(inp.get("producer_id", -1), -1) >= 0
                                                   or _int(inp.get("producer_epoch", -1), -1) >= 0):
            found.append(("kip-360", (f"{at}InitProducerId with producer id {inp.get('producer_id')} and epoch "
                          f"{inp.get('producer_epoch')}")))
        found.extend(_two_pc_features(inp, kind, at))
        found.extend(_listing_features(inp, kind, at))
        if re.search(r"(^|\.)prepareIncrementProducerEpoch\b", kind) and inp.get("expected_producer_epoch") is not None:
            found.append(("kip-360", f"{at}prepareIncrementProducerEpoch with an expected epoch"))
        if re.match(r"TxnOffsetCommit\b", kind) and (inp.get("member_id") not in (None, "")
                                                    or _int(inp.get("generation_id", -1), -1) != -1
                                                    or inp.get("group_instance_id") is not None):
            found.append(("kip-447", (f"{at}TxnOffsetCommit with member id {inp.get('member_id')!r} and "
                          f"generation {inp.get('generation_id')}")))
        if re.match(r"OffsetFetch\b", kind) and inp.get("require_stable"):
            # OffsetFetch v7's require_stable flag came with KIP-447 (2.5.0)
            found.append(("kip-447", f"{at}OffsetFetch with require_stable"))
        if re.match(r"LeaveGroup\b", kind) and isinstance(inp.get("members"), list) and (
                len(inp["members"]) > 1 or any(isinstance(m, dict) and m.get("group_instance_id") is not None
                                               for m in inp["members"])):
            found.append(("kafka-8221", f"{at}LeaveGroup of several members or by group.instance.id"))
        if re.match(r"TxnOffsetCommit\b", kind) and inp.get("verification_error") is not None:
            found.append(("kafka-15449", f"{at}TxnOffsetCommit verification_error {inp.get('verification_error')}"))
        version = inp.get("request_version")
        for api, since in FENCED_SINCE.items():
            if re.match(rf"{api}\b", kind) and version is not None and _int(version, 0) >= since:
                found.append(("kip-588", f"{at}{api} v{version}"))
        # a ReplicaManager append without a transactional id is never verified (idempotent data, or a coordinator's)
        verified_append = re.match(r"ReplicaManager\.(appendRecords|handleProduceAppend)\b", kind) \
            and inp.get("transactional_id") is not None
        if verified_append or re.match(r"(maybeStartTransactionVerification|AddPartitionsToTxnManager)\b", kind):
            found.append(("kip-890-verification", f"{at}{kind}"))
            # the coordinator's answers a broker-side step reads (TRANSACTION_ABORTABLE came in 3.8)
            answers = inp.get("partition_errors")
            if isinstance(answers, dict) and "TRANSACTION_ABORTABLE" in map(str, answers.values()):
                found.append(("transaction-abortable", f"{at}the coordinator's answer TRANSACTION_ABORTABLE"))
        # the verify-only AddPartitionsToTxn (v4) is sent only by a verifying leader (3.6+; a 3.5 coordinator
        # answers it, but no 3.5 broker sends it)
        if re.match(r"AddPartitionsToTxn\b", kind) and (inp.get("verify_only") or inp.get("verifyOnly")):
            found.append(("kip-890-verification", f"{at}{kind} verify_only"))
        if re.match(r"AddPartitionsToTxn\b", kind) and "transactions" in inp:
            found.append(("kip-890-verification", f"{at}{kind} v4 with several transactions"))
        if re.match(r"ReplicaManager\.maybeStartTransactionVerificationForPartition\b", kind):
            found.append(("kafka-15449", f"{at}{kind} (ReplicaManager's verification for one partition)"))
        if re.match(r"ReplicaManager\.activeProducerState\b", kind):
            found.append(("kip-664", f"{at}{kind} (DescribeProducers, KIP-664: 2.8.0)"))
        if re.match(r"transactionManager\.setPoisonStateOnInvalidTransition\(\s*true", kind):
            found.append(("kafka-14831", f"{at}{kind}"))
        found.extend(steps_txn_log_record.features(inp, kind, at))
        found.extend(_client_features(inp, kind, at))
        found.extend(_close_and_late_features(inp, kind, at))
        if re.match(r"sender\.sendTxnOffsetCommit\(", kind) and inp.get("group_metadata"):
            found.append(("kip-447", f"{at}{kind} with the consumer's group metadata"))
    producer = initial.get("producer")
    if isinstance(producer, dict) and producer.get("idempotent") is False and not producer.get("transactional"):
        # a producer without a TransactionManager: the Sender's own retry rule, not the KIP-360 client's
        found = [f for f in found if f[0] != "kip-360"]
        for i, step in enumerate(vector.steps):
            kind = str(step.input.get("event") or "")
            if re.search(r"(^|;\s*)expire\b", kind):
                found.append(("kip-91", f"step {i + 1}: a batch expired in flight (delivery.timeout.ms)"))
                break
        for i, step in enumerate(vector.steps):
            named = [k for k in ("error_message", "record_errors") if step.input.get(k) is not None]
            if named or "INVALID_RECORD" in (str(step.input.get("event") or ""), str(step.input.get("error") or "")):
                found.append(("kip-467", f"step {i + 1}: a produce answer's {', '.join(named) or 'INVALID_RECORD'}"))
                break
    elif isinstance(producer, dict) and not producer.get("transactional"):
        for i, step in enumerate(vector.steps):
            kind = str(step.input.get("call") or "")
            if re.match(r"sender\.(initiateClose|forceClose)\(", kind):
                found.append(("kafka-8061", f"step {i + 1}: {kind} of an idempotent producer"))
                break
    return found


def _close_and_late_features(inp: dict[str, Any], kind: str, at: str) -> list[tuple[str, str]]:
    """The closing Sender's loops (KAFKA-6635, 2.3.0), their forced close on a failing abort (KAFKA-16217, 3.7.1),
    OffsetDelete (KIP-496, 2.4.0), ProducerStateManager.hasLateTransaction (KAFKA-13221, 3.2.0) and a
    __transaction_state load skipping an unknown record type (KAFKA-14869, 3.4.1)."""
    found: list[tuple[str, str]] = []
    if re.match(r"sender\.run\(\s*\)", kind):
        found.append(("kafka-6635", f"{at}{kind} after the close"))
        if inp.get("begin_abort_throws"):
            found.append(("kafka-16217", f"{at}{kind} with beginAbort throwing {inp.get('begin_abort_throws')}"))
    if re.match(r"(OffsetDelete|deleteOffsets)\b", kind):
        found.append(("kip-496", f"{at}{kind}"))
    log = inp.get("transaction_log")
    if re.match(r"(TransactionStateManager\.)?loadTransactionsForTxnTopicPartition\b", kind) and isinstance(log, list) \
            and any(isinstance(r, dict) and "unknown_key_version" in r for r in log):
        found.append(("kafka-14869", f"{at}{kind} over a record of an unknown key version"))
    if re.match(r"(ProducerStateManager\.|stateManager\.)?hasLateTransaction\b", kind):
        found.append(("kafka-13221", f"{at}{kind}"))
    return found


def _two_pc_features(inp: dict[str, Any], kind: str, at: str) -> list[tuple[str, str]]:
    """KIP-939's request fields (InitProducerId v6), validateTransactionTimeoutMs' enableTwoPC and the TWO_PHASE_COMMIT
    ACL operation exist from 4.1.0; an older version has none of them (a flag at false is the older request)."""
    found: list[tuple[str, str]] = []
    if re.match(r"(InitProducerId|validateTransactionTimeoutMs)\b", kind):
        for key in ("enable_2pc", "keep_prepared_txn"):
            if inp.get(key) is True:
                found.append(("kip-939", f"{at}{kind} {key}"))
    if re.match(r"InitProducerId\b", kind) and _int(inp.get("request_version", 0), 0) >= 6:
        found.append(("kip-939", f"{at}InitProducerId v{inp.get('request_version')}"))
    acl = inp.get("authorizer")
    if isinstance(acl, dict) and "TWO_PHASE_COMMIT" in acl:
        found.append(("kip-939", f"{at}the TWO_PHASE_COMMIT ACL operation"))
    return found


def _listing_features(inp: dict[str, Any], kind: str, at: str) -> list[tuple[str, str]]:
    """DescribeTransactions and ListTransactions exist from 3.0.0 (KIP-664), ListTransactions' duration filter from
    3.8.0 (KIP-994, v1) and its transactional-id pattern from 4.1.0 (KIP-1152, v2); an older request has no such field
    (-1 and null are the older request). The producer's view of its brokers' ApiVersions: the coordinator's
    InitProducerId version is read by the KIP-360 client (2.5.0), the finalized transaction.version by the client of
    transaction version 2 (the 2024-10 snapshot)."""
    found: list[tuple[str, str]] = []
    if re.search(r"(handleDescribeTransactions|listTransactionStates|handleListTransactions)\b", kind):
        found.append(("kip-664", f"{at}{kind}"))
    if re.search(r"(listTransactionStates|handleListTransactions)\b", kind):
        if _int(inp.get("duration_ms", -1), -1) >= 0:
            found.append(("kip-994", f"{at}{kind} duration_ms {inp.get('duration_ms')}"))
        if inp.get("transactional_id_pattern"):
            found.append(("kip-1152", f"{at}{kind} transactional_id_pattern {inp.get('transactional_id_pattern')!r}"))
    if re.match(r"apiVersions\.(update|remove)$", kind) or re.match(
            r"transactionManager\.(handleCoordinatorReady|canBumpEpoch)\(", kind):
        found.append(("kip-360", f"{at}{kind} (the KIP-360 client's coordinatorSupportsBumpingEpoch)"))
    features = inp.get("finalized_features")
    if re.match(r"apiVersions\.update$", kind) and isinstance(features, dict) and "transaction.version" in features:
        found.append(("transaction-version-2", (f"{at}{kind} with a finalized transaction.version (the client's "
                                                "isTransactionV2Enabled)")))
    if re.match(r"transactionManager\.(maybeUpdateTransactionV2Enabled|isTransactionV2Enabled|"
                r"needToTriggerEpochBumpFromClient)\(", kind):
        found.append(("transaction-version-2", f"{at}{kind}"))
    return found


#: the producer client's steps whose answer is the KIP-360 client's (``model/producer/partition_sequences.py``,
#: ``txn_responses.py``: 2.5+); sequence arithmetic and TxnOffsetCommit's table are older
_KIP360_CLIENT = (r"^((InitProducerId|AddPartitionsToTxn|AddOffsetsToTxn|EndTxn|FindCoordinator)Response|send|resend|"
                  r"produce_response|response|tp\d+ produce|abortTransaction|beginCommit|new transaction|expire|runOnce|"
                  r"requestEpochBumpForPartition|bumpIdempotentEpochAndResetIdIfNeeded|maybeUpdateProducerIdAndEpoch|"
                  r"markSequenceUnresolved|handleFailedBatch|maybeResolveSequences|transitionToFatalError|"
                  r"transitionToAbortableError|append tp\d+)\b")


def _client_features(inp: dict[str, Any], kind: str, at: str) -> list[tuple[str, str]]:
    """What a producer-client step needs: the KIP-360 client, and the error codes it reads
    (PRODUCER_FENCED came with KIP-588, TRANSACTION_ABORTABLE in 3.8)."""
    if not (re.match(_KIP360_CLIENT, kind) or re.match(r"^sendOffsetsToTransaction\(", kind)):
        return []
    found: list[tuple[str, str]] = []
    if re.match(_KIP360_CLIENT, kind):
        what = kind.split("(")[0].split(";")[0].strip()
        found.append(("kip-360", f"{at}the producer client's {what!r} (the interface's client is the KIP-360 client)"))
    answers = [kind, str(inp.get("error", "")), str(inp.get("AddOffsetsToTxn", ""))]
    committed = inp.get("TxnOffsetCommit_response")
    if isinstance(committed, dict):
        answers.extend(str(e) for e in committed.values())
    # the group's fencing answers a transactional commit only from KIP-447's broker (2.4.1 doCommitOffsets skips the
    # membership checks when the commit has a producer id)
    for error, feature in (("PRODUCER_FENCED", "kip-588"), ("TRANSACTION_ABORTABLE", "transaction-abortable"),
                           ("UNKNOWN_MEMBER_ID", "kip-447"), ("ILLEGAL_GENERATION", "kip-447"),
                           ("FENCED_INSTANCE_ID", "kip-447")):
        if any(re.search(rf"\b{error}\b", a) for a in answers):
            found.append((feature, f"{at}the answer {error}"))
    return found


def _lacking(vector: Vector, protocol: Protocol, initial: dict[str, Any]) -> str:
    """Why the vector does not apply to the profile's Kafka version ('' when it does)."""
    for feature, where in needed_features(vector, initial):
        if feature in protocol.lacks:
            since, profile = FEATURE_SINCE[feature].first, PROFILE_TABLE.get(protocol.name)
            if profile is not None and profile.first < since <= profile.last:
                # the profile stands for versions on both sides of the feature's release
                return (f"not expressible under {protocol.name}: {where} needs {FEATURES[feature]}, which this "
                        f"profile's versions before {'.'.join(map(str, since))} lack")
            return f"not expressible under {protocol.name}: {where} needs {FEATURES[feature]}, which this version lacks"
    return ""


def _without_lacking_fields(expected: dict[str, Any], protocol: Protocol,
                            prefix: str = "") -> tuple[dict[str, Any], dict[str, str]]:
    """``expected`` without the fields the profile's version does not have, and why each is left out."""
    missing = {f: feature for feature in protocol.lacks for f in FEATURE_FIELDS.get(feature, ())}
    kept: dict[str, Any] = {}
    left_out: dict[str, str] = {}
    for key, exp in expected.items():
        if key in missing:
            left_out[f"{prefix}{key}"] = (f"{protocol.name} lacks {FEATURES[missing[key]]}: the field does not "
                                          "exist in that version")
        elif isinstance(exp, dict):
            kept[key], sub = _without_lacking_fields(exp, protocol, f"{prefix}{key}.")
            left_out.update(sub)
        else:
            kept[key] = exp
    return kept, left_out


def _run_case(vector: Vector, protocol: Protocol, initial: dict[str, Any], case: str) -> VectorReport:
    steps: list[StepReport] = []

    def report(outcome: str, reason: str = "") -> VectorReport:
        return VectorReport(vector.id, vector.mechanism, protocol.name, outcome, reason, tuple(steps), case)

    lacking = _lacking(vector, protocol, initial)
    if lacking:
        return report(NOT_EXPRESSIBLE, lacking)

    try:
        world = World(protocol, {"initial_state": initial, "steps": [s._asdict() for s in vector.steps]}, initial)
    except NotExpressible as exc:
        return report(NOT_EXPRESSIBLE, str(exc))
    except (AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:
        return report(NOT_EXPRESSIBLE, f"initial_state not readable as the model's state: {type(exc).__name__}: {exc}")
    world.source_file = str(vector.source.get("file", ""))
    world.component = vector.component
    world.unified_log = not re.match(r"(ProducerAppendInfo|ProducerStateManager)\b", vector.component)
    for i, step in enumerate(vector.steps):
        expected = dict(step.expected)
        if isinstance(step.input.get("expected_request"), dict):
            expected["request"] = step.input["expected_request"]
        tracked = _Tracked(step.input)
        try:
            if world.groups and tracked.get("group_id") is not None:
                # a world of several groups: the step acts on the one it names
                world.use_group(str(tracked["group_id"]))
            observed = route(tracked)(world, tracked)
        except NotExpressible as exc:
            if any(s.differences for s in steps):
                break
            return report(NOT_EXPRESSIBLE, f"step {i + 1}: {exc}")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError, AssertionError, StopIteration) as exc:
            if _raised_in_harness(exc):
                # the step's input lacks a field the harness needs, or has the wrong type
                return report(NOT_EXPRESSIBLE, f"step {i + 1}: input not readable: {type(exc).__name__}: {exc}")
            # a rule refused an input Kafka answers: that is a disagreement, not a harness crash
            steps.append(StepReport(i + 1, 1, (Difference("(the model's rule raised)", expected,
                                                           f"{type(exc).__name__}: {exc}"),), {}))
            break
        # a request refused in front of the coordinators (KafkaApis' checks) was answered without its other fields
        refused_by = str(observed.pop(ANSWERED_BEFORE, "")) if isinstance(observed, dict) else ""
        expected, left_out = _without_lacking_fields(expected, protocol)
        c = compare(expected, observed, symbols=world.symbols)
        unchecked = {**c.unchecked, **left_out}
        for key in tracked.unread():
            unchecked[f"input.{key}"] = (
                f"{refused_by} answered the request before anything read this field" if refused_by else
                IGNORED_INPUT.get(key, "an input field the harness does not read: the model's "
                                       "function for this input was run without it"))
        steps.append(StepReport(i + 1, c.compared, c.differences, unchecked))
    if any(s.differences for s in steps):
        return report(DISAGREE)
    if not any(s.compared for s in steps):
        fields = sorted({f for s in steps for f in s.unchecked if not f.startswith("input.")})
        why = "; ".join(sorted({s.unchecked[f] for s in steps for f in s.unchecked if not f.startswith("input.")}))
        return report(NOT_EXPRESSIBLE, f"no asserted field is one the model answers ({', '.join(fields)}): {why}")
    return report(AGREE)


def _raised_in_harness(exc: BaseException) -> bool:
    """Whether the innermost frame of ``exc`` is the harness's own code (reading the vector), not a rule."""
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and f"{os.sep}conformance{os.sep}" in frames[-1].filename


def run_vector(vector: Vector, protocol: Protocol) -> VectorReport:
    """One report per vector; a vector with '<A|B>' placeholders runs once per choice and agrees
    only if every choice does (the first disagreeing or inexpressible choice is reported)."""
    cases = expand(vector.initial_state)
    reports = [_run_case(vector, protocol, init, label) for label, init in cases]
    for outcome in (DISAGREE, NOT_EXPRESSIBLE):
        for r in reports:
            if r.outcome == outcome:
                return r
    merged = tuple(s for r in reports for s in r.steps)
    return reports[0]._replace(steps=merged, case=", ".join(r.case for r in reports if r.case))


class RunReport(NamedTuple):
    path: str
    variant: str
    #: how the variant was chosen: 'commit <sha>', 'commit date <d>', '--variant', 'default'
    chosen_by: str
    vectors: tuple[VectorReport, ...]

    def counts(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for v in self.vectors:
            row = out.setdefault(v.mechanism, {AGREE: 0, DISAGREE: 0, NOT_EXPRESSIBLE: 0})
            row[v.outcome] += 1
        return out


def choose_variant(vf: VectorFile, variant: str | None) -> tuple[str, str]:
    if variant:
        return variant, "--variant"
    found = profile_for(vf.commit, vf.commit_date)
    if found is not None:
        how = f"commit {vf.commit[:12]}" if vf.commit and found == profile_for(vf.commit, None) else \
            f"commit date {vf.commit_date}"
        return found, how
    return DEFAULT_PROFILE, "default (the vector file names no known commit or date)"


def vector_variant(vector: Vector, file_variant: str, chosen_by: str) -> str:
    """The profile a vector is judged under: ``--variant`` for every vector; otherwise a vector whose
    ``source.tag`` is a release tag a profile stands for ('4.1.0', '4.2.0-rc1') under that profile (a file read at
    one tag may hold tests read at later ones), any other under the file's."""
    tag = vector.source.get("tag")
    if chosen_by == "--variant" or not isinstance(tag, str):
        return file_variant
    return profile_for_tag(tag) or file_variant


def run_file(vf: VectorFile, variant: str | None = None) -> RunReport:
    name, how = choose_variant(vf, variant)
    names = [vector_variant(v, name, how) for v in vf.vectors]
    protocols = {n: make_protocol(n) for n in dict.fromkeys([name, *names])}
    by_tag: dict[str, int] = {}
    for n in names:
        if n != name:
            by_tag[n] = by_tag.get(n, 0) + 1
    if by_tag:
        how += "; by source.tag: " + ", ".join(f"{n} {k}" for n, k in by_tag.items())
    return RunReport(vf.path, name, how, tuple(run_vector(v, protocols[n]) for v, n in zip(vf.vectors, names, strict=True)))


def to_json(run: RunReport) -> dict[str, Any]:
    return {
        "format": "eoscheck-conform", "version": 1, "file": run.path, "variant": run.variant,
        "variant_chosen_by": run.chosen_by, "ok": not any(v.outcome == DISAGREE for v in run.vectors),
        "mechanisms": run.counts(),
        "totals": {k: sum(1 for v in run.vectors if v.outcome == k) for k in (AGREE, DISAGREE, NOT_EXPRESSIBLE)},
        "vectors": [{"id": v.id, "mechanism": v.mechanism, "variant": v.variant, "outcome": v.outcome,
                     "reason": v.reason or None,
                     "case": v.case or None,
                     "differences": [{"step": i, "field": d.field, "expected": d.expected, "model": d.model}
                                     for i, d in v.differences],
                     "unchecked": sorted({f"step {s.step}: {f}" for s in v.steps for f in s.unchecked}),
                     "unchecked_reasons": {f"step {s.step}: {f}": r for s in v.steps for f, r in s.unchecked.items()}}
                    for v in run.vectors],
    }


def dumps(run: RunReport) -> str:
    return json.dumps(to_json(run), indent=1, default=str)
