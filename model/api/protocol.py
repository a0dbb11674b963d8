"""``Protocol``: the switch values of one Kafka version, for every rule the interface reaches.

A profile is built from the model's own variants (``model.variants``, the pipeline's variants),
so the conformance harness checks the rules under the same switch values the specs use.
"""

from __future__ import annotations

from typing import NamedTuple

from ..group.classic_offset_expiry import ClassicRetentionRule
from ..group.leave_group import LeaveGroupRule
from ..partition.produce_request import ProducePidCheck
from ..producer.feature_versions import FEATURE_CHECK_SINCE, FeatureCheck
from ..producer.idempotence_config import IdempotenceConfigRule
from ..producer.no_idempotence import ProduceExceptionDetail
from ..producer.txn_calls import TABLE_SINCE as CLIENT_TABLE_SINCE
from ..producer.txn_calls import ClientTransitions
from ..producer.txn_offset_commit_version import GroupMetadataCheck
from ..protocol import VARIANTS as EOS_VARIANTS
from ..protocol import Protocol as EosProtocol
from ..protocol import TransactionVersion
from ..since import Since, Version
from ..variants import IDEMPOTENT_SWITCHES, IDEMPOTENT_VARIANTS, INIT_VARIANTS


class Protocol(NamedTuple):
    name: str
    #: the coordinator's InitProducerId (``model.variants.INIT_PRODUCER_ID_MODES``)
    init_producer_id: str
    #: EndTxn validation: "tv1" (before KIP-890 part 2), "snapshot-2024-10" (TV1/TV2 chosen by the
    #: metadata's version), "later-trunk" (chosen by the request's version)
    end_txn: str
    #: what lastProducerEpoch becomes when a TV2 transaction completes ("current": snapshot, "keep")
    tv2_last_epoch: str
    #: a PRODUCER_FENCED answer to InitProducerId v < 4 is sent as INVALID_PRODUCER_EPOCH (2.7+, KAFKA-9911)
    down_convert_fenced: bool
    #: transaction.max.timeout.ms
    max_txn_timeout_ms: int
    broker_unknown_producer: str
    broker_batch_cache: int
    broker_duplicate_sequence_error: bool
    #: KAFKA-7190 (2.4.0+, 1a5971ebdc7): moving the log start offset keeps the producer state
    broker_retain_producer_state: bool
    client_version: str
    client_epoch_bump: str
    #: TxnOffsetCommit validation (``model.group.txn_offset_commit.CHECKS``)
    txn_offset_commit: str
    #: prepareFenceProducerEpoch at the largest epoch: "throw" (IllegalStateException, to 4.x's Java
    #: TransactionMetadata) or "keep" (no bump, an error logged: KAFKA-20090, PR 21469, Feb 2026)
    fence_at_max_epoch: str = "throw"
    max_epoch: int = 32767
    max_seq: int = 2**31 - 1
    #: features of ``FEATURES`` this version does not have: a vector that needs one is not expressible
    #: under the profile (it does not apply to that version) rather than a disagreement
    lacks: frozenset[str] = frozenset()
    #: the coordinator fences with PRODUCER_FENCED (error 90, KIP-588, 2.7+); before, with INVALID_PRODUCER_EPOCH
    #: (2.6.0's TransactionCoordinator; Errors has no code 90 before KAFKA-9911 b937ec75677, 2.7.0)
    producer_fenced: bool = True
    #: a client's EndTxn needs the metadata's exact epoch (KAFKA-9600 88bc0fdf822, 2.6.0); before, only a lower
    #: epoch was refused (2.5.1's endTransaction: ``producerEpoch < txnMetadata.producerEpoch``, no isFromClient)
    end_txn_exact_epoch: bool = True
    #: a fence whose PrepareAbort write failed leaves hasFailedEpochFence, so the next fence does not bump
    #: again (KAFKA-9666, 2.6.0 via 1f3f227b59a); before, every fence bumped (2.5.1's prepareFenceProducerEpoch)
    failed_fence_keeps_epoch: bool = True
    #: a fence-abort sets lastProducerEpoch to the epoch before the fence (2.5.x: ``txnMetadata.lastProducerEpoch
    #: = txnMetadata.producerEpoch`` in endTransaction), so the fenced producer's InitProducerId(pid, old epoch)
    #: is taken for a retry and gets the fenced epoch back; 2.6.0+ set it to -1 (fidelity audit C2)
    fence_keeps_last_epoch: bool = False
    #: a written COMMIT/ABORT marker sets its producer's lastTimestamp (KAFKA-9144: 2.4.1 via b13a7ff7077, 2.5.0);
    #: before, lastTimestamp stayed the last cached data batch's (NO_TIMESTAMP once a new epoch cleared the cache)
    marker_sets_producer_timestamp: bool = True
    #: the coordinator answers a verify-only AddPartitionsToTxn for a partition outside the transaction with
    #: TRANSACTION_ABORTABLE (KAFKA-16314, 3.8.0); before, INVALID_TXN_STATE
    verification_abortable: bool = True
    #: the transactional client retries any retriable TxnOffsetCommit partition error (PR 15266, 33a4709490f,
    #: first tag 3.8.0); before, only the coordinator errors, UNKNOWN_TOPIC_OR_PARTITION and
    #: COORDINATOR_LOAD_IN_PROGRESS, and another (NETWORK_EXCEPTION, ...) was an unexpected, fatal error
    txn_offset_commit_any_retriable: bool = True
    #: the errors TxnOffsetCommitHandler names and the exceptions it raises (``txn_offsets_client.HANDLERS``):
    #: "2.0.0", "2.0.1" (KAFKA-7296: COORDINATOR_LOAD_IN_PROGRESS retried), "2.5" (KIP-447's group fencing is
    #: abortable), "2.7" (INVALID_PRODUCER_EPOCH raises InvalidProducerEpochException, KIP-588), "3.6" (it and
    #: PRODUCER_FENCED raise ProducerFencedException, KAFKA-14278)
    txn_offset_commit_handler: str = "3.6"
    #: the kafka.eos switch set (``model.protocol``) of this profile's version: the rules both the conformance
    #: interface and kafka.eos model are decided there once, under kafka.eos's name, and read from here
    #: (``eos.tv2_marker_keeps_verification``, ...); a profile takes the named kafka.eos variant of its versions
    #: (``EOS_VARIANT``)
    eos: EosProtocol = EOS_VARIANTS["kafka-3.8-3.9"].protocol
    #: the producer client's table of valid state transitions (``model.producer.txn_calls.TRANSITIONS``; each
    #: version's first release and change in ``txn_calls.TABLE_SINCE``): "2.0" (2.0.0-2.4.1), "2.5" (KIP-360,
    #: 2.5.0-3.5.2), "3.6" (KAFKA-13668, 3.6.0-3.9.x), "4.0" (KAFKA-18227, 4.0.x), "4.1" (KIP-939, 4.1.0 on)
    client_transitions: ClientTransitions = "3.6"
    #: KAFKA-19272 (c7e4ff01cd, first tag 4.2.0-rc1): an InitProducerId answer to a KeepPreparedTxn request that names
    #: an ongoing transaction moves the client to PREPARED_TRANSACTION (``txn_calls.init_producer_id_answered``);
    #: before, READY. No released client sends KeepPreparedTxn (KAFKA-19414), so no vector reaches it
    client_init_keeps_prepared: bool = False
    #: KAFKA-13412 (df2236d73bc, first tags 3.1.1 via cde0046d15a and 3.2.0): a timed-out initTransactions /
    #: commitTransaction / abortTransaction is kept until awaited, its retry gets the same result, any other call
    #: throws IllegalStateException meanwhile, and an invalid call throws IllegalStateException (KafkaException
    #: before); ``model.producer.txn_calls``
    client_retry_safe_calls: bool = True
    #: what the Sender fails a batch with when an abort (with no error) drops it undrained: TransactionAbortedException
    #: (KAFKA-10186, 40a23cc0c2e, first tag 2.7.0); before, a KafkaException ("Failing batch since transaction was
    #: aborted", 2.6.0 Sender.maybeSendAndPollTransactionalRequest)
    client_abort_exception: str = "TransactionAbortedException"
    #: InitProducerId answered TRANSACTIONAL_ID_AUTHORIZATION_FAILED or CLUSTER_AUTHORIZATION_FAILED is an abortable
    #: error, and the Sender's next loop resets the producer to UNINITIALIZED (failing the kept result and the batches
    #: with the exception) so that initTransactions, or the idempotent producer's own InitProducerId, can be retried:
    #: KAFKA-13668 (ea81e99e598, PR 12149, first tag 3.6.0; 3.5.2 fatalError); ``txn_responses.on_txn_response``'s
    #: ``auth_init_abortable``, ``txn_calls.handle_authorization_error``
    client_auth_init_abortable: bool = True
    #: the new group coordinator's OffsetDelete tombstones a partition with only pending transactional offsets and the
    #: tombstone's replay drops them for every open transaction of the group (KAFKA-14505 [8/8], e7fa0edd635, first tag
    #: 3.8.0: ``OffsetMetadataManager.deleteOffsets`` / ``replay``); 3.7.x's tombstones only a committed offset and its
    #: replay leaves the pending ones
    offset_delete_pending: bool = True
    #: the new group coordinator's offset retention keeps a group without committed offsets while it has open
    #: transactions (KAFKA-19163: 1293658cca, first tag 4.1.0; 48f75616d7 on the 4.0 branch, first tag 4.0.1); before,
    #: such a group was deletable at once (``OffsetMetadataManager.cleanupExpiredOffsets``)
    expiry_keeps_group_with_open_txns: bool = False
    #: the classic group coordinator's load and unload of a __consumer_offsets partition check the coordinator epoch
    #: (KAFKA-10614: c72ce005e70, first tag 3.0.0, ``GroupMetadataManager.maybeUpdateCoordinatorEpoch``): a load or an
    #: unload at an epoch below the recorded one is ignored; before (2.8.0), every load and unload ran
    #: (``model.group.offsets_load``)
    group_load_epoch_checked: bool = True
    #: the classic group coordinator's load skips a control batch without records (KAFKA-7467: 79757c90df8, first tags
    #: 2.0.1 and 2.2.0); 2.0.0 read its first record and the load threw, loading no group of the partition
    empty_control_batch_ok: bool = True
    #: loading a __transaction_state partition whose cache entry is still there (no emigration in between) replaces the
    #: entry and completes (KAFKA-9307: 0f0eb49e35e, first tag 2.5.0; 30f4fbf51a7 on the 2.4 branch, first tag 2.4.1);
    #: before, addLoadedTransactionsToCache put the entry and threw IllegalStateException, leaving the partition loading
    #: (``model.coordinator.txn_partition_cache``)
    txn_reload_replaces: bool = True
    #: the transaction coordinator resends a marker answered KAFKA_STORAGE_ERROR (KAFKA-9749: 5a1567631d, first tag
    #: 2.5.0; 4c96b7deba on trunk, first tag 2.6.0); before, TransactionMarkerRequestCompletionHandler's ``case other``
    #: threw IllegalStateException (2.0.0 .. 2.4.1; ``model.transactions.markers.on_marker_response``)
    marker_storage_error_retriable: bool = True
    #: when the producer reads the finalized transaction.version from its ApiVersions
    #: (``model.producer.feature_versions.FeatureCheck``): "none" (2.0.0 .. 3.9.x), "2024-10" (at beginTransaction,
    #: KAFKA-14563's client, the 2024-10 snapshot), "4.0" (when completing and after initTransactions, an upgrade
    #: bumping the epoch: KAFKA-18227, KAFKA-17898; 4.0.0 .. 4.2.0-rc1)
    client_feature_check: FeatureCheck = "none"
    #: the client's TxnOffsetCommit builder and the consumer's group metadata below v3
    #: (``model.producer.txn_offset_commit_version``): "unchecked" (2.0 .. 2.5.x), "config" (KAFKA-9776, 2.6.0 .. 2.8.x:
    #: UnsupportedVersionException unless internal.auto.downgrade.txn.commit), "refuse" (KAFKA-12574, 3.0.0 on)
    txn_offset_commit_group_metadata: GroupMetadataCheck = "refuse"
    #: the exceptions a failed produce batch's records get (``model.producer.no_idempotence.record_exceptions``):
    #: "code" (2.0.0 .. 2.6.x: ``error.exception()``), "message" (2.7.0 .. 2.8.x: with the response's error message,
    #: MINOR PR 9450), "record-errors" (KAFKA-12548, 3.0.0 on: per-record exceptions from the response's record errors)
    client_produce_exception: ProduceExceptionDetail = "record-errors"
    #: TransactionState PrepareAbort's valid previous states take Empty, CompleteCommit and CompleteAbort, whatever the
    #: transit's transaction version (KAFKA-14563, 755adf8a56, PR 17698, first tag 4.0.0: 4.0.0 TransactionMetadata.scala
    #: ``PrepareAbort.validPreviousStates``, 4.1.0 and 4.2.0-rc1 TransactionState.java l.98); ``completeTransitionTo``
    #: accepts the new txnStartTimestamp a transaction with nothing added gets (``noPartitionAdded``) only for a TV2
    #: transit (``allowedEmptyAbort``: 4.0.0 and 4.1.0 TransactionMetadata.scala, 4.2.0-rc1 TransactionMetadata.java
    #: l.385-387). 1eb7644 and 3.9.1: Ongoing and PrepareEpochFence only (``api.coordinator.prepare_abort_or_commit_checked``)
    prepare_abort_from_ended: bool = False
    #: a broker's RPCProducerIdManager answered AllocateProducerIds with an authentication exception, a version mismatch
    #: or no response body backs off and asks again (KAFKA-19990, ca9a1b1037, PR 21135, first tag 4.2.0-rc0:
    #: ``handleAllocateProducerIdsResponse(ClientResponse)`` -> ``handleUnsuccessfulResponse``); before, the answer was
    #: dropped with requestInFlight left set, so the broker never asked again and every ``generateProducerId`` once its
    #: block ran out failed with COORDINATOR_LOAD_IN_PROGRESS (4.0.0 .. 4.1.1 ``onComplete``: ``instanceof
    #: AllocateProducerIdsResponse``; 3.9.1's Scala casts the missing body and throws). Backported to the 3.9, 4.0 and 4.1
    #: branches (aaacb58675 3.9.2-rc0, ff65f765d4, ed425bab50), releases no profile stands for
    #: (``coordinator.producer_ids.after_failed_block_request``)
    pid_block_retry_bodyless: bool = False
    #: the new group coordinator deletes a deleted topic's offsets, committed and pending transactional
    #: (KAFKA-16168, af41fc3614, first tag 3.8.0: ``OffsetMetadataManager.onPartitionsDeleted``); 3.7.x's
    #: ``GroupCoordinatorService.onPartitionsDeleted`` only checked the coordinator was active (``model.group.offset_delete``)
    offsets_deleted_with_topic: bool = True
    #: how ``new ProducerConfig`` settles enable.idempotence against acks, retries and max.in.flight
    #: (``model.producer.idempotence_config``): "unread" (before KAFKA-13673: not modelled), "3.1.1" (KAFKA-13673,
    #: 7c280c1d5f6, first tag 3.2.0, on the 3.1 branch b7f289ecad4, 3.1.1: a default idempotence that conflicts is
    #: turned off, max.in.flight > 5 included), "4.0" (KAFKA-17927, e1dcd383bc, first tag 4.0.0: max.in.flight > 5 with
    #: idempotence on is a ConfigException even when idempotence is only the default)
    idempotence_config: IdempotenceConfigRule = "4.0"
    #: ReplicaManager's refusal of a produce request whose transactional batches name several producers
    #: (``api.leader.produce_request_pid_error``): "none" (before KIP-890 part 1: no check), "producer-id" (KAFKA-14916,
    #: ffd814d25fb, first tag 3.6.0: a set of producer ids, built only while verification runs and checked after each
    #: partition's ``maybeStartTransactionVerification``), "producer-id-and-epoch" (KAFKA-15987, 5eb82010ef3, first tag
    #: 3.8.0: ``handleProduceAppend`` collects (producer id, epoch) pairs and throws InvalidPidMappingException before
    #: any verification starts, verification enabled or not; the same at 1eb7644 and 4.2.0-rc1)
    produce_pid_check: ProducePidCheck = "producer-id-and-epoch"
    #: which leaving member a classic group's LeaveGroup removes (``model.group.leave_group``): "2.4" (KAFKA-8221
    #: 74c90f46c34, 2.4.0 .. 2.8.2 ``GroupCoordinator.handleLeaveGroup``: a known member id leaves whatever unknown
    #: instance id it names), "3.0" (MINOR PR 9958 5dae3648abd, first tag 3.0.0, ``validateCurrentMember``; 4.0.0 ..
    #: 4.2.0-rc1 ``ClassicGroup.validateMember``: an instance id no static member has is UNKNOWN_MEMBER_ID)
    leave_group: LeaveGroupRule = "3.0"
    #: which committed offsets the classic group coordinator's ``cleanupGroupMetadata`` expires
    #: (``model.group.classic_offset_expiry``): "expire-timestamp" (2.0.x: each offset at its own commit timestamp +
    #: offsets.retention.ms, ``expireTimestamp < now``, whatever the group's state), "kip-211" (KIP-211, KAFKA-4682
    #: 418a91b5d4e, first tag 2.1.0: an Empty group's offsets offsets.retention.ms after it became Empty, a simple
    #: consumer's after each commit, none of another group's)
    classic_offset_retention: ClassicRetentionRule = "kip-211"
    #: WriteTxnMarkers is authorized by ALTER on the cluster, else CLUSTER_ACTION (KAFKA-16513, ef7b48e66ab, PR 15837,
    #: KIP-1037, first tag 3.8.0; the same at 3.9.1, 4.0.0, 4.1.0, 4.2.0-rc1); before, by CLUSTER_ACTION only
    #: (``model.kafka_apis.write_txn_markers_authorized``)
    write_txn_markers_alter_cluster: bool = True


#: what a profile can lack (``Protocol.lacks``) -> what it is and when Kafka got it
FEATURES: dict[str, str] = {
    "transaction-version-2": ("transaction version 2 (KIP-890 part 2: EndTxn v5, an epoch bump per transaction, "
                              "TransactionMetadata.clientTransactionVersion), released in 4.0"),
    "kip-360": ("KIP-360 (InitProducerId v3 with the producer's id and epoch, lastProducerEpoch, "
                "prepareIncrementProducerEpoch's expected epoch), released in 2.5"),
    "kip-447": "KIP-447 (TxnOffsetCommit v3 with member id and generation, OffsetFetch v7's require_stable), released in 2.5",
    "kip-588": ("KIP-588 (PRODUCER_FENCED, error 90, from InitProducerId v4 / EndTxn, AddPartitionsToTxn and "
                "AddOffsetsToTxn v2), released in 2.7"),
    "kip-890-verification": ("KIP-890 part 1 (the partition leader's transaction verification entry and the "
                             "verify-only AddPartitionsToTxn it sends), released in 3.6"),
    "kafka-15449": ("KAFKA-15449 (KIP-890 part 1 for TxnOffsetCommit: the group coordinator's __consumer_offsets "
                    "write is verified with the transaction coordinator first), released in 3.7"),
    "kafka-9666": ("KAFKA-9666 (TransactionMetadata.hasFailedEpochFence: a fence whose write failed is not bumped "
                   "again), released in 2.6"),
    "kafka-14831": ("KAFKA-14831 (an invalid state transition made on the Sender's thread poisons the transactional "
                    "producer: TransactionManager.setPoisonStateOnInvalidTransition), released in 3.6"),
    "transaction-abortable": ("the TRANSACTION_ABORTABLE error (code 120, KAFKA-16314, part of KIP-890) and the client's "
                              "abortable reaction to it, released in 3.8"),
    "kafka-6635": ("KAFKA-6635 (the Sender's close completes a queued commit or abort, aborts an open transaction, and a "
                   "forced close fails the pending transactional results with KafkaException: TransactionManager.close), "
                   "released in 2.3"),
    "kafka-16217": ("KAFKA-16217 (an exception from beginAbort while the Sender closes forces the close, so the "
                    "TransactionManager is closed instead of retrying the abort forever), released in 3.7.1 and 3.8.0"),
    "kip-91": ("KIP-91 (the producer's delivery.timeout.ms: a batch past it, or expired while its request was in "
               "flight, is never retried), released in 2.1"),
    "kafka-8061": ("KAFKA-8061 (a graceful close of the Sender still fetches the producer id an idempotent producer lost "
                   "at Short.MaxValue, so its batches drain; only a forced close stops the wait), released in 2.2"),
    "kip-496": "KIP-496 (OffsetDelete: a consumer group's committed offsets of a topic it does not subscribe to), released in 2.4",
    "kafka-8221": ("KAFKA-8221 (KIP-345's batch LeaveGroup v3: several members, each with its group.instance.id, so a "
                   "static member can be removed or fenced by its instance id), released in 2.4"),
    "kafka-13794": ("KAFKA-13794 (the producer's in-flight batches of a partition are told apart when two share a base "
                    "sequence, so a late failure of an expired batch no longer takes a newer epoch's batch out of "
                    "inflightBatchesBySequence), released in 3.0.2, 3.1.1 and 3.2.0"),
    "kafka-14884": ("KAFKA-14884 (Sender.failBatch runs TransactionManager.handleFailedBatch only for the failure that "
                    "completes the batch, so a late failure of a batch that expired already is ignored; before, it was "
                    "handled a second time: an abortable error and the partition's sequences moved down again), "
                    "released in 3.6"),
    "kafka-8335": ("KAFKA-8335 and KAFKA-8351 (the log cleaner drops a COMMIT marker once no batch of its transaction "
                   "is read, and carries the transactions it is inside from one group of segments to the next), "
                   "released in 2.2.2 and 2.3.0"),
    "kafka-8522": ("KAFKA-8522 (KIP-534: a transaction marker with nothing left of its transaction keeps a delete "
                   "horizon in its batch header, set by the first cleaning pass that finds it so; a later pass at or past "
                   "it removes it; before, the horizon came from the cleaned segments' last-modified times), "
                   "released in 3.1"),
    "kafka-9393": ("KAFKA-9393 (a producer-state snapshot is deleted with the segment whose base offset it has, when "
                   "retention, the log start offset or a truncation deletes that segment; before, truncateHead deleted "
                   "the snapshots below the log start offset and the recovery-point checkpoint those below the last two "
                   "segments), released in 2.8"),
    "kafka-12152": ("KAFKA-12152 (TransactionManager.handleFailedBatch no longer ignores a batch of an older producer id "
                    "or epoch: its failure may ask for an idempotent epoch bump), released in 2.8"),
    "kafka-13221": ("KAFKA-13221 (KIP-664: ProducerStateManager.hasLateTransaction, an ongoing transaction whose producer "
                    "wrote nothing for max.transaction.timeout.ms + 5 minutes), released in 3.2"),
    "kafka-13099": ("KAFKA-13099 (the coordinator's transactional-id expiry per __transaction_state partition: a "
                    "partition without a log config is skipped, tombstones go in batches within max.message.bytes), "
                    "released in 2.6.3, 2.7.2, 2.8.1 and 3.0.0"),
    "kip-664": ("KIP-664's DescribeTransactions and ListTransactions (the coordinator's admin view of its "
                "transactions), released in 3.0"),
    "kip-994": "KIP-994's ListTransactions v1 DurationFilter (transactions running longer than a duration), released in 3.8",
    "kip-1152": "KIP-1152's ListTransactions v2 TransactionalIdPattern (a regular expression on the id), released in 4.1",
    "kafka-14869": ("KAFKA-14869 (KIP-915 part 1: a __transaction_state record whose key version is unknown is skipped "
                    "when the partition is loaded; before, the load stopped with IllegalStateException), released in "
                    "3.4.1 and 3.5.0"),
    "kip-467": ("KIP-467 (a produce answer's error_message and record errors, and the error INVALID_RECORD), released "
                "in 2.4"),
    "kafka-16192": ("KAFKA-16192 (KIP-890: transaction.version and the flexible __transaction_state value, version 1, "
                    "written from transaction.version 1 on), released in 3.9"),
    "kafka-16352": ("KAFKA-16352 (the marker channel drops a pending transaction completion only if it is the one the "
                    "dropped markers belong to, so a reloaded transaction's completion is not lost), released in 3.8"),
    "kip-939": ("KIP-939's InitProducerId v6 (Enable2Pc, KeepPreparedTxn; the broker's "
                "transaction.two.phase.commit.enable and the TWO_PHASE_COMMIT ACL on the transactional id), released "
                "in 4.1 with v6 marked latestVersionUnstable"),
}

#: feature -> the asserted state fields that do not exist in a version lacking it (TransactionMetadata got
#: lastProducerId and lastProducerEpoch with KIP-360): an expected value for one is left unchecked there
FEATURE_FIELDS: dict[str, tuple[str, ...]] = {
    "kip-360": ("prev_producer_id", "last_producer_epoch"),
    "kafka-9666": ("has_failed_epoch_fence",),
}


def _idempotent(variant: str) -> dict[str, object]:
    values: dict[str, object] = {name: sw.default for name, sw in IDEMPOTENT_SWITCHES.items()}
    values.update(IDEMPOTENT_VARIANTS[variant].switches)
    return values


def _profile(name: str, idempotent_variant: str, init_variant: str, eos_variant: str, **rest: object) -> Protocol:
    idem = _idempotent(idempotent_variant)
    return Protocol(
        name=name, init_producer_id=str(INIT_VARIANTS[init_variant].switches["init_producer_id"]),
        eos=EOS_VARIANTS[eos_variant].protocol,
        broker_unknown_producer=str(idem["broker_unknown_producer"]),
        broker_batch_cache=int(idem["broker_batch_cache"]),  # type: ignore[call-overload]
        broker_duplicate_sequence_error=bool(idem["broker_duplicate_sequence_error"]),
        broker_retain_producer_state=bool(idem["broker_retain_producer_state"]),
        client_version=str(idem["client_version"]), client_epoch_bump=str(idem["client_epoch_bump"]),
        **rest)  # type: ignore[arg-type]


#: TRUNK_END is the open end of trunk (``Version``: ``model.since``)
SNAPSHOT_2024_10: Version = (3, 9, 50)
#: apache/kafka trunk after the 4.2 branch cut (2025-11-21: the merge-base of 4.2.0-rc1 and the mirror's main, which
#: merges trunk), where KAFKA-20090 (PR 21469, February 2026) landed: what ``kafka-later-trunk`` stands for
LATER_TRUNK: Version = (4, 2, 50)
TRUNK_END: Version = (99,)


def version(text: str) -> Version:
    """'2.4.1' -> (2, 4, 1); a release candidate's tag stands for its release ('4.2.0-rc1' -> (4, 2, 0))."""
    return tuple(int(x) for x in text.split("-rc")[0].split("."))


#: feature of ``FEATURES`` -> the first version that has it, read at apache/kafka's release tags
FEATURE_SINCE: dict[str, Since] = {
    "kip-360": Since((2, 5, 0), "2.5.0 InitProducerIdRequest.json validVersions 0-3 (2.4.x: 0-2); "
                     "TransactionMetadata.lastProducerEpoch; KAFKA-8710 fecb977b257 (first tag 2.5.0)"),
    "kip-447": Since((2, 5, 0), "2.5.0 TxnOffsetCommitRequest.json validVersions 0-3 (2.4.x: 0-2); "
                     "GroupCoordinator.doTxnCommitOffsets from KAFKA-9365 ed7c071e07f (first tag 2.5.0)"),
    "kip-588": Since((2, 7, 0), "2.7.0 Errors.PRODUCER_FENCED(90), InitProducerId v4, EndTxn / AddPartitionsToTxn / "
                     "AddOffsetsToTxn v2 (2.6.x: none); KAFKA-9911 b937ec75677"),
    "kip-890-verification": Since((3, 6, 0), "3.6.0 ReplicaManager verification through AddPartitionsToTxnManager, "
                                  "transaction.partition.verification.enable (default true), VerificationStateEntry; "
                                  "KAFKA-14561 56dcb837a2f was on trunk for 3.5 but reverted on the 3.5 branch "
                                  "(928070e3206): 3.5.0-3.5.2 have no verification"),
    "transaction-abortable": Since((3, 8, 0), "3.8.0 Errors.TRANSACTION_ABORTABLE and the client's "
                                   "TransactionAbortableException (KAFKA-16314 2e8d69b78ca, first tag 3.8.0; renamed "
                                   "from ABORTABLE_TRANSACTION by cf1ba099c07 before 3.8.0)"),
    "kafka-14831": Since((3, 6, 0), "3.6.0 TransactionManager.shouldPoisonStateOnInvalidTransition (3.5.2: none); "
                         "KAFKA-14831 a81f35c1c8f"),
    "kafka-15449": Since((3, 7, 0), "3.7.0 GroupCoordinator / GroupMetadataManager pass a verificationGuard for "
                         "a transactional offset commit (3.6.2: none); KAFKA-15449 b6c78554753 (first tag 3.7.0)"),
    "kafka-9666": Since((2, 6, 0), "2.6.0 TransactionMetadata.hasFailedEpochFence (2.5.1: none); KAFKA-9666 "
                        "1f3f227b59a on the 2.6 branch (2eeae09ca3e on trunk, first tag 2.7.0)"),
    "kip-939": Since((4, 1, 0), "4.1.0 InitProducerIdRequest.json validVersions 0-6 with Enable2Pc / KeepPreparedTxn "
                     "(4.0.1: 0-5), TransactionCoordinator.handleInitProducerId(enableTwoPCFlag, keepPreparedTxn) "
                     "l.133-146, KafkaApis.handleInitProducerIdRequest's TWO_PHASE_COMMIT check l.1604; KAFKA-15370 "
                     "(1/N) 3ef10a3f61, KAFKA-18953 3a3159b01e, KAFKA-15370 ACLs 598eb13d07, all ancestors of 4.1.0 "
                     "and not of 4.0.1; the same rules at 4.1.1 and 4.2.0-rc1"),
    "kafka-6635": Since((2, 3, 0), "2.3.0 Sender.run's second and third loops (hasPendingTransactionalRequests, "
                        "'Aborting incomplete transaction due to shutdown') and TransactionManager.close(); KAFKA-6635 "
                        "7bd81628d9f (first tag 2.3.0; 2.2.x: only undrained and in-flight batches are awaited)"),
    "kafka-16217": Since((3, 7, 1), "3.7.1 and 3.8.0 Sender.run: beginAbort's exception sets forceClose ('Force close in "
                         "case the transactionManager is in error states'); KAFKA-16217 6e4a098055d (first tag 3.8.0), "
                         "fc5a1307d40 on the 3.7 branch (3.7.1; 3.7.0 logs it and retries the abort)"),
    "kafka-13794": Since((3, 1, 1), "3.1.1 and 3.2.0 TransactionManager.TopicPartitionEntry.PRODUCER_BATCH_COMPARATOR "
                         "(3.1.0 and 3.0.1: Comparator.comparingInt(ProducerBatch::baseSequence)); KAFKA-13794 "
                         "f0a2b62b0e7 (first tag 3.3.0 on trunk), backported to 3.0.2 and 3.1.1"),
    "kafka-14884": Since((3, 6, 0), "3.6.0 Sender.failBatch calls handleFailedBatch inside 'if "
                         "(batch.completeExceptionally(...))' (3.5.2 l.766-774: before it, for every failure); KAFKA-14884 "
                         "ea0bb001262 ('take 2', PR 13787), an ancestor of 3.6.0 and not of 3.5.2, with SenderTest's "
                         "testReceiveFailedBatchTwiceWithTransactions"),
    "kafka-8335": Since((2, 2, 2), "LogCleaner.CleanedTransactionMetadata.onControlBatchRead's COMMIT case "
                        "('eligible for deletion if we didn't traverse any batches from the transaction'): KAFKA-8335 "
                        "d798dbf497d (first tag 2.3.0; 0bf7fa85de1 on the 2.2 branch, 2.2.1) and KAFKA-8351's transaction "
                        "state carried between segment groups 6afb0ca735c (6243db2c095 first tag 2.3.0, 2ae66eba6a3 "
                        "2.2.2)"),
    "kafka-8522": Since((3, 1, 0), "3.1.0 RecordBatch.deleteHorizonMs and LogCleaner's checkBatchRetention reading it; "
                        "KAFKA-8522 6c806430093 (PR 10914, first tag 3.1.0)"),
    "kafka-9393": Since((2, 8, 0), "2.8.0 Log.deleteSegmentFiles removes each deleted segment's snapshot "
                        "(producerStateManager.removeAndDeleteSnapshot(segment.baseOffset)); 2.7.0 has "
                        "deleteSnapshotsAfterRecoveryPointCheckpoint; KAFKA-9393 24290de8282 (first tag 2.8.0)"),
    "kafka-12152": Since((2, 8, 0), "2.8.0 TransactionManager.handleFailedBatch without producerIdOrEpochNotMatch's early "
                         "return (2.7.0 l.721: 'Ignoring failed batch ... since the producerId has been reset "
                         "internally'); KAFKA-12152 eb026fcf82d (first tag 2.8.0)"),
    "kip-91": Since((2, 1, 0), "2.1.0 ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Sender.canRetry's "
                    "hasReachedDeliveryTimeout and isDone checks, getExpiredInflightBatches (2.0.1: none); KAFKA-5886 "
                    "7fc7136ffd2 (first tag 2.1.0)"),
    "kafka-8061": Since((2, 2, 0), "2.2.0 Sender.maybeWaitForProducerId loops 'while (!forceClose && ...)' (2.1.1: "
                        "'while (running && ...)', KAFKA-5503 4b9a3ba59b6; 2.0.0 .. 2.1.0: no close check); KAFKA-8061 "
                        "dfc59fa0cbb on the 2.2 branch (first tag 2.2.0), 1f525cd2c90 on trunk (first tag 2.3.0)"),
    "kip-467": Since((2, 4, 0), "2.4.0 ProduceResponse v8 error_records / error_message and Errors.INVALID_RECORD(87) "
                     "(2.3.1: neither); KAFKA-8729 pt 2 f6f24c4700 (first tag 2.4.0)"),
    "kip-496": Since((2, 4, 0), "2.4.0 ApiKeys.OFFSET_DELETE, GroupCoordinator.handleDeleteOffsets, "
                     "GroupMetadata.removeOffsets; KAFKA-8730 e24d0e22abb (first tag 2.4.0)"),
    "kafka-8221": Since((2, 4, 0), "2.4.0 LeaveGroupRequest.json validVersions 0-4, Members[MemberId, "
                        "GroupInstanceId] from v3 (2.3.1: 0-2, one MemberId) and GroupCoordinator.handleLeaveGroup(leavingMembers); "
                        "KAFKA-8221 74c90f46c34 (first tag 2.4.0)"),
    "kafka-13221": Since((3, 2, 0), "3.2.0 ProducerStateManager.hasLateTransaction / LateTransactionBufferMs (3.1.2: "
                         "none); KAFKA-13221 915991445fd (first tag 3.2.0), the same rule at 4.2.0-rc1 (l.130-133)"),
    "kafka-13099": Since((2, 8, 1), "2.8.1 TransactionStateManager.removeExpiredTransactionalIds(transactionPartition, "
                         "...) with replicaManager.getLogConfig and MemoryRecordsBuilder.hasRoomFor (2.8.0: one "
                         "appendRecords over every partition); KAFKA-13099 c5ec390fa6f (first tag 3.1.0), backported "
                         "3356faf8de1 (2.6.3), b317f7fa543 (2.7.2), facf5e9be9e (2.8.1), cd233e92b0a (3.0.0); 2.7.0, "
                         "2.7.1 and 2.8.0 lack it, so every release from 2.8.1 on has it"),
    "kip-664": Since((3, 0, 0), "3.0.0 DescribeTransactionsRequest.json and ListTransactionsRequest.json validVersions 0 "
                     "(2.8.2: neither file); TransactionCoordinator.handleDescribeTransactions, KAFKA-12267 3f09fb97b6, "
                     "and handleListTransactions / TransactionStateManager.listTransactionStates, KAFKA-12369 "
                     "3708a7c6c1, both ancestors of 3.0.0 and not of 2.8.2"),
    "kip-994": Since((3, 8, 0), "3.8.0 ListTransactionsRequest.json validVersions 0-1 ('Version 1: adds DurationFilter'; "
                     "3.7.0: 0), listTransactionStates(filterDurationMs); KAFKA-16265 b4e96913cc, an ancestor of 3.8.0 "
                     "and not of 3.7.2"),
    "kip-1152": Since((4, 1, 0), "4.1.0 ListTransactionsRequest.json validVersions 0-2 ('Version 2: adds "
                      "TransactionalIdPattern ... (KIP-1152)'; 4.0.1: 0-1), listTransactionStates("
                      "filterTransactionalIdPattern); KAFKA-19073 0c1fbf3aeb, an ancestor of 4.1.0 and not of 4.0.1"),
    "kafka-14869": Since((3, 4, 1), "3.4.1 and 3.5.0 TransactionLog.readTxnRecordKey returns UnknownKey for an unknown "
                         "key version and TransactionStateManager.loadTransactionMetadata skips it (3.4.0 l.101-109 "
                         "throws IllegalStateException); KAFKA-14869 5e9d4de748d (first tag 3.6.0), 33e2fef4553 on the "
                         "3.5 branch (3.5.0) and 5115906515f on the 3.4 branch (3.4.1)"),
    # the first version with TV2 is the 2024-10 trunk snapshot (partly merged); the first release is 4.0.0
    "kafka-16192": Since((3, 9, 0), "3.9.1 TransactionLogValue.json validVersions 0-1, flexibleVersions 1+, and "
                         "TransactionLog.valueToBytes(usesFlexibleRecords) (3.8.1: version 0 only); KAFKA-16192 "
                         "a0f6e6f816 (an ancestor of 3.9.1, not of 3.8.1)"),
    "kafka-16352": Since((3, 8, 0), "3.8.0 TransactionMarkerChannelManager.removeMarkersForTxn(pendingCompleteTxn) and "
                         "transactionsWithPendingMarkers.remove(transactionalId, pendingCompleteTxn) (3.7.2: "
                         "removeMarkersForTxnId removes any); KAFKA-16352 1d6e0b8727 (first tag 3.8.0)"),
    "transaction-version-2": Since(SNAPSHOT_2024_10, "EndTxnRequest.json validVersions 0-5 and "
                                   "TransactionMetadata.clientTransactionVersion at the 2024-10 snapshot 1eb7644 "
                                   "(3.9.0-rc3: EndTxn 0-4, no client transaction version); first released in 4.0.0 "
                                   "(4.0.0 EndTxnRequest.json 0-5, KafkaApis.handleEndTxnRequest: "
                                   "TransactionVersion.transactionVersionForEndTxn)"),
}

#: behaviour switches of ``Protocol`` that changed at a release: field -> ((first version, value), ...) in
#: order, each value holding from its version until the next entry. A profile's field must have the value
#: of every version of its range (``tests/test_conform_profiles.py``)
SWITCH_HISTORY: dict[str, tuple[tuple[Version, object], ...]] = {
    # 2.0-2.3 evict on a log start offset move; KAFKA-7190 1a5971ebdc7 (first tag 2.4.0)
    "broker_retain_producer_state": (((2, 0, 0), False), ((2, 4, 0), True)),
    # 2.4.1 ProducerStateManager: checkSequence still throws UnknownProducerIdException; 2.5.0 accepts
    # (KAFKA-8710 fecb977b257)
    "broker_unknown_producer": (((2, 0, 0), "unknown_producer_id"), ((2, 5, 0), "accept")),
    "client_version": (((2, 0, 0), "pre-kip360"), ((2, 5, 0), "kip360")),
    "init_producer_id": (((2, 0, 0), "pre-kip360"), ((2, 5, 0), "kip360-shipped")),
    # KAFKA-9144: b13a7ff7077 on the 2.4 branch (2.4.1), dbc9cd638f3 (2.5.0)
    "marker_sets_producer_timestamp": (((2, 0, 0), False), ((2, 4, 1), True)),
    # 2.5.1 TransactionCoordinator.endTransaction: lastProducerEpoch = producerEpoch; 2.6.0: NO_PRODUCER_EPOCH
    "fence_keeps_last_epoch": (((2, 0, 0), False), ((2, 5, 0), True), ((2, 6, 0), False)),
    # KAFKA-9600 88bc0fdf822 (first tag 2.6.0); KAFKA-9666 1f3f227b59a on the 2.6 branch (2.6.0)
    "end_txn_exact_epoch": (((2, 0, 0), False), ((2, 6, 0), True)),
    "failed_fence_keeps_epoch": (((2, 0, 0), False), ((2, 6, 0), True)),
    # KAFKA-9911 b937ec75677 (2.7.0): PRODUCER_FENCED, and KafkaApis down-converts it for older requests
    "producer_fenced": (((2, 0, 0), False), ((2, 7, 0), True)),
    # 2.5.0-2.8.2 doTxnCommitOffsets; 3.0.0 validateOffsetCommit (5dae3648abd); 3.3.0 adds the Empty-group
    # shortcut (KAFKA-14201 706adc39f6a, first tags 3.3.0 / 3.4.0)
    "txn_offset_commit": (((2, 0, 0), "pre-kip447"), ((2, 5, 0), "2.5"), ((3, 0, 0), "3.0"), ((3, 3, 0), "current")),
    # TransactionCoordinator.handleVerifyPartitionsInTransaction: INVALID_TXN_STATE for a partition not in the
    # transaction (3.6.0-3.7.1); TRANSACTION_ABORTABLE from KAFKA-16314 2e8d69b78ca (first tag 3.8.0)
    "verification_abortable": (((2, 0, 0), False), ((3, 8, 0), True)),
    # TransactionManager.TxnOffsetCommitHandler: ``error.exception() instanceof RetriableException`` from PR 15266
    # (33a4709490f, first tag 3.8.0); 2.5.0-3.7.1 name UNKNOWN_TOPIC_OR_PARTITION / COORDINATOR_LOAD_IN_PROGRESS only
    "txn_offset_commit_any_retriable": (((2, 0, 0), False), ((3, 8, 0), True)),
    # TransactionManager.State.isTransitionValid, declared once with each version's first release and change in
    # txn_calls.TABLE_SINCE (KIP-360 2.5.0, KAFKA-13668 3.6.0, KAFKA-18227 4.0.0, KIP-939 4.1.0)
    "client_transitions": tuple((since.first, table) for table, since in CLIENT_TABLE_SINCE.items()),
    # TransactionManager.InitProducerIdHandler.handleResponse: KAFKA-19272 c7e4ff01cd (first tag 4.2.0-rc1; 4.1.1 enters
    # READY, l.1501-1502)
    "client_init_keeps_prepared": (((2, 0, 0), False), ((4, 2, 0), True)),
    # TransactionManager.pendingTransition / throwIfPendingState: KAFKA-13412 df2236d73bc (first tag 3.2.0) and its
    # 3.1 backport cde0046d15a (first tag 3.1.1); 3.0.2 and 3.1.0 keep pendingResult and throw KafkaException
    "client_retry_safe_calls": (((2, 0, 0), False), ((3, 1, 1), True)),
    # Sender.maybeSendAndPollTransactionalRequest's abortUndrainedBatches: KAFKA-10186 40a23cc0c2e (first tag 2.7.0)
    "client_abort_exception": (((2, 0, 0), "KafkaException"), ((2, 7, 0), "TransactionAbortedException")),
    # TransactionManager.InitProducerIdHandler's "Abortable authorization error" and Sender.shouldHandleAuthorizationError:
    # KAFKA-13668 ea81e99e598 (first tag 3.6.0; not in 3.5.2); the same at 3.9.1, 4.0.0 .. 4.2.0-rc1
    "client_auth_init_abortable": (((2, 0, 0), False), ((3, 6, 0), True)),
    # OffsetMetadataManager.deleteOffsets / replay: KAFKA-14505 [8/8] e7fa0edd635 (first tag 3.8.0; 3.7.1 checks only
    # the committed offsets); the same at 4.0.0 l.601, 4.1.0 l.761, 4.2.0-rc1 l.779
    "offset_delete_pending": (((2, 0, 0), False), ((3, 8, 0), True)),
    # OffsetMetadataManager.cleanupExpiredOffsets with no committed offset: KAFKA-19163 (48f75616d7 in 4.0.1, 1293658cca
    # in 4.1.0; 4.0.0 and 3.9.1 return true)
    "expiry_keeps_group_with_open_txns": (((2, 0, 0), False), ((4, 0, 1), True)),
    # GroupMetadataManager.loadGroupsAndOffsets / removeGroupsAndOffsets: KAFKA-10614 c72ce005e70 (first tag 3.0.0; 2.8.0
    # has no coordinator epoch); the same at 1eb7644, 3.9.1 and 4.0.1 (4.1.0 has no classic coordinator)
    "group_load_epoch_checked": (((2, 0, 0), False), ((3, 0, 0), True)),
    # GroupMetadataManager.doLoadGroupsAndOffsets' empty control batch: KAFKA-7467 79757c90df8 (2.0.1 and 2.2.0 have it)
    "empty_control_batch_ok": (((2, 0, 0), False), ((2, 0, 1), True)),
    # TransactionStateManager.addLoadedTransactionsToCache: KAFKA-9307 0f0eb49e35e (first tag 2.5.0), 30f4fbf51a7 on the
    # 2.4 branch (2.4.1); 2.4.0 and 2.3.1 throw IllegalStateException on an entry already cached
    "txn_reload_replaces": (((2, 0, 0), False), ((2, 4, 1), True)),
    # TransactionMarkerRequestCompletionHandler's retriable answers: KAFKA-9749 5a1567631d on the 2.5 branch (first tag
    # 2.5.0), 4c96b7deba on trunk (2.6.0); 2.4.1 names UNKNOWN_TOPIC_OR_PARTITION .. REQUEST_TIMED_OUT only
    "marker_storage_error_retriable": (((2, 0, 0), False), ((2, 5, 0), True)),
    # TransactionManager.maybeUpdateTransactionV2Enabled's callers, declared with their evidence in
    # feature_versions.FEATURE_CHECK_SINCE (KAFKA-14563's client at the 2024-10 snapshot, KAFKA-18227 4.0.0)
    "client_feature_check": tuple((since.first, check) for check, since in FEATURE_CHECK_SINCE.items()),
    # TxnOffsetCommitRequest.Builder.build below v3 with group metadata: no check at 2.5.0; KAFKA-9776 7f640f13b4d
    # (first tag 2.6.0, the auto-downgrade config); KAFKA-12574 cc6f4c49a9d (first tag 3.0.0, always refused)
    "txn_offset_commit_group_metadata": (((2, 0, 0), "unchecked"), ((2, 6, 0), "config"), ((3, 0, 0), "refuse")),
    # Sender.completeBatch / failBatch: 2.6.3 l.616 'exception = error.exception()'; the 2.7 branch's af150033b2 (MINOR
    # PR 9450, in the 2.7.0 release commit 466b798412; f8e3b84ec0 on trunk, first tag 2.8.0) passes
    # response.errorMessage; KAFKA-12548 66ba91733c (first tag 3.0.0; 2.8.2 has no record errors in failBatch) builds
    # per-record exceptions
    "client_produce_exception": (((2, 0, 0), "code"), ((2, 7, 0), "message"), ((3, 0, 0), "record-errors")),
    # TransactionManager.TxnOffsetCommitHandler.handleResponse: KAFKA-7296 (1b0340b8328 on the 2.0 branch, first tag
    # 2.0.1; 4f25f1fb711, 2.1.0); KIP-447's FENCED_INSTANCE_ID / UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION (2.5.0);
    # Errors.INVALID_PRODUCER_EPOCH -> InvalidProducerEpochException (KAFKA-9911 b937ec75677, 2.7.0), reached through
    # isFatalException; both epoch errors -> ProducerFencedException by name (KAFKA-14278 ff77b3ad041, 3.6.0)
    "txn_offset_commit_handler": (((2, 0, 0), "2.0.0"), ((2, 0, 1), "2.0.1"), ((2, 5, 0), "2.5"), ((2, 7, 0), "2.7"),
                                  ((3, 6, 0), "3.6")),
    # TransactionState PrepareAbort from Empty / CompleteX: KAFKA-14563 755adf8a56 (first tag 4.0.0; 3.9.1 and 1eb7644
    # Set(Ongoing, PrepareEpochFence))
    "prepare_abort_from_ended": (((2, 0, 0), False), ((4, 0, 0), True)),
    # RPCProducerIdManager's retry after a body-less AllocateProducerIds answer: KAFKA-19990 ca9a1b1037 (first tag
    # 4.2.0-rc0; 4.1.1 drops it). Its 3.9.2 backport (aaacb58675) is in no profile's range (kafka-3.8-3.9 ends at 3.9.0)
    "pid_block_retry_bodyless": (((2, 0, 0), False), ((4, 2, 0), True)),
    # OffsetMetadataManager.onPartitionsDeleted: KAFKA-16168 af41fc3614 (first tag 3.8.0; 3.7.2 a no-op)
    "offsets_deleted_with_topic": (((2, 0, 0), False), ((3, 8, 0), True)),
    # ProducerConfig.postProcessAndValidateIdempotenceConfigs: KAFKA-13673 7c280c1d5f6 (first tag 3.2.0; b7f289ecad4
    # 3.1.1, af1f68ab487 3.0.1, a 3.0 branch release kafka-3.0-3.1.0 leaves "unread"); KAFKA-17927 e1dcd383bc (first
    # tag 4.0.0; not in 3.9.1, after 1eb7644)
    "idempotence_config": (((2, 0, 0), "unread"), ((3, 1, 1), "3.1.1"), ((4, 0, 0), "4.0")),
    # ReplicaManager's several-producer check: KAFKA-14916 ffd814d25fb (first tag 3.6.0, 3.7.0 partitionEntriesForVerification
    # alike); KAFKA-15987 5eb82010ef3 (first tag 3.8.0: handleProduceAppend's transactionalProducerInfo)
    "produce_pid_check": (((2, 0, 0), "none"), ((3, 6, 0), "producer-id"), ((3, 8, 0), "producer-id-and-epoch")),
    # GroupCoordinator.handleLeaveGroup: 2.0.0 .. 2.3.1 one member id (the "2.4" rule without instance ids); KAFKA-8221
    # 74c90f46c34 (first tag 2.4.0) the batch with instance ids, unchanged to 2.8.2; 5dae3648abd (MINOR PR 9958, first
    # tag 3.0.0) validateCurrentMember, the same rule in 4.0.0 .. 4.2.0-rc1's classicGroupLeaveToClassicGroup
    "leave_group": (((2, 0, 0), "2.4"), ((3, 0, 0), "3.0")),
    # GroupMetadata.removeExpiredOffsets: 2.0.1 ``removeExpiredOffsets(startMs)`` (l.437-448, the offset's
    # expireTimestamp); KIP-211 (KAFKA-4682 418a91b5d4e, an ancestor of 2.1.0 and not of 2.0.1) by group state and
    # currentStateTimestamp, unchanged in this respect at 2.3.0, 2.4.0 (KIP-496 adds a branch) and 1eb7644 (l.754-812)
    "classic_offset_retention": (((2, 0, 0), "expire-timestamp"), ((2, 1, 0), "kip-211")),
    # KafkaApis.handleWriteTxnMarkersRequest's ALTER check: KAFKA-16513 ef7b48e66ab (an ancestor of 3.8.0, not of 3.7.1)
    "write_txn_markers_alter_cluster": (((2, 0, 0), False), ((3, 8, 0), True)),
}


def history_value(field: str, at: Version) -> object:
    """The value ``SWITCH_HISTORY`` gives ``field`` at version ``at``."""
    value: object = None
    for first, v in SWITCH_HISTORY[field]:
        if at >= first:
            value = v
    return value


_TV1 = {"end_txn": "tv1", "tv2_last_epoch": "keep", "max_txn_timeout_ms": 900000}
#: 4.0.0 to trunk: EndTxn v5 checked as TV2 by the request's version (4.0.0 KafkaApis.handleEndTxnRequest,
#: TransactionVersion.transactionVersionForEndTxn; KAFKA-14563, PR 17698), a TV2 CompleteX keeps lastProducerEpoch
#: (4.0.0 .. 4.1.1 TransactionMetadata.scala prepareComplete passes it on, 4.2.0-rc1's Java TransitionData copies it),
#: PRODUCER_FENCED down-converted for InitProducerId < v4 and EndTxn / AddPartitionsToTxn / AddOffsetsToTxn < v2
#: (4.0.0 and 4.2.0-rc1 KafkaApis), transaction.max.timeout.ms 15 min (TransactionStateManagerConfig), TxnOffsetCommit
#: by ClassicGroup.validateOffsetCommit with the Empty-group shortcut (4.0.0 .. 4.2.0-rc1, the same checks)
_4X = {"end_txn": "later-trunk", "tv2_last_epoch": "keep", "down_convert_fenced": True, "max_txn_timeout_ms": 900000,
       "txn_offset_commit": "current", "client_feature_check": "4.0", "prepare_abort_from_ended": True}
#: 2.0 .. 2.6: no PRODUCER_FENCED, so nothing to down-convert (every fence is INVALID_PRODUCER_EPOCH)
_BEFORE_2_7_FENCING = {"down_convert_fenced": False, "producer_fenced": False}
_BEFORE_2_5_COORDINATOR = {**_TV1, **_BEFORE_2_7_FENCING, "txn_offset_commit": "pre-kip447",
                           "client_transitions": "2.0", "client_retry_safe_calls": False, "client_auth_init_abortable": False,
                           "client_abort_exception": "KafkaException",
                           "end_txn_exact_epoch": False, "failed_fence_keeps_epoch": False,
                           "verification_abortable": False, "txn_offset_commit_any_retriable": False,
                           "txn_offset_commit_handler": "2.0.1", "offset_delete_pending": False,
                           "offsets_deleted_with_topic": False,
                           "txn_offset_commit_group_metadata": "unchecked", "client_produce_exception": "code",
                           "marker_storage_error_retriable": False, "idempotence_config": "unread",
                           "produce_pid_check": "none",
                           "group_load_epoch_checked": False,
                           "leave_group": "2.4", "write_txn_markers_alter_cluster": False}


class Profile(NamedTuple):
    """A conform profile: the Kafka versions it stands for (``first`` .. ``last``, both included), why the
    model reproduces them (the evidence at the release tags), and its switch values."""

    doc: str
    first: Version
    last: Version
    protocol: Protocol


def _entry(name: str, first: str | Version, last: str | Version, doc: str, idempotent: str, init: str,
           **rest: object) -> Profile:
    lo = version(first) if isinstance(first, str) else first
    hi = version(last) if isinstance(last, str) else last
    # a profile lacks every feature its first version lacks, one released inside its range included: it stands for
    # the versions without it (KAFKA-6635 2.3.0 in 2.0.1-2.3, KAFKA-13221 3.2.0 in 3.1.1-3.2, KAFKA-16217 3.7.1 in 3.7)
    lacks = frozenset(feature for feature, since in FEATURE_SINCE.items() if since.first > lo)
    return Profile(doc, lo, hi, _profile(name, idempotent, init, EOS_VARIANT[name], lacks=lacks, **rest))


#: profile -> the named kafka.eos variant (``model.protocol.VARIANTS``) whose switches the profile reads through
#: ``Protocol.eos``: the release variant of its versions (kafka-4.0.0 .. kafka-4.2: the kafka.eos variant read at that
#: tag, ``docs/kafka-versions.md``, "4.x release tags"; each pair of neighbours differs in a switch the interface reads:
#: tv2_failed_fence_leaves_epoch, the 4.1.0 leader and client rules, stale_epoch_before_verification,
#: tv2_marker_epoch_check); kafka-later-trunk (trunk after KAFKA-20090, February 2026,
#: before KAFKA-20310) is kafka-trunk-2026-01's; the 2024-10 snapshot, whose client has no TV2 paths (KAFKA-14563
#: came after it), reads kafka-3.8-3.9's, as the other rules it reads of ``eos`` (KAFKA-18654 [1/2], KAFKA-18660,
#: KAFKA-18042, KAFKA-18202, KAFKA-19367, KAFKA-19690, KAFKA-19176, KAFKA-19250) are all later than it
EOS_VARIANT: dict[str, str] = {
    "kafka-later-trunk": "kafka-trunk-2026-01", "kafka-4.2": "kafka-4.2.0-rc1", "kafka-4.1.1": "kafka-4.1.1",
    "kafka-4.1.0": "kafka-4.1.0", "kafka-4.0.1": "kafka-4.0.1", "kafka-4.0.0": "kafka-4.0",
    "kafka-2024-10": "kafka-3.8-3.9", "kafka-3.8-3.9": "kafka-3.8-3.9",
    "kafka-3.7": "kafka-3.6-3.7", "kafka-3.6": "kafka-3.6-3.7", "kafka-3.3-3.5": "kafka-3.3-3.5",
    "kafka-3.1.1-3.2": "kafka-3.2", "kafka-3.0-3.1.0": "kafka-3.0-3.1", "kafka-2.7-2.8": "kafka-2.7-2.8",
    "kafka-2.6": "kafka-2.6", "kafka-2.5": "kafka-2.5-2.8", "kafka-2.4.1": "kafka-2.4.1", "kafka-2.4.0": "kafka-2.4",
    "kafka-2.1-2.3": "kafka-1.0.2-2.3", "kafka-2.0.1": "kafka-1.0.2-2.3", "kafka-2.0.0": "kafka-1.0.2-2.3",
}


def client_tv2(protocol: Protocol) -> bool:
    """The profile's client has the transaction version 2 paths (KAFKA-14563, PR 17698, 755adf8a56, first tag
    4.0.0: a partition joins the transaction without AddPartitionsToTxn, TxnOffsetCommit goes without
    AddOffsetsToTxn; KAFKA-14562 [2/3], e14a81b4b2, 4.0.0: the client continues with EndTxn v5's producer id and
    epoch): kafka.eos's ``transaction_version`` tv2, which only its 4.0+ variants set"""
    return protocol.eos.transaction_version == TransactionVersion.TV2


def add_partition_passes_abortable(protocol: Protocol) -> bool:
    """AddPartitionsToTxnManager hands a TRANSACTION_ABORTABLE answer on to an ADD_PARTITION (TV2) produce or
    TxnOffsetCommit request: from KAFKA-14563 (755adf8a56, first tag 4.0.0) only ``defaultError`` converts it to
    INVALID_TXN_STATE (4.0.0 AddPartitionsToTxnManager.scala l.251-253, 4.2.0-rc1's Java class l.176-177); the
    2024-10 snapshot's WIP ``addPartition`` converted it, as every operation but ``genericError`` (1eb7644 l.223-226).
    The same release as the client's TV2 paths (``client_tv2``)."""
    return client_tv2(protocol)


def two_phase_commit(protocol: Protocol) -> bool:
    """The profile's InitProducerId has KIP-939's fields (v6: Enable2Pc, KeepPreparedTxn), and its coordinator and
    KafkaApis read them (4.1.0 .. 4.2.0-rc1 alike: ``FEATURE_SINCE['kip-939']``)."""
    return "kip-939" not in protocol.lacks


#: profile name -> Profile; the newest first. Each is a contiguous range of Kafka versions inside which every
#: switch of ``Protocol`` and every feature of ``FEATURES`` keeps one value (``SWITCH_HISTORY``,
#: ``FEATURE_SINCE``); the evidence for a boundary is in those two tables.
PROFILE_TABLE: dict[str, Profile] = {
    "kafka-later-trunk": _entry(
        "kafka-later-trunk", LATER_TRUNK, TRUNK_END,
        ("apache/kafka trunk after KAFKA-20090 (PR 21469, February 2026): kafka-4.2's rules, but a fence at the largest "
         "epoch keeps it (an error logged) where every 4.x release throws IllegalStateException (INIT-28, SM-130). "
         "Stands for trunk after the 4.2 branch cut (2025-11-21); the 4.x releases have their own profiles"),
        "kafka-shipped", "kafka-later-trunk", **_4X, expiry_keeps_group_with_open_txns=True, fence_at_max_epoch="keep", client_transitions="4.1",
        client_init_keeps_prepared=True, pid_block_retry_bodyless=True),
    "kafka-4.2": _entry(
        "kafka-4.2", "4.2.0", "4.2.0",
        ("released 4.2.0, read at 4.2.0-rc1 (the mirror has no final tag): 4.1.1, and a leader refuses a TV2 marker "
         "not above the producer's epoch unless it is a retry (KAFKA-19446 [3/3] c1ded05067, KAFKA-19999 4a57c6d228: "
         "ProducerAppendInfo.checkProducerEpoch); the Java TransactionMetadata (KAFKA-18884, 990cb5c06c) still throws "
         "on a fence at Short.MaxValue (prepareFenceProducerEpoch), which KAFKA-20090 changed after the tag; a broker asks the "
         "controller again for a producer-id block after an AllocateProducerIds answer without a body (KAFKA-19990, "
         "ca9a1b1037: RPCProducerIdManager.handleAllocateProducerIdsResponse)"),
        "kafka-shipped", "kafka-shipped", **_4X, expiry_keeps_group_with_open_txns=True, client_transitions="4.1", client_init_keeps_prepared=True,
        pid_block_retry_bodyless=True),
    "kafka-4.1.1": _entry(
        "kafka-4.1.1", "4.1.1", "4.1.1",
        ("released 4.1.1: 4.1.0 with KAFKA-19690's 4.1 cherry-pick (PR 20618, a10c1f3ea1: "
         "UnifiedLog.analyzeAndValidateProducerState checks the epoch before the verification guard)"),
        "kafka-shipped", "kafka-shipped", **_4X, expiry_keeps_group_with_open_txns=True, client_transitions="4.1"),
    "kafka-4.1.0": _entry(
        "kafka-4.1.0", "4.1.0", "4.1.0",
        ("released 4.1.0: 4.0.1 with the leader's KAFKA-18042 (PR 19844, cc25d217da: INVALID_PRODUCER_EPOCH for a "
         "stale batch before any verification) and KAFKA-18202 (PR 19902, 3479ce793b: a TV2 producer without state "
         "starts at sequence 0), and the client's KAFKA-19176 (8c71ab03b5: a batch's retriable error wrapped as "
         "TransactionAbortableException) and KAFKA-19250 (b1ea280ab1: TRANSACTION_ABORTABLE answering an abort is "
         "fatal); every coordinator transition sets previousProducerId (KAFKA-15370 [1/N], PR 17687)"),
        "kafka-shipped", "kafka-shipped", **_4X, expiry_keeps_group_with_open_txns=True, client_transitions="4.1"),
    "kafka-4.0.1": _entry(
        "kafka-4.0.1", "4.0.1", "4.0.1",
        ("released 4.0.1: 4.0.0 with KAFKA-19367's 4.0 cherry-picks (PRs 19958, 19991: c6b44b5d66, c8b8adf3c1): a TV2 "
         "fence-abort bumps once and a failed one leaves the metadata as it was (no hasFailedEpochFence); not "
         "KAFKA-19690 (its 4.0 PR 20607 is after the tag)"),
        "kafka-shipped", "kafka-shipped", **_4X, expiry_keeps_group_with_open_txns=True, client_transitions="4.0"),
    "kafka-4.0.0": _entry(
        "kafka-4.0.0", "4.0.0", "4.0.0",
        ("released 4.0.0: transaction version 2 (KIP-890 part 2; EndTxn checked by the request's transaction version, "
         "KafkaApis: TransactionVersion.transactionVersionForEndTxn, KAFKA-14563), a TV2 CompleteX keeps "
         "lastProducerEpoch (TransactionMetadata.prepareComplete), a fence at Short.MaxValue throws "
         "(prepareFenceProducerEpoch), a TV2 fence-abort installs the fenced epoch before its own bump and a failed "
         "one sets hasFailedEpochFence (before KAFKA-19367)"),
        "kafka-shipped", "kafka-shipped", **_4X, client_transitions="4.0"),
    "kafka-2024-10": _entry(
        "kafka-2024-10", SNAPSHOT_2024_10, SNAPSHOT_2024_10,
        ("the apache/kafka snapshot 1eb7644 (2024-10-25, trunk after the 3.9 branch cut, before 4.0) the vectors "
         "were read from: KIP-890 part 2 partly merged (EndTxnRequest.json v5, TV1/TV2 chosen by the metadata's "
         "clientTransactionVersion)"),
        "kafka-shipped", "kafka-shipped", end_txn="snapshot-2024-10", tv2_last_epoch="current",
        down_convert_fenced=True, max_txn_timeout_ms=900000, txn_offset_commit="current", 
        client_feature_check="2024-10", idempotence_config="3.1.1"),
    "kafka-3.8-3.9": _entry(
        "kafka-3.8-3.9", "3.8.0", "3.9.0",
        ("released 3.8.0 .. 3.9.x: KIP-890 part 1 verification, and the coordinator answers a verification of a "
         "partition outside the transaction with TRANSACTION_ABORTABLE (KAFKA-16314 2e8d69b78ca, first tag 3.8.0; "
         "AddPartitionsToTxnManager down-converts it to INVALID_TXN_STATE for older produce requests); no "
         "transaction version 2 (3.9.0-rc3 EndTxnRequest.json stops at v4). Was kafka-2.7-3.9. 3.9 releases "
         "after September 2025 also have KAFKA-19690 (PR 20577, an epoch check before the verification guard: "
         "``stale_epoch_before_verification``), which this profile leaves off"),
        "kafka-shipped", "kafka-shipped", **_TV1, down_convert_fenced=True, txn_offset_commit="current", idempotence_config="3.1.1"),
    "kafka-3.7": _entry(
        "kafka-3.7", "3.7.0", "3.7.1",
        ("released 3.7.0 .. 3.7.1: KIP-890 part 1 for produce and, since KAFKA-15449 (b6c78554753, first tag 3.7.0), "
         "for TxnOffsetCommit's __consumer_offsets write; a partition outside the transaction is answered "
         "INVALID_TXN_STATE (3.7.0 TransactionCoordinator.handleVerifyPartitionsInTransaction)"),
        "kafka-shipped", "kafka-shipped", **_TV1, down_convert_fenced=True, txn_offset_commit="current",
        verification_abortable=False, txn_offset_commit_any_retriable=False,
        offset_delete_pending=False, offsets_deleted_with_topic=False, idempotence_config="3.1.1",
        produce_pid_check="producer-id", write_txn_markers_alter_cluster=False),
    "kafka-3.6": _entry(
        "kafka-3.6", "3.6.0", "3.6.2",
        ("released 3.6.0 .. 3.6.2: KIP-890 part 1 verification of produce (3.6.0 ReplicaManager / "
         "AddPartitionsToTxnManager, transaction.partition.verification.enable); TxnOffsetCommit is not verified "
         "(3.6.2 GroupCoordinator has no verificationGuard); INVALID_TXN_STATE outside the transaction"),
        "kafka-shipped", "kafka-shipped", **_TV1, down_convert_fenced=True, txn_offset_commit="current",
        verification_abortable=False, txn_offset_commit_any_retriable=False,
        offset_delete_pending=False, offsets_deleted_with_topic=False, idempotence_config="3.1.1",
        produce_pid_check="producer-id", write_txn_markers_alter_cluster=False),
    "kafka-3.3-3.5": _entry(
        "kafka-3.3-3.5", "3.3.0", "3.5.2",
        ("released 3.3.0 .. 3.5.x: no partition verification (KIP-890 part 1 was reverted on the 3.5 branch, "
         "928070e3206; 3.5.2 ReplicaManager has no verification, although AddPartitionsToTxn v4 exists); "
         "TxnOffsetCommit checked by validateOffsetCommit with the Empty-group shortcut (KAFKA-14201, 3.3.0)"),
        "kafka-shipped", "kafka-shipped", **_TV1, down_convert_fenced=True, txn_offset_commit="current",
        verification_abortable=False, txn_offset_commit_any_retriable=False, offset_delete_pending=False, offsets_deleted_with_topic=False,
        txn_offset_commit_handler="2.7", client_transitions="2.5", client_auth_init_abortable=False, idempotence_config="3.1.1", produce_pid_check="none", write_txn_markers_alter_cluster=False),
    "kafka-3.1.1-3.2": _entry(
        "kafka-3.1.1-3.2", "3.1.1", "3.2.3",
        ("released 3.1.1 .. 3.2.x: as 3.3-3.5, but validateOffsetCommit (5dae3648abd, 3.0.0) has no Empty-group "
         "shortcut: a TxnOffsetCommit with generation < 0 and a member id on an Empty group is UNKNOWN_MEMBER_ID; "
         "the client has KAFKA-13412 (df2236d73bc, first tag 3.2.0; cde0046d15a on the 3.1 branch, first tag 3.1.1): "
         "a timed-out transactional call is retried through pendingTransition. Was kafka-3.0-3.2 with these switches"),
        "kafka-shipped", "kafka-shipped", **_TV1, down_convert_fenced=True, txn_offset_commit="3.0",
        verification_abortable=False, txn_offset_commit_any_retriable=False, offset_delete_pending=False, offsets_deleted_with_topic=False,
        txn_offset_commit_handler="2.7", client_transitions="2.5", client_auth_init_abortable=False, idempotence_config="3.1.1", produce_pid_check="none", write_txn_markers_alter_cluster=False),
    "kafka-3.0-3.1.0": _entry(
        "kafka-3.0-3.1.0", "3.0.0", "3.1.0",
        ("released 3.0.0 .. 3.1.0: as 3.1.1-3.2 without KAFKA-13412 (3.0.2 and 3.1.0 TransactionManager: "
         "pendingResult handed back only in the retried call's target state, an invalid transition and "
         "sendOffsetsToTransaction outside a transaction throw KafkaException, failIfNotReadyForSend wraps every "
         "error in a KafkaException)"),
        "kafka-shipped", "kafka-shipped", **_TV1, down_convert_fenced=True, txn_offset_commit="3.0",
        verification_abortable=False, txn_offset_commit_any_retriable=False, offset_delete_pending=False, offsets_deleted_with_topic=False,
        txn_offset_commit_handler="2.7", client_transitions="2.5", client_auth_init_abortable=False, client_retry_safe_calls=False, idempotence_config="unread", produce_pid_check="none", write_txn_markers_alter_cluster=False),
    "kafka-2.7-2.8": _entry(
        "kafka-2.7-2.8", "2.7.0", "2.8.2",
        ("released 2.7.0 .. 2.8.x: KIP-588 (PRODUCER_FENCED, down-converted to INVALID_PRODUCER_EPOCH for "
         "InitProducerId < v4 and EndTxn / AddPartitionsToTxn / AddOffsetsToTxn < v2: 2.7.0 KafkaApis); "
         "TxnOffsetCommit checked by 2.8.2's doTxnCommitOffsets (the 2.5 rules)"),
        "kafka-shipped", "kafka-shipped", **_TV1, down_convert_fenced=True, txn_offset_commit="2.5",
        verification_abortable=False, txn_offset_commit_any_retriable=False, offset_delete_pending=False, offsets_deleted_with_topic=False,
        txn_offset_commit_handler="2.7", client_transitions="2.5", client_auth_init_abortable=False, client_retry_safe_calls=False,
        txn_offset_commit_group_metadata="config", client_produce_exception="message", idempotence_config="unread", produce_pid_check="none",
        group_load_epoch_checked=False, leave_group="2.4", write_txn_markers_alter_cluster=False),
    "kafka-2.6": _entry(
        "kafka-2.6", "2.6.0", "2.6.3",
        ("released 2.6.0 .. 2.6.3: KAFKA-9600 (a client's EndTxn needs the exact epoch) and KAFKA-9666 "
         "(hasFailedEpochFence) are in 2.6.0's TransactionCoordinator / TransactionMetadata; every fence is "
         "INVALID_PRODUCER_EPOCH (2.6.3's Errors has no code 90)"),
        "kafka-shipped", "kafka-shipped", **_TV1, **_BEFORE_2_7_FENCING, txn_offset_commit="2.5",
        verification_abortable=False, txn_offset_commit_any_retriable=False, offset_delete_pending=False, offsets_deleted_with_topic=False,
        txn_offset_commit_handler="2.5", client_transitions="2.5", client_auth_init_abortable=False, client_retry_safe_calls=False,
        client_abort_exception="KafkaException", txn_offset_commit_group_metadata="config", client_produce_exception="code", idempotence_config="unread", produce_pid_check="none",
        group_load_epoch_checked=False, leave_group="2.4", write_txn_markers_alter_cluster=False),
    "kafka-2.5": _entry(
        "kafka-2.5", "2.5.0", "2.5.1",
        ("released 2.5.0 .. 2.5.1: KIP-360 and KIP-447 (2.5.0 messages); endTransaction refuses only a lower "
         "epoch, a fence-abort records the old epoch as lastProducerEpoch, and a failed fence bumps again at the "
         "next fence (2.5.1 TransactionCoordinator l.369-385, TransactionMetadata.prepareFenceProducerEpoch)"),
        "kafka-shipped", "kafka-shipped", **_TV1, **_BEFORE_2_7_FENCING, txn_offset_commit="2.5",
        end_txn_exact_epoch=False, failed_fence_keeps_epoch=False, fence_keeps_last_epoch=True,
        verification_abortable=False, txn_offset_commit_any_retriable=False, offset_delete_pending=False, offsets_deleted_with_topic=False,
        txn_offset_commit_handler="2.5", client_transitions="2.5", client_auth_init_abortable=False, client_retry_safe_calls=False,
        client_abort_exception="KafkaException", txn_offset_commit_group_metadata="unchecked",
        client_produce_exception="code", idempotence_config="unread", produce_pid_check="none",
        group_load_epoch_checked=False, leave_group="2.4", write_txn_markers_alter_cluster=False),
    "kafka-2.4.1": _entry(
        "kafka-2.4.1", "2.4.1", "2.4.1",
        ("released 2.4.1: the 2.4 broker (KAFKA-7190: producer state kept when the log start offset moves; an "
         "unknown producer's non-zero sequence still UNKNOWN_PRODUCER_ID) with KAFKA-9144 (b13a7ff7077: markers "
         "set the producer's lastTimestamp); the pre-KIP-360 coordinator and client (InitProducerId v0-2)"),
        "broker-2.4", "pre-kip360", **_BEFORE_2_5_COORDINATOR),
    "kafka-2.4.0": _entry(
        "kafka-2.4.0", "2.4.0", "2.4.0",
        ("released 2.4.0: as 2.4.1 without KAFKA-9144 (a marker leaves lastTimestamp at the last cached data "
         "batch's, NO_TIMESTAMP once its new epoch cleared the cache)"),
        "broker-2.4", "pre-kip360", **_BEFORE_2_5_COORDINATOR, marker_sets_producer_timestamp=False,
        txn_reload_replaces=False),
    "kafka-2.1-2.3": _entry(
        "kafka-2.1-2.3", "2.1.0", "2.3.1",
        ("released 2.1.0 .. 2.3.1: before KAFKA-7190 (a producer whose last batch falls below the log start offset "
         "is evicted: 2.3.1 ProducerStateManager.truncateHead / isProducerRetained), KIP-360, KIP-447 and "
         "KAFKA-9144; the coordinator as 2.4 (TransactionCoordinator 2.0.0 .. 2.4.1 differ in no rule); the classic "
         "group coordinator's offset retention is KIP-211's (KAFKA-4682, 2.1.0). With kafka-2.0.1 was kafka-2.0.1-2.3"),
        "broker-2.0-2.3", "pre-kip360", **_BEFORE_2_5_COORDINATOR,
        marker_sets_producer_timestamp=False, txn_reload_replaces=False),
    "kafka-2.0.1": _entry(
        "kafka-2.0.1", "2.0.1", "2.0.1",
        ("released 2.0.1: as 2.1-2.3, but each committed offset expires at its own expire timestamp (commit "
         "timestamp + offsets.retention.ms) whatever the group's state: before KIP-211 (KAFKA-4682 418a91b5d4e, first "
         "tag 2.1.0). Was kafka-2.0.1-2.3, which stood for 2.0.1 .. 2.3.1 with 2.0.1's features (2.0.0 lacks "
         "KAFKA-7296: ``kafka-2.0.0``)"),
        "broker-2.0-2.3", "pre-kip360", **_BEFORE_2_5_COORDINATOR,
        marker_sets_producer_timestamp=False, txn_reload_replaces=False, classic_offset_retention="expire-timestamp"),
    "kafka-2.0.0": _entry(
        "kafka-2.0.0", "2.0.0", "2.0.0",
        ("released 2.0.0: as 2.0.1, but TxnOffsetCommitHandler does not name COORDINATOR_LOAD_IN_PROGRESS (an "
         "unexpected, fatal error; KAFKA-7296 retries it from 2.0.1)"),
        "broker-2.0-2.3", "pre-kip360", **{**_BEFORE_2_5_COORDINATOR, "txn_offset_commit_handler": "2.0.0"},
        marker_sets_producer_timestamp=False, txn_reload_replaces=False, empty_control_batch_ok=False,
        classic_offset_retention="expire-timestamp"),
}

#: old profile names -> the profile that replaces them: kafka-2.7-3.9 had exactly kafka-3.8-3.9's switches (it
#: stood for 2.7 .. 3.9 with 3.8's answers); kafka-2.0-2.4 had the 2.0-2.3 broker, and kafka-2.0-2.3 now also lacks
#: KAFKA-9144 and KAFKA-9666 as those versions did; kafka-2.0-2.3 stood for 2.0.0 .. 2.3.1 with 2.0.1's
#: TxnOffsetCommitHandler (fid16); kafka-3.0-3.2 had exactly kafka-3.1.1-3.2's switches (it stood for 3.0.0 .. 3.2.3
#: with KAFKA-13412's client, which 3.0.x and 3.1.0 lack: kafka-3.0-3.1.0); kafka-2.0.1-2.3 had exactly kafka-2.0.1's
#: switches (it stood for 2.0.1 .. 2.3.1 with 2.0.1's features; KIP-211's offset retention, 2.1.0, split it: conf29a)
PROFILE_ALIASES: dict[str, str] = {"kafka-2.7-3.9": "kafka-3.8-3.9", "kafka-2.0-2.4": "kafka-2.0.1",
                                   "kafka-2.0-2.3": "kafka-2.0.1", "kafka-3.0-3.2": "kafka-3.1.1-3.2",
                                   "kafka-2.0.1-2.3": "kafka-2.0.1"}

#: profile name (and alias) -> (doc, Protocol); the newest first
PROFILES: dict[str, tuple[str, Protocol]] = {
    **{name: (p.doc, p.protocol) for name, p in PROFILE_TABLE.items()},
    **{old: (f"alias of {new}: {PROFILE_TABLE[new].doc}", PROFILE_TABLE[new].protocol)
       for old, new in PROFILE_ALIASES.items()},
}

DEFAULT_PROFILE = "kafka-2024-10"

#: known commits of apache/kafka -> profile (a vector file names the commit its tests were read at)
COMMIT_PROFILES: dict[str, str] = {
    "1eb7644349cb07139d6a3c1ad1986979647cac99": "kafka-2024-10",
    # the stored trunk TransactionMetadataTest.java (transaction-coordinator module) session 17 read: its
    # testFenceProducerNotAllowedIfItWouldOverflow keeps the epoch, which is KAFKA-20090 (PR 21469, February 2026)
    "6d535d360a78d475cabc39a83940a470400cee0f": "kafka-later-trunk",
    # the 4.x release tags (``git rev-parse TAG^{commit}`` in the aiven/inkless mirror)
    "985bc99521dd22bbf620591b8db8613c54f596b2": "kafka-4.0.0",
    "b31ce61fd68c51d1b9b964b09874148f14b75964": "kafka-4.0.1",
    "13f70256db3c994c590e5d262a7cc50b9e973204": "kafka-4.1.0",
    "be816b82d25370ceac697ccf7c88cea873e9b4e3": "kafka-4.1.1",
    "6eef66363478d2946fbc7d8f93c863246f7c14d5": "kafka-4.2",
}

#: for an unknown trunk commit, its date decides: the first profile whose start is not after it. A start is
#: the day the previous release branch was cut from trunk (``git merge-base <branch> 1eb7644``), so a trunk
#: commit of that day or later went into the profile's first release
_DATE_PROFILES: tuple[tuple[str, str], ...] = (
    # the 4.x branch cuts: 4.0 2024-12-16 (merge-base of 4.0.0 and 4.1.0), 4.1 2025-06-10 (of 4.1.0 and 4.2.0-rc1),
    # 4.2 2025-11-21 (of 4.2.0-rc1 and the mirror's main); trunk commits between the 3.9 and 4.0 cuts keep the
    # 2024-10 snapshot's profile (4.0's development trunk, not 4.0.0, which its tag's commit picks)
    ("2025-11-21", "kafka-later-trunk"), ("2025-06-10", "kafka-4.2"), ("2024-12-16", "kafka-4.1.0"),
    ("2024-07-30", "kafka-2024-10"), ("2023-12-12", "kafka-3.8-3.9"),
    ("2023-08-20", "kafka-3.7"), ("2023-04-14", "kafka-3.6"),
    ("2022-03-21", "kafka-3.3-3.5"), ("2021-10-30", "kafka-3.1.1-3.2"), ("2021-02-06", "kafka-3.0-3.1.0"),
    ("2020-05-28", "kafka-2.7-2.8"),
    ("2020-01-31", "kafka-2.6"), ("2019-10-07", "kafka-2.5"), ("2019-05-20", "kafka-2.4.0"),
    # the 2.0 branch cut (merge-base of 2.0.0 and 2.1.0): later trunk commits went into 2.1.0, which has
    # KAFKA-7296 (trunk commits between the cut and 2018-08-16 lacked it: the date cannot tell them apart) and KIP-211
    ("2018-06-06", "kafka-2.1-2.3"), ("2018-01-31", "kafka-2.0.0"),
)


def profile_for(commit: str | None, commit_date: str | None) -> str | None:
    """The profile matching a Kafka commit (or its ISO date); None when neither says."""
    if commit and commit in COMMIT_PROFILES:
        return COMMIT_PROFILES[commit]
    if commit_date:
        for start, name in _DATE_PROFILES:
            if commit_date >= start:
                return name
    return None


def profile_for_tag(tag: str) -> str | None:
    """The profile standing for an apache/kafka release tag ('4.1.0', '4.2.0-rc1'); None for another name or a
    version no profile covers."""
    try:
        at = version(tag)
    except ValueError:
        return None
    found = [name for name, p in PROFILE_TABLE.items() if p.first <= at <= p.last]
    return found[0] if len(found) == 1 else None


def protocol(name: str) -> Protocol:
    if name not in PROFILES:
        raise KeyError(f"unknown variant {name!r}; one of {', '.join(PROFILES)}")
    return PROFILES[name][1]


def with_eos(p: Protocol, **changes: object) -> Protocol:
    """``p`` with kafka.eos decisions changed (``model.protocol.Protocol.with_``): a profile's what-if."""
    return p._replace(eos=p.eos.with_(**changes))
