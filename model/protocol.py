# ruff: noqa: RUF009 - _decision is dataclasses.field with the doc and reference as metadata
"""One typed protocol switch set for every Kafka machine: each decision declared once, with its doc
and its KIP or KAFKA reference, and named variants (Kafka releases, KIPs as designed and as
shipped, counterfactuals) as ``Protocol`` values that every configuration can take.

A field of ``Protocol`` is one protocol decision. Multi-way decisions are ``str`` Enums (the
value is what a spec writes), yes/no decisions are bools; each field's metadata carries ``doc``
and ``ref``. ``Protocol`` is frozen and hashable, so a machine can hold it and memoise on it.

A machine declares which decisions it models and which values it can honour (``Support``). A
variant that sets a modelled decision to a value the machine cannot honour is refused with one
line (``refusal``); a decision the machine does not model is ignored (a Kafka release sets every
decision, and the group-coordinator ones mean nothing to a machine without a group).

Today's machines keep their own string switches (``model/variants.py``, ``eos_pipeline``);
``legacy_switches`` derives them from a ``Protocol`` and ``LEGACY_ALIASES`` maps each of today's
variant names to the ``Protocol`` value that reproduces it exactly, so every old name keeps
resolving. Version claims follow ``/work/shared/reference/fidelity-audit-2026-11.md``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from enum import Enum
from typing import Any

from eoscheck.checker.registry import Switch, SwitchValue, Variant


def _decision(default: Any, doc: str, ref: str) -> Any:
    return field(default=default, metadata={"doc": doc, "ref": ref})


class ClientVersion(str, Enum):
    """How the producer client reacts to sequence errors."""

    V0_11 = "0.11"
    PRE_KIP360 = "pre-kip360"
    KIP360 = "kip360"


class EpochBumpMode(str, Enum):
    """What the KIP-360 client's epoch bump does to batches that already carry a sequence."""

    RESEQUENCE_INFLIGHT = "resequence_inflight"
    FAIL_INFLIGHT = "fail_inflight"


class UnknownProducerMode(str, Enum):
    """The leader's answer to a producer it has no state for, sending a sequence other than 0."""

    OUT_OF_ORDER = "out_of_order"
    UNKNOWN_PRODUCER_ID = "unknown_producer_id"
    ACCEPT = "accept"


class InitProducerIdMode(str, Enum):
    """The transaction coordinator's InitProducerId."""

    PRE_KIP360 = "pre-kip360"
    KIP360_DESIGNED = "kip360-designed"
    KIP360_SHIPPED = "kip360-shipped"


class TransactionVersion(str, Enum):
    """The transaction protocol a transaction runs with (KIP-890 part 2's transaction.version)."""

    TV1 = "tv1"
    TV2 = "tv2"


class PreviousProducerIdUpdate(str, Enum):
    """Which completed coordinator transitions set previousProducerId := the producer id they start from."""

    SCALA = "scala"
    EVERY_TRANSITION = "every-transition"


class ClientTvChange(str, Enum):
    """Whether a transactional client switches its transaction version once, between two transactions."""

    NONE = "none"
    UPGRADE = "upgrade"
    DOWNGRADE = "downgrade"


class Tv2MarkerEpochCheck(str, Enum):
    """How a leader checks the producer epoch of a transaction-version-2 marker."""

    LENIENT = "lenient"
    STRICT = "strict"
    STRICT_RETRY = "strict-retry"


class Tv2PartitionAdd(str, Enum):
    """Who adds a data partition to a transaction-version-2 transaction, and when the leader skips it."""

    CLIENT = "client"
    LEADER = "leader"
    #: a counterfactual, in no Kafka snapshot: the leader's add with 3.x's epoch-blind ``hasOngoingTransaction``
    LEADER_EPOCH_BLIND = "leader-epoch-blind"


class TxnOffsetCommitCheck(str, Enum):
    """The group coordinator's checks of a TxnOffsetCommit (KIP-447's zombie fencing)."""

    PRE_KIP447 = "pre-kip447"
    V2_5 = "2.5"
    V3_0 = "3.0"
    CURRENT = "current"


class RequireStable(str, Enum):
    """When the consumer's OffsetFetch sets require_stable."""

    ALWAYS = "always"
    READ_COMMITTED = "read_committed"
    NEVER = "never"


class Deployment(str, Enum):
    """How an exactly-once application maps producers to input partitions (an application decision)."""

    PER_PARTITION = "per-partition"
    PER_THREAD = "per-thread"


@dataclass(frozen=True)
class Protocol:
    """Every protocol decision of the Kafka model; the defaults are Kafka 3.x as shipped (3.0-3.5)."""

    # --- the producer client ---------------------------------------------------------------------
    client_version: ClientVersion = _decision(
        ClientVersion.KIP360,
        "producer client: 0.11 (OutOfOrderSequence raised to the application), pre-kip360 (1.0-2.4: "
        "sequences restarted at 0 under the same epoch when the log start offset passed the last ack), "
        "kip360 (2.5+: local epoch bump; a transactional producer aborts and bumps)",
        "KIP-98; KIP-360 (2.5); fidelity audit C4/B2")
    client_epoch_bump: EpochBumpMode = _decision(
        EpochBumpMode.RESEQUENCE_INFLIGHT,
        "KIP-360 client's epoch bump: resequence_inflight (shipped: startSequencesAtBeginning) or "
        "fail_inflight (the KIP's text: a sequence never changes once assigned)",
        "KIP-360")
    client_epoch_bump_after_abort: bool = _decision(
        True,
        "after aborting a transaction that failed with an abortable error, the transactional client "
        "bumps its epoch with InitProducerId(producer id, epoch) (2.5-3.9; a TV2 client does not)",
        "KIP-360 (2.5); KAFKA-17898 (4.0 TV2 client)")
    invalid_producer_epoch_abortable: bool = _decision(
        True,
        "a produce refused with INVALID_PRODUCER_EPOCH is an abortable error for the transactional client "
        "(InvalidProducerEpochException, with an epoch bump after the abort where the client bumps; before, "
        "the producer was fenced: False for 2.6 and earlier, variant kafka-2.6)",
        "KIP-588 (2.7); fidelity audit C6")
    client_pid_mapping_fatal: bool = _decision(
        False,
        "an INVALID_PRODUCER_ID_MAPPING answer to AddPartitionsToTxn, AddOffsetsToTxn or EndTxn is fatal for the "
        "transactional client (4.0+); False: the 2.5-3.9 client's abortableErrorIfPossible (abortable, and the "
        "abort skips EndTxn and bumps with InitProducerId(producer id, epoch), where the coordinator can bump)",
        "KIP-360 (2.5); KAFKA-18019 (4.0, PR 17822)")
    client_produce_pid_mapping_fatal: bool = _decision(
        False,
        "a batch that fails with INVALID_PRODUCER_ID_MAPPING (the coordinator's answer to a leader's verification or "
        "TV2 add, which AddPartitionsToTxnManager and ReplicaManager pass on unchanged) is fatal for the transactional "
        "client: maybeTransitionToErrorState lists InvalidPidMappingException with the fatal exceptions "
        "(TransactionManager.java:724-729 at 4.0.0); False (2.5-3.9, 3.9.1's :655-666): an abortable error whose "
        "abort skips EndTxn and bumps with InitProducerId(producer id, epoch) (:339-342). In kafka.eos a live "
        "producer's batch meets it only where the leader adds partitions (tv2_partition_add leader modes) and the "
        "coordinator's producer id moved under the producer (docs/kafka-model.md)",
        "KAFKA-14563 (PR 17698, 755adf8a56, first tag 4.0.0, not 3.9.1)")
    client_batch_error_wrapped_abortable: bool = _decision(
        False,
        "a transactional batch that fails for good with a retriable error or INVALID_TXN_STATE leaves a "
        "TransactionAbortableException (its cause the error) as the abortable error the next calls throw "
        "(maybeTransitionToErrorState, TransactionManager.java:776-781 at 4.1.0); False (to 4.0.1): the error's own "
        "exception. The transaction is abortable and bumps alike either way, so kafka.eos, whose producer keeps no "
        "exception class, cannot tell the two apart; the conformance interface checks the exception",
        "KAFKA-19176 with KAFKA-19177 (PR 19522, 8c71ab03b5, first tag 4.1.0, not 4.0.1)")
    client_abort_abortable_fatal: bool = _decision(
        False,
        "TRANSACTION_ABORTABLE answering EndTxn(ABORT) is a fatal KafkaException('Failed to abort transaction'), so "
        "an application does not retry the abort forever; it stays abortable answering a commit "
        "(EndTxnHandler, TransactionManager.java:1772-1776 at 4.1.0); False (to 4.0.1): abortable for both. kafka.eos's "
        "coordinator never answers EndTxn with TRANSACTION_ABORTABLE, so only the conformance interface reaches it",
        "KAFKA-19250 (PR 19656, b1ea280ab1, first tag 4.1.0, not 4.0.1)")
    client_transaction_abortable: bool = _decision(
        False,
        "the producer client knows TRANSACTION_ABORTABLE: it sends Produce v11+ and TxnOffsetCommit v4+ (3.8.0+), so "
        "a 3.8+ broker passes a failed verification's TRANSACTION_ABORTABLE on; to an older client "
        "(Produce <= v10) AddPartitionsToTxnManager answers INVALID_TXN_STATE instead. Either is abortable for "
        "the client (Sender.failBatch -> TransactionManager.maybeTransitionToErrorState)",
        "KAFKA-16314 (3.8.0, KIP-890)")
    client_txn_offset_commit_any_retriable: bool = _decision(
        False,
        "TxnOffsetCommitHandler retries every retriable partition error (CONCURRENT_TRANSACTIONS from a "
        "verification of a transaction still completing, ...: 3.8.0+); False (2.5.0-3.7.1): it retries only "
        "the coordinator errors, UNKNOWN_TOPIC_OR_PARTITION and COORDINATOR_LOAD_IN_PROGRESS, and an error it "
        "does not name is fatal (KafkaException 'Unexpected error in TxnOffsetCommitResponse')",
        "PR 15266 (33a4709490f, first tag 3.8.0); fid15")
    client_send_error_aborts: bool = _decision(
        True,
        "a send() that fails in the application thread (a record larger than max.request.size, a serialization "
        "error: KafkaProducer.doSend catches the ApiException and returns a failed future) puts the transactional "
        "client in an abortable error, so commitTransaction fails (3.2.0+, with the epoch bump after the abort "
        "where the client bumps); False (0.11-3.1): only the future reports it, the transaction goes on without "
        "the record and commitTransaction succeeds. Takes effect with the bound send_errors",
        "KAFKA-9279 (3.2.0, 000ba031c3d)")
    client_tv_change: ClientTvChange = _decision(
        ClientTvChange.NONE,
        "a transactional client switches its transaction version once between two transactions: none, "
        "upgrade (TV0 -> TV2, from transaction_version=tv1) or downgrade (TV2 -> TV0, from tv2); with a change "
        "the broker runs TV2, each EndTxn is validated by its own version and each transaction records it",
        "KIP-890 part 2 (4.0, rolling client upgrades)")
    # --- the partition leader ----------------------------------------------------------------------
    broker_unknown_producer: UnknownProducerMode = _decision(
        UnknownProducerMode.ACCEPT,
        "a sequence other than 0 from a producer without state: out_of_order (0.11), "
        "unknown_producer_id with the log start offset (1.0-2.4), accept (2.5+)",
        "KIP-98; design 'spurious OutOfOrderSequence' (1.0); KIP-360 (2.5)")
    broker_retain_producer_state: bool = _decision(
        True,
        "moving the log start offset keeps the producer state (before: producers whose last batch fell "
        "below it were evicted)",
        "KAFKA-7190 (2.4.0, cherry-picked; KIP-360 'prolonged retention'); fidelity audit A2")
    broker_batch_cache: int = _decision(
        5, "batches cached per producer for duplicate detection (NUM_BATCHES_TO_RETAIN; 1 in 0.11)",
        "KAFKA-5494 (1.0)")
    broker_duplicate_sequence_error: bool = _decision(
        False,
        "a same-epoch batch older than every cached batch gets DUPLICATE_SEQUENCE_NUMBER (1.0.0-1.0.1) "
        "instead of OUT_OF_ORDER_SEQUENCE_NUMBER",
        "KAFKA-6683 (removed in 1.0.2 and 1.1.0); fidelity audit A3")
    partition_verification: bool = _decision(
        False,
        "the leader verifies with the transaction coordinator that a producer's first transactional batch "
        "on the partition belongs to its ongoing transaction (transaction.partition.verification.enable); "
        "kafka.eos verifies TxnOffsetCommit's offsets write too, which is 3.7.0's (KAFKA-15449)",
        "KIP-890 part 1 (3.6; offsets 3.7)")
    stale_epoch_before_verification: bool = _decision(
        False,
        "a client's transactional batch with no transaction ongoing for its producer on the partition and no "
        "verification guard, whose epoch is below the producer's entry, is answered INVALID_PRODUCER_EPOCH "
        "(recoverable) instead of INVALID_TXN_STATE (which Kafka Streams takes as fatal): 4.1.1 and 4.2.0-rc1 "
        "(not 4.0.1 or 4.1.0; on the 3.9 branch after 3.9.1, 3.9.2-rc0) and trunk; reached in kafka.eos only with verification_steps, where a "
        "marker can land between the leader's check and its append",
        "KAFKA-19690 (PRs 20534, 20577, 20607, 20618)")
    verification_ongoing_at_epoch: bool = _decision(
        False,
        "the leader's hasOngoingTransaction asks for a transaction open at the batch's epoch (4.0.0+): a batch below "
        "the epoch of its producer's open transaction starts a verification (its own entry at its stale epoch and "
        "sequence when the producer had none), and the append's guard check does not take it for part of that "
        "transaction; False (3.6-3.9): a transaction open at any epoch skips the verification. The TV2 leader-add "
        "class decides this by tv2_partition_add (leader vs the leader-epoch-blind counterfactual)",
        "KAFKA-14563 (755adf8a56, December 2024, first tag 4.0.0, not 3.9.1)")
    verification_rejects_lower_epoch: bool = _decision(
        False,
        "the leader answers a transactional batch whose epoch is below its producer's entry INVALID_PRODUCER_EPOCH "
        "when it starts the verification (UnifiedLog.maybeStartTransactionVerification), before any verification "
        "entry is created or updated and before anything is sent to the coordinator (4.1.0+); False (3.6.0-4.0.1): "
        "the batch starts its verification (a TV2 leader's add too), creating an entry at its stale epoch when the "
        "producer had none, and the coordinator's PRODUCER_FENCED, or the append's epoch check, refuses it",
        "KAFKA-18042 (PR 19844, cc25d217da, first tag 4.1.0, not 4.0.1)")
    tv2_new_producer_sequence_zero: bool = _decision(
        False,
        "a client's batch appended under a verification entry of a TV2 client (VerificationStateEntry."
        "supportsEpochBump) for a producer with no batch in the leader's producer state must start at sequence 0, "
        "else OUT_OF_ORDER_SEQUENCE_NUMBER (ProducerAppendInfo.checkSequence's first check, 4.1.0+); False "
        "(3.6.0-4.0.1): such a producer is unknown to the leader and any sequence is accepted (KIP-360's "
        "broker_unknown_producer=accept). A TV1 entry keeps the old rule",
        "KAFKA-18202 (PR 19902, 3479ce793b, first tag 4.1.0, not 4.0.1)")
    verification_guard: bool = _decision(
        True,
        "with partition_verification and verification_steps, the append checks the VerificationGuard its "
        "request was handed (KIP-890 part 1 as shipped, 3.6+); False is a counterfactual: the append trusts the "
        "coordinator's answer whatever the leader wrote since (the ABA race UnifiedLog's comment describes)",
        "KIP-890 part 1 (3.6)")
    marker_sets_producer_timestamp: bool = _decision(
        True,
        "a written COMMIT/ABORT marker sets its producer's lastTimestamp, and a producer-state snapshot keeps "
        "it (False, 0.11.0.0-2.4.0: lastTimestamp is the last cached data batch's, NO_TIMESTAMP once a marker "
        "with a new epoch cleared the cache, so such an entry counts as expired at once, also when a "
        "replica loads it from a snapshot)",
        "KAFKA-9144 (2.4.1, 2.5.0)")
    marker_coordinator_epoch_check: bool = _decision(
        True,
        "leaders refuse a marker with an older coordinator epoch (TRANSACTION_COORDINATOR_FENCED); False is "
        "a counterfactual",
        "KIP-98 (0.11)")
    # --- the transaction coordinator ---------------------------------------------------------------
    verification_abortable: bool = _decision(
        False,
        "with partition_verification, the coordinator answers a verification of a partition outside the "
        "transaction with TRANSACTION_ABORTABLE (3.8.0+); False: INVALID_TXN_STATE (3.6-3.7)",
        "KAFKA-16314 (3.8.0)")
    init_producer_id: InitProducerIdMode = _decision(
        InitProducerIdMode.KIP360_SHIPPED,
        "InitProducerId: pre-kip360 (no producer id/epoch in the request), kip360-designed (the KIP's cases "
        "1a-2c), kip360-shipped (validPid, lastProducerEpoch, the exhaustion precondition)",
        "KIP-98; KIP-360 (2.5)")
    persist_last_epoch: bool = _decision(
        False,
        "the __transaction_state record carries LastProducerEpoch (the KIP's design; never written by Kafka "
        "before KAFKA-20357)",
        "KIP-360; KAFKA-20357 (trunk, 2026-04)")
    persist_prev_producer_id: bool = _decision(
        False,
        "the __transaction_state record carries PreviousProducerId (the KIP's design; later trunk with "
        "transaction.version >= 1)",
        "KIP-360; KIP-890 part 2")
    previous_producer_id_update: PreviousProducerIdUpdate = _decision(
        PreviousProducerIdUpdate.SCALA,
        "which completed transitions set previousProducerId: scala (2.5.0 .. 4.0.1: completeTransitionTo sets it "
        "only in InitProducerId's transition to Empty and a TV2 CompleteX) or every-transition (4.1.0+: "
        "prepareTransitionTo stamps the producer id it starts from on every transit and completeTransitionTo "
        "copies it, in the Scala TransactionMetadata of 4.1.x and the Java one of 4.2.0-rc1, KAFKA-18884)",
        "KAFKA-15370 [1/N] (PR 17687, trunk December 2024, first tag 4.1.0); fidelity audit B1")
    timeout_abort_bumps_epoch: bool = _decision(
        True,
        "the coordinator's timeout abort fences the producer with an epoch bump (False: 0.11.0.0-0.11.0.1)",
        "KAFKA-6119 (0.11.0.2); fidelity audit C1")
    failed_fence_keeps_epoch: bool = _decision(
        True,
        "a coordinator fence (transaction timeout, InitProducerId on an Ongoing transaction) whose PrepareAbort "
        "append failed is remembered (hasFailedEpochFence): the fenced epoch stays in memory and the next fence "
        "keeps it (2.6.0+); False (0.11-2.5.x): every fence bumps again, so repeated failures walk the epoch "
        "towards exhaustion",
        "KAFKA-9666 (2.6.0); review 21")
    transaction_version: TransactionVersion = _decision(
        TransactionVersion.TV1,
        "tv2: every EndTxn bumps the epoch, the client continues with the bumped epoch, EndTxn retries are "
        "recognised by the epoch one below, and an abort may start from Empty/CompleteX",
        "KIP-890 part 2 (4.0)")
    tv2_fence_double_bump: bool = _decision(
        True,
        "with tv2: the coordinator's fence-abort (transaction timeout, InitProducerId on Ongoing) bumps the "
        "epoch twice, the fence and the TV2 abort (4.0.0); False bumps once (4.0.1, 4.1.0+), "
        "so the fenced producer's EndTxn(ABORT) is a retry",
        "KAFKA-19367 (PR 19910, June 2025; 4.0 cherry-pick PRs 19958 and 19991, first released in 4.0.1; 4.1.0); fidelity audit B3")
    tv2_failed_fence_leaves_epoch: bool = _decision(
        False,
        "with tv2 (the server's transaction.version, which the coordinator's own aborts use): a fence-abort "
        "(transaction timeout, InitProducerId on Ongoing) whose PrepareAbort append fails leaves the metadata as "
        "it was, the epoch not bumped in memory and hasFailedEpochFence not set, so the producer's epoch stays "
        "current until a fence is written and the next fence bumps from the same epoch (4.0.1, 4.1.0+: "
        "endTransaction no longer installs the fenced epoch before the append, and its failure callback no longer "
        "sets the flag); False (4.0.0, the TV1 path of every version): the fenced epoch stays in memory with "
        "hasFailedEpochFence (failed_fence_keeps_epoch). Needs tv2_fence_double_bump=false: the second bump "
        "starts from the epoch installed in memory, which is the one a failed append leaves",
        "KAFKA-19367 (trunk: PR 19910, no in-memory epoch, and its follow-up PR 19976, no hasFailedEpochFence, "
        "June 2025, 4.1.0; 4.0 branch: PRs 19958 and 19991, first released in 4.0.1)")
    tv2_marker_epoch_check: Tv2MarkerEpochCheck = _decision(
        Tv2MarkerEpochCheck.LENIENT,
        "with tv2, a leader refuses a marker whose producer epoch is: lenient, below the stored epoch (4.0.0-4.1.1, "
        "as for tv1); strict, not above it (trunk November-December 2025, never released: a tv2 marker carries the bumped "
        "epoch, so one at the stored epoch is taken for the previous transaction's), which also refuses the "
        "coordinator's retry of a marker the leader already wrote; strict-retry, as strict but a marker at the "
        "stored epoch while the producer has no open transaction is a retry and succeeds (4.2.0-rc1: "
        "ProducerAppendInfo.checkProducerEpoch with the marker's transaction version)",
        "KAFKA-19446 (strict); KAFKA-19999 (strict-retry)")
    tv2_partition_add: Tv2PartitionAdd = _decision(
        Tv2PartitionAdd.CLIENT,
        "with tv2, how a data partition joins the transaction: client, the client's AddPartitionsToTxn before it "
        "produces (the model's abstraction of 4.0's implicit add; a produce to a transaction still completing waits "
        "for CONCURRENT_TRANSACTIONS to clear, as with the leader's epoch-aware check); leader, the TV2 client sends "
        "no AddPartitionsToTxn and the leader adds the partition with the coordinator before the append unless the "
        "producer has a transaction open there at the batch's epoch (hasOngoingTransaction(producerId, epoch), in "
        "the leader's check and the append's since KAFKA-14563's commit, December 6, 2024, so in every trunk with "
        "the leader's add and in 4.0.0); leader-epoch-blind, a counterfactual in no Kafka snapshot: as leader but "
        "with 3.x's hasOngoingTransaction(producerId), the add skipped when the producer has a transaction open "
        "there at any epoch, so a batch of the next transaction, sent after EndTxn answered and before the marker, "
        "joins the completing one (why the check must be epoch-aware)",
        "KIP-890 part 2; KAFKA-14563 (PR 17698, 4.0.0)")
    tv2_leader_concurrent_below_epoch: bool = _decision(
        False,
        "with tv2_partition_add=leader: hasOngoingTransaction throws ConcurrentTransactionsException when the "
        "producer has a transaction open on the partition at an epoch below the batch's, so the leader answers "
        "CONCURRENT_TRANSACTIONS before it adds the partition (NOT_ENOUGH_REPLICAS to the client, which retries), "
        "and the append's check refuses such a data batch with CONCURRENT_TRANSACTIONS (control batches skip that "
        "check). Trunk and 4.0 branch January 22 - February 3, 2025, never released: False before (the batch "
        "starts its add while the previous transaction completes) and after (4.0.0: KAFKA-18654 [1/2] reverted "
        "the early return and made a marker keep the next transaction's entry, tv2_marker_keeps_verification)",
        "KAFKA-18575 (PR 18604); reverted by KAFKA-18654 [1/2] (PR 18720, 4.0.0)")
    tv2_marker_keeps_verification: bool = _decision(
        False,
        "with tv2 and the leader's add (tv2_partition_add leader modes), the verification entry a TV2 batch's add "
        "creates records that its client supports the epoch bump, and a COMMIT/ABORT marker written at the "
        "entry's epoch keeps it (UnifiedLog.updateProducers' isV2NextTransactionStarted: the entry is the next "
        "transaction's, at the epoch the marker's EndTxn bumped to), so that batch's guard still matches when "
        "it is appended after the previous transaction completed (4.0.0 on); False: every marker clears the "
        "producer's entry (3.6-3.9, and the 4.0 trunk before February 3, 2025, never released), and a next "
        "transaction's batch whose add started before the previous transaction's marker is refused "
        "INVALID_TXN_STATE though the coordinator added its partition. Takes effect with verification_steps",
        "KAFKA-18654 [1/2] (PR 18720, 4.0.0)")
    tv2_upgrade_bumps_epoch: bool = _decision(
        True,
        "a client that upgrades to TV2 between two transactions (client_tv_change=upgrade) bumps its epoch with "
        "InitProducerId(producer id, epoch) after its last TV1 EndTxn, so its first TV2 batches cannot join the TV1 "
        "transaction still completing on a leader (4.0.0; False: trunk December 2024). Honoured where the leader "
        "adds partitions (tv2_partition_add leader modes): with the client's own AddPartitionsToTxn the model's "
        "upgrade keeps the epoch, as the add waits for the TV1 transaction to complete either way",
        "KIP-890 part 2; KAFKA-18227 (4.0.0)")
    tv2_end_txn_pending_first: bool = _decision(
        True,
        "with tv2, EndTxn answers CONCURRENT_TRANSACTIONS for a transaction still completing (PrepareX, CompleteX "
        "pending while the markers are written) before it checks the epoch, so an EndTxn at the epoch the previous "
        "EndTxn answered waits for that completion (4.0.0); False: the epoch first, and such an EndTxn (an abort "
        "right after a commit, with nothing added) is PRODUCER_FENCED, fatal for the client (trunk December 2024 - "
        "January 10, 2025, never released)",
        "KAFKA-18464 (PR 18467, 4.0.0)")
    tv2_end_txn_pending_before_producer_id: bool = _decision(
        True,
        "with tv2, EndTxn answers CONCURRENT_TRANSACTIONS for a transaction still completing before it checks the "
        "producer id, so an EndTxn under the next producer id a rotating EndTxn answered (the metadata holds it "
        "only in the pending CompleteX) waits for the completion (4.0.0 to trunk: endTransaction at the 4.0.0, "
        "4.0.1, 4.1.0 and 4.1.1 tags); False: the producer id first, and an abort sent under the new producer id "
        "while the rotation completes is INVALID_PRODUCER_ID_MAPPING, fatal for the 4.0 client (trunk before "
        "January 30, 2025, never released)",
        "KAFKA-18660 (PRs 18730, 18758: the endTransaction half of the reorder; 4.0.0)")
    tv2_rotation_answer_next_producer_id: bool = _decision(
        True,
        "with tv2, an EndTxn whose bump exhausts the epoch answers the next producer id at epoch 0, the pair the "
        "transaction completes to (4.0.0: newPreSendMetadata's); False: it answers the old producer id with the "
        "exhausted epoch, so the client's next request after the completion gets INVALID_PRODUCER_ID_MAPPING, fatal "
        "for the 4.0 client (trunk before January 30, 2025, never released)",
        "KAFKA-18660 (PRs 18730, 18758; 4.0.0)")
    tv2_late_commit_fenced: bool = _decision(
        False,
        "with tv2, an EndTxn(COMMIT) at the retry epoch (the stored epoch is the request's plus one, or the "
        "overflow retry) of a CompleteAbort transaction is answered PRODUCER_FENCED (fencing: Kafka Streams "
        "rejoins) instead of INVALID_TXN_STATE (fatal: the thread dies). Only a coordinator-side abort leaves a "
        "client's commit at that epoch: since KAFKA-19367's single bump (tv2_fence_double_bump off) the timed-out "
        "producer's late commit is such a 'retry'. False at every release tag up to 4.2.0-rc1; trunk after "
        "KAFKA-20785 (PR 23204, opened August 20, 2026)",
        "KAFKA-20785 (PR 23204)")
    add_partitions_pending_first: bool = _decision(
        False,
        "AddPartitionsToTxn / AddOffsetsToTxn answer CONCURRENT_TRANSACTIONS for a transaction still completing "
        "(PrepareX, CompleteX pending) before they check the producer id and epoch, so the first add under the "
        "producer id a TV2 rotation answered waits for the completion (4.0.0); False (0.11-3.9, 4.0 trunk before "
        "January 30, 2025): the producer id first, and that add is INVALID_PRODUCER_ID_MAPPING",
        "KAFKA-18660 (PRs 18730, 18758; 4.0.0)")
    rotation_markers_new_producer_id: bool = _decision(
        False,
        "counterfactual: a TV2 transaction whose epoch overflowed writes its markers under the new producer "
        "id at epoch 0 (KIP-890 writes them under the old producer id with the bumped epoch)",
        "KIP-890 part 2 (4.0)")
    # --- the group coordinator and the application -------------------------------------------------
    txn_offsets_completion_async: bool = _decision(
        True,
        "a COMMIT/ABORT marker written on __consumer_offsets has the group coordinator's completion of the "
        "producer's pending offsets only scheduled (onTransactionCompleted -> scheduleHandleTxnCompletion), and "
        "WriteTxnMarkers answers the transaction coordinator before it runs, so the producer's next transaction "
        "can have offsets pending when it does, and it completes them with the old marker's result (2.0.0-3.9.x; "
        "False: 0.11-1.1 complete in the marker's request, and 4.0.0 answers only once they are materialised). "
        "Takes effect with the bound delayed_offset_completions",
        "KAFKA-6917 (2.0.0, c53e274d312); KAFKA-17507 (4.0.0, PR 18168)")
    txn_offset_commit_check: TxnOffsetCommitCheck = _decision(
        TxnOffsetCommitCheck.CURRENT,
        "TxnOffsetCommit group fencing: none (pre-kip447, before 2.5), 2.5 (2.5.0-2.8.x), 3.0 (3.0.0-3.2.x), or "
        "current (3.3.0+: a generation < 0 on an Empty group is accepted whatever the member id)",
        "KIP-447 and KAFKA-9365 (2.5.0); 5dae3648abd (3.0.0); KAFKA-14201 (3.3.0)")
    require_stable: RequireStable = _decision(
        RequireStable.ALWAYS,
        "when OffsetFetch sets require_stable: always (the shipped consumer), read_committed (KIP text), "
        "never (before KIP-447)",
        "KIP-447 (2.5)")
    deployment: Deployment = _decision(
        Deployment.PER_THREAD,
        "one producer per input partition (static transactional id, Streams exactly_once) or one per "
        "instance/thread (exactly_once_v2)",
        "KIP-447 (Streams 2.6)")
    per_partition_group_metadata: bool = _decision(
        False,
        "with deployment=per-partition in a group: TxnOffsetCommit carries the member's generation and member "
        "id (an application passing consumer.groupMetadata() to a 2.5+ producer), so KIP-447's checks fence a "
        "zombie's commit; False: the group id only, as Streams exactly_once sends it (StreamsProducer "
        "downgrades the metadata for EOS v1; before 2.5 the API took only the group id)",
        "KIP-447 (2.5); StreamsProducer.commitTransaction (2.6+)")

    def with_(self, **changes: Any) -> Protocol:
        """A copy with ``changes`` (decision name -> value, enum or its spec string)."""
        return replace(self, **{k: _coerce(k, v) for k, v in changes.items()})

    def as_switches(self) -> dict[str, SwitchValue]:
        """The decisions as spec switch values (enum -> its string)."""
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}

    def consistency_error(self) -> str | None:
        """One line if the decisions contradict each other (no Kafka, KIP or counterfactual has them)."""
        if self.client_epoch_bump == EpochBumpMode.FAIL_INFLIGHT and self.client_version != ClientVersion.KIP360:
            return "client_epoch_bump=fail_inflight needs client_version=kip360 (only the KIP-360 client bumps)"
        if (self.transaction_version == TransactionVersion.TV2
                and self.init_producer_id == InitProducerIdMode.PRE_KIP360):
            return "transaction_version=tv2 needs a KIP-360 coordinator (init_producer_id is pre-kip360)"
        if self.transaction_version == TransactionVersion.TV2 and self.client_version != ClientVersion.KIP360:
            return "transaction_version=tv2 needs client_version=kip360"
        if self.client_tv_change != ClientTvChange.NONE and self.client_version != ClientVersion.KIP360:
            return "client_tv_change needs client_version=kip360 (a client that knows transaction versions)"
        if self.per_partition_group_metadata and self.client_version != ClientVersion.KIP360:
            return ("per_partition_group_metadata needs client_version=kip360 (sendOffsetsToTransaction takes "
                    "group metadata from 2.5 on)")
        every_tv2 = self.transaction_version == TransactionVersion.TV2 and self.client_tv_change == ClientTvChange.NONE
        upgrade = self.transaction_version == TransactionVersion.TV1 and self.client_tv_change == ClientTvChange.UPGRADE
        if self.tv2_partition_add != Tv2PartitionAdd.CLIENT and not (every_tv2 or upgrade):
            return (f"tv2_partition_add={self.tv2_partition_add.value} needs every producer a TV2 client "
                    "(transaction_version=tv2, client_tv_change=none) or upgrading to TV2 (transaction_version=tv1, "
                    "client_tv_change=upgrade)")
        if self.tv2_failed_fence_leaves_epoch and self.tv2_fence_double_bump:
            return ("tv2_failed_fence_leaves_epoch needs tv2_fence_double_bump=false (KAFKA-19367 removed both: the "
                    "double bump starts from the fenced epoch endTransaction installs in memory before the append, "
                    "which a failed append leaves there)")
        if self.tv2_leader_concurrent_below_epoch and self.tv2_partition_add != Tv2PartitionAdd.LEADER:
            return ("tv2_leader_concurrent_below_epoch needs tv2_partition_add=leader (KAFKA-18575 changed the "
                    "epoch-aware check of the leader's add)")
        if self.tv2_new_producer_sequence_zero and not self.tv2_marker_keeps_verification:
            return ("tv2_new_producer_sequence_zero needs tv2_marker_keeps_verification (KAFKA-18202 reads "
                    "VerificationStateEntry.supportsEpochBump, which KAFKA-18654 [1/2] added in 4.0.0)")
        if self.broker_batch_cache < 1:
            return "broker_batch_cache must be at least 1"
        return None


DECISIONS: tuple[str, ...] = tuple(f.name for f in fields(Protocol))


def _field(name: str) -> dataclasses.Field[Any]:
    for f in fields(Protocol):
        if f.name == name:
            return f
    raise ValueError(f"unknown protocol decision {name!r}; one of {', '.join(DECISIONS)}")


def _coerce(name: str, value: Any) -> Any:
    kind = type(_field(name).default)
    if issubclass(kind, Enum):
        try:
            return kind(value)
        except ValueError:
            choices = ", ".join(e.value for e in kind)
            raise ValueError(f"{name}={value!r} is not one of {choices}") from None
    if kind is bool and not isinstance(value, bool):
        raise ValueError(f"{name} must be true or false, got {value!r}")
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    return value


def _plain(value: Any) -> SwitchValue:
    return value.value if isinstance(value, Enum) else value


def decision_doc(name: str) -> str:
    f = _field(name)
    return f"{f.metadata['doc']} [{f.metadata['ref']}]"


def from_switches(values: Mapping[str, SwitchValue]) -> Protocol:
    """A ``Protocol`` from spec switch values (unknown names and bad values: ValueError, one line)."""
    return Protocol().with_(**dict(values))


def protocol_switches() -> dict[str, Switch]:
    """The ``ModelDef`` switches, generated from the dataclass (doc + reference, default, choices)."""
    out: dict[str, Switch] = {}
    for f in fields(Protocol):
        default = f.default
        choices: tuple[SwitchValue, ...] = ()
        if isinstance(default, Enum):
            choices = tuple(e.value for e in type(default))
        out[f.name] = Switch(decision_doc(f.name), _plain(default), choices)
    return out


# --- named variants ---------------------------------------------------------------------------------

_P = Protocol()

#: Kafka 0.11.0.0-0.11.0.1 as released
KAFKA_0_11_0_0 = _P.with_(
    client_version="0.11", client_epoch_bump_after_abort=False, broker_unknown_producer="out_of_order",
    broker_retain_producer_state=False, broker_batch_cache=1, init_producer_id="pre-kip360",
    timeout_abort_bumps_epoch=False, txn_offset_commit_check="pre-kip447", require_stable="never",
    deployment="per-partition", invalid_producer_epoch_abortable=False, marker_sets_producer_timestamp=False,
    failed_fence_keeps_epoch=False, txn_offsets_completion_async=False, client_send_error_aborts=False)
KAFKA_0_11_0_2 = KAFKA_0_11_0_0.with_(timeout_abort_bumps_epoch=True)
KAFKA_1_0_0 = KAFKA_0_11_0_2.with_(client_version="pre-kip360", broker_unknown_producer="unknown_producer_id",
                                   broker_batch_cache=5, broker_duplicate_sequence_error=True)
#: 1.0.2-2.3: also the group coordinator's asynchronous marker completion, which is 2.0.0's (KAFKA-6917; 1.0.2-1.1
#: complete in the request)
KAFKA_1_0_2 = KAFKA_1_0_0.with_(broker_duplicate_sequence_error=False, txn_offsets_completion_async=True)
KAFKA_2_4 = KAFKA_1_0_2.with_(broker_retain_producer_state=True)
#: 2.4.1: KAFKA-9144 (markers keep their producer alive; snapshots keep a marker-only producer)
KAFKA_2_4_1 = KAFKA_2_4.with_(marker_sets_producer_timestamp=True)
KAFKA_2_5 = KAFKA_2_4_1.with_(client_version="kip360", client_epoch_bump_after_abort=True,
                            invalid_producer_epoch_abortable=True,
                            broker_unknown_producer="accept", init_producer_id="kip360-shipped",
                            txn_offset_commit_check="2.5", require_stable="always", deployment="per-thread",
                            failed_fence_keeps_epoch=True)
#: 2.6: as 2.7-2.8, but a produce refused with INVALID_PRODUCER_EPOCH is fatal (InvalidProducerEpochException is
#: 2.7.0's, KIP-588); the composed coordinator's EndTxn / fence rules are 2.6.0's (KAFKA-9600, KAFKA-9666)
KAFKA_2_6 = KAFKA_2_5.with_(invalid_producer_epoch_abortable=False)
KAFKA_3_0 = KAFKA_2_5.with_(txn_offset_commit_check="current", client_send_error_aborts=True)
#: 3.2.0-3.2.3: validateOffsetCommit without KAFKA-14201's Empty-group shortcut (3.3.0); the client has KAFKA-9279
#: (000ba031c3d, first tag 3.2.0: 3.2.0 KafkaProducer.doSend calls maybeTransitionToErrorState)
KAFKA_3_2 = KAFKA_3_0.with_(txn_offset_commit_check="3.0")
#: 3.0.0-3.1.2: as 3.2, but the client without KAFKA-9279 (3.1.2 KafkaProducer.doSend has no
#: maybeTransitionToErrorState; not backported to the 3.1 branch)
KAFKA_3_0_0 = KAFKA_3_2.with_(client_send_error_aborts=False)
#: 3.6-3.7: KIP-890 part 1; a partition outside the transaction is INVALID_TXN_STATE, and the client sends Produce
#: <= v10 (3.6.0 ProduceRequest.json 0-9, 3.7.0 0-10)
KAFKA_3_6 = KAFKA_3_0.with_(partition_verification=True)
#: 3.8-3.9: KAFKA-16314 on both sides (the coordinator's TRANSACTION_ABORTABLE, the client's Produce v11)
#: and the client's TxnOffsetCommitHandler retrying any retriable error (PR 15266, 3.8.0)
KAFKA_3_8 = KAFKA_3_6.with_(verification_abortable=True, client_transaction_abortable=True,
                            client_txn_offset_commit_any_retriable=True)
KAFKA_4_0 = KAFKA_3_8.with_(transaction_version="tv2", client_epoch_bump_after_abort=False,
                            client_pid_mapping_fatal=True, client_produce_pid_mapping_fatal=True,
                            txn_offsets_completion_async=False,
                            add_partitions_pending_first=True, tv2_marker_keeps_verification=True,
                            verification_ongoing_at_epoch=True)
#: 4.0.0 with the leader's implicit partition add of KIP-890 part 2 modelled (the epoch-aware check of KAFKA-14563's
#: commit, and KAFKA-18654 [1/2]'s entry kept by a marker at its epoch)
KAFKA_4_0_LEADER_ADD = KAFKA_4_0.with_(tv2_partition_add="leader")
#: the 4.0 development trunk of 10-21 January 2025 (never released), after KAFKA-18464 (PR 18467) and before
#: KAFKA-18575 (PR 18604) and KAFKA-18660 (PR 18730): the leader's epoch-aware add (KAFKA-14563's commit,
#: 755adf8a56), a marker clears the next transaction's verification entry (before KAFKA-18654 [1/2]), a TV2 rotation
#: also answers the old producer id, and AddPartitionsToTxn and a TV2 EndTxn check the producer id first
KAFKA_4_0_DEV_2025_01 = KAFKA_4_0.with_(tv2_partition_add="leader",
                                        tv2_rotation_answer_next_producer_id=False, add_partitions_pending_first=False,
                                        tv2_end_txn_pending_before_producer_id=False,
                                        tv2_marker_keeps_verification=False)
#: the 4.0 development trunk before KAFKA-18227 (December 2024, after KAFKA-14563 removed the TV2 client's
#: AddPartitionsToTxn; never released): also before KAFKA-18464, so a TV2 EndTxn checks the epoch first
KAFKA_4_0_DEV_2024_12 = KAFKA_4_0_DEV_2025_01.with_(tv2_upgrade_bumps_epoch=False, tv2_end_txn_pending_first=False)
#: the 4.0 development trunk of late January 2025 (after KAFKA-18464, before KAFKA-18660's fix of January 30; never
#: released): a TV2 rotation answers the old producer id with the exhausted epoch, and AddPartitionsToTxn and a TV2
#: EndTxn check the producer id before a pending completion
KAFKA_4_0_DEV_2025_01_28 = KAFKA_4_0.with_(tv2_rotation_answer_next_producer_id=False,
                                          add_partitions_pending_first=False,
                                          tv2_end_txn_pending_before_producer_id=False,
                                          tv2_marker_keeps_verification=False)
#: the 4.0 development trunk of early January 2025 (before KAFKA-18464's fix of January 10; never released): as
#: kafka-4.0-dev-2025-01-28, and a TV2 EndTxn checks the epoch before a pending completion
KAFKA_4_0_DEV_2025_01_09 = KAFKA_4_0_DEV_2025_01_28.with_(tv2_end_txn_pending_first=False)
#: kafka-4.0-dev-2025-01-28 with the leader's add modelled: KAFKA-18575's early CONCURRENT_TRANSACTIONS (PR 18604,
#: January 22, 2025, 94a1bfb128; on the 4.0 branch 82ccf75ae0) for a batch above the epoch of an open transaction
KAFKA_4_0_DEV_2025_01_28_LEADER_ADD = KAFKA_4_0_DEV_2025_01_28.with_(tv2_partition_add="leader",
                                                                     tv2_leader_concurrent_below_epoch=True)
#: a counterfactual, in no Kafka snapshot: 4.0.0's leader add with 3.x's epoch-blind hasOngoingTransaction
TV2_LEADER_ADD_EPOCH_BLIND = KAFKA_4_0_LEADER_ADD.with_(tv2_partition_add="leader-epoch-blind",
                                                        verification_ongoing_at_epoch=False)
#: a what-if of two switches, never released as such (fidelity audit C7)
KAFKA_LATER_TRUNK = KAFKA_4_0.with_(persist_prev_producer_id=True)
#: trunk after KAFKA-19367 (one bump per fence-abort) and the Java TransactionMetadata (KAFKA-18884),
#: before KAFKA-20310 / KAFKA-20357 persisted PreviousProducerId and lastProducerEpoch; its previousProducerId rule
#: is older than the Java class (KAFKA-15370 [1/N], 4.1.0), so its switches are 4.1.0's (KAFKA_4_1_0), with the two
#: leader changes of June 2025 (first tag 4.1.0): KAFKA-18042's early INVALID_PRODUCER_EPOCH at the verification
#: start, KAFKA-18202's sequence 0 for a TV2 producer without state; and the client's KAFKA-19176 and KAFKA-19250 (both
#: June 3, 2025), also first tagged 4.1.0
KAFKA_JAVA_COORDINATOR = KAFKA_4_0.with_(tv2_fence_double_bump=False, tv2_failed_fence_leaves_epoch=True,
                                         previous_producer_id_update="every-transition",
                                         verification_rejects_lower_epoch=True, tv2_new_producer_sequence_zero=True,
                                         client_batch_error_wrapped_abortable=True, client_abort_abortable_fatal=True)
#: trunk after KAFKA-19446 (November 2025: a tv2 marker must raise the stored epoch), before KAFKA-19999; both
#: trunks have KAFKA-19690 (PR 20534, September 2025: the epoch check before the verification guard)
KAFKA_TRUNK_2025_12 = KAFKA_JAVA_COORDINATOR.with_(tv2_marker_epoch_check="strict", stale_epoch_before_verification=True)
#: trunk after KAFKA-19999 (December 2025: an equal-epoch marker without an open transaction is a retry)
KAFKA_TRUNK_2026_01 = KAFKA_JAVA_COORDINATOR.with_(tv2_marker_epoch_check="strict-retry",
                                                   stale_epoch_before_verification=True)
#: 3.9.x patch releases after September 2025: 3.8-3.9 with KAFKA-19690 (PR 20577)
KAFKA_3_9_KAFKA_19690 = KAFKA_3_8.with_(stale_epoch_before_verification=True)
KAFKA_TRUNK_2026 = KAFKA_TRUNK_2026_01.with_(persist_prev_producer_id=True, persist_last_epoch=True)
#: the 4.x releases read at their tags (session 19; docs/kafka-versions.md, "4.x release tags"): 4.0.1 is 4.0.0 with
#: KAFKA-19367's 4.0 cherry-pick (PRs 19958, 19991: TransactionCoordinator.endTransaction no longer installs the
#: fenced epoch before prepareAbortOrCommit's TV2 bump)
KAFKA_4_0_1 = KAFKA_4_0.with_(tv2_fence_double_bump=False, tv2_failed_fence_leaves_epoch=True)
#: 4.1.0: 4.0.1 with KAFKA-15370 [1/N] (PR 17687, trunk December 20, 2024, after the 4.0 branch point):
#: TransactionMetadata.prepareTransitionTo stamps the current producer id as prevProducerId on every transit and
#: completeTransitionTo copies it; and the leader's KAFKA-18042 (PR 19844, cc25d217da) and KAFKA-18202 (PR 19902,
#: 3479ce793b), ancestors of 4.1.0 and not of 4.0.1; the client's KAFKA-19176 (8c71ab03b5) and KAFKA-19250
#: (b1ea280ab1), ancestors of 4.1.0 and not of 4.0.1. The same switches as the Java-coordinator trunk of August 2025
KAFKA_4_1_0 = KAFKA_4_0_1.with_(previous_producer_id_update="every-transition", verification_rejects_lower_epoch=True,
                                tv2_new_producer_sequence_zero=True, client_batch_error_wrapped_abortable=True,
                                client_abort_abortable_fatal=True)
#: 4.1.1: 4.1.0 with KAFKA-19690's 4.1 cherry-pick (PR 20618, a10c1f3ea1: UnifiedLog.analyzeAndValidateProducerState
#: checks the epoch before the verification guard)
KAFKA_4_1_1 = KAFKA_4_1_0.with_(stale_epoch_before_verification=True)
#: 4.2.0-rc1 (January 2026): 4.1.1 with KAFKA-19446 [3/3] (PR 20882) and KAFKA-19999 (PR 21176) in
#: ProducerAppendInfo.checkProducerEpoch, and the Java TransactionMetadata (KAFKA-18884, same rules): the same
#: switches as the trunk of January 2026 (KAFKA_TRUNK_2026_01)
KAFKA_4_2_0_RC1 = KAFKA_4_1_1.with_(tv2_marker_epoch_check="strict-retry")


@dataclass(frozen=True)
class NamedProtocol:
    doc: str
    protocol: Protocol


VARIANTS: dict[str, NamedProtocol] = {
    # Kafka releases
    "kafka-0.11.0.0": NamedProtocol("Kafka 0.11.0.0-0.11.0.1: the first EOS release; the timeout abort keeps the "
                                    "epoch, one cached batch, unknown producers get OUT_OF_ORDER_SEQUENCE_NUMBER",
                                    KAFKA_0_11_0_0),
    "kafka-0.11.0.2": NamedProtocol("Kafka 0.11.0.2: the timeout abort fences with an epoch bump (KAFKA-6119)",
                                    KAFKA_0_11_0_2),
    "kafka-1.0.0": NamedProtocol("Kafka 1.0.0-1.0.1: UNKNOWN_PRODUCER_ID with the log start offset, five cached "
                                 "batches, DUPLICATE_SEQUENCE_NUMBER for an old duplicate, the pre-KIP-360 client",
                                 KAFKA_1_0_0),
    "kafka-1.0.2-2.3": NamedProtocol("Kafka 1.0.2, 1.1 and 2.0-2.3: as 1.0.0 without the duplicate error "
                                     "(KAFKA-6683); producer state evicted when the log start offset passes it; "
                                     "the group coordinator completes a marker's offsets asynchronously, which is "
                                     "2.0's (KAFKA-6917: 1.0.2-1.1 differ there)",
                                     KAFKA_1_0_2),
    "kafka-2.4": NamedProtocol("Kafka 2.4.0: as 2.3, but producer state survives log start offset moves "
                               "(KAFKA-7190, cherry-picked into 2.4.0)", KAFKA_2_4),
    "kafka-2.4.1": NamedProtocol("Kafka 2.4.1: as 2.4.0, with markers setting their producer's lastTimestamp "
                                 "and snapshots keeping marker-only producers (KAFKA-9144)", KAFKA_2_4_1),
    "kafka-2.5-2.8": NamedProtocol("the switches of kafka-2.7-2.8 under their first, too wide name (kept for specs "
                                   "and tests that use it): 2.6 differs (kafka-2.6: INVALID_PRODUCER_EPOCH on a "
                                   "produce is fatal), and 2.5.x's coordinator (EndTxn before KAFKA-9600, the fence "
                                   "before KAFKA-9666, lastProducerEpoch kept by a fence) is in no composed machine",
                                   KAFKA_2_5),
    "kafka-3.0-3.5": NamedProtocol("Kafka 3.0-3.5: KIP-447 with the 3.3+ TxnOffsetCommit checks; 3.0-3.2 differ "
                                   "(kafka-3.0-3.2) only for a generation < 0 with a member id on an Empty group, "
                                   "which no machine sends (commit_metadata: a member that never joined sends "
                                   "neither, and a member without a generation owns no task), and in the 3.0-3.1 "
                                   "client's failed send() (KAFKA-9279, 3.2.0; bound send_errors)", KAFKA_3_0),
    "kafka-3.6-3.9": NamedProtocol("the switches of kafka-3.8-3.9 under the wide name the first KIP-890 part 1 specs "
                                   "used: leaders verify a first transactional batch with the coordinator, the "
                                   "offsets write of TxnOffsetCommit too (KAFKA-15449, 3.7.0), and a partition "
                                   "outside the transaction is TRANSACTION_ABORTABLE (KAFKA-16314, 3.8.0); 3.6-3.7 "
                                   "answer INVALID_TXN_STATE (kafka-3.6-3.7), which is as abortable for the client",
                                   KAFKA_3_8),
    "kafka-4.0": NamedProtocol("Kafka 4.0.0 with transaction.version 2: KIP-890 parts 1 and 2 (an epoch bump per "
                               "transaction, two on a fence-abort: KAFKA-19367's single bump first ships in 4.0.1 "
                               "and 4.1.0); the TV2 client does not bump after an abort", KAFKA_4_0),
    "kafka-4.0-leader-add": NamedProtocol("Kafka 4.0 as kafka-4.0, with KIP-890 part 2's implicit partition add "
                                          "modelled: the TV2 client sends no AddPartitionsToTxn, the leader adds the "
                                          "partition unless the producer has a transaction open there at the "
                                          "batch's epoch (KAFKA-14563's epoch-aware check), and a marker at the "
                                          "epoch of the next transaction's verification entry keeps it "
                                          "(KAFKA-18654 [1/2], 4.0.0)", KAFKA_4_0_LEADER_ADD),
    "kafka-4.0-dev-2025-01": NamedProtocol("the 4.0 development trunk of 10-21 January 2025 (never released), before "
                                           "KAFKA-18575: as kafka-4.0-leader-add (the same epoch-aware check), but "
                                           "every marker clears the producer's verification entry, so a batch of "
                                           "the next transaction whose add started before the previous "
                                           "transaction's marker is refused INVALID_TXN_STATE (the race of "
                                           "KAFKA-18575's PR); before KAFKA-18660 too (as kafka-4.0-dev-2025-01-28)",
                                           KAFKA_4_0_DEV_2025_01),
    "kafka-4.0-dev-2025-01-09": NamedProtocol("the 4.0 development trunk of early January 2025, before KAFKA-18464's "
                                              "fix (PR 18467, January 10; never released): as kafka-4.0-dev-2025-01-28, "
                                              "and a TV2 EndTxn checks the epoch before a pending completion, so an "
                                              "abort at the epoch a commit still completing answered is PRODUCER_FENCED",
                                              KAFKA_4_0_DEV_2025_01_09),
    "kafka-4.0-dev-2025-01-28": NamedProtocol("the 4.0 development trunk of late January 2025, before KAFKA-18660's "
                                              "fix (PR 18730, January 30; never released): as kafka-4.0 with the "
                                              "client's add, but a TV2 EndTxn that exhausts the epoch answers the old "
                                              "producer id with the exhausted epoch, and AddPartitionsToTxn checks the "
                                              "producer id before a pending completion",
                                              KAFKA_4_0_DEV_2025_01_28),
    "kafka-4.0-dev-2025-01-28-leader-add": NamedProtocol(
        "the 4.0 development trunk of 22-29 January 2025 (never released), after KAFKA-18575 (PR 18604): as "
        "kafka-4.0-dev-2025-01-28 with the leader's add modelled, and the leader answers CONCURRENT_TRANSACTIONS "
        "for a batch above the epoch of a transaction still open there instead of starting its add "
        "(reverted by KAFKA-18654 [1/2], February 3)", KAFKA_4_0_DEV_2025_01_28_LEADER_ADD),
    "kafka-4.0-dev-2024-12": NamedProtocol("the 4.0 development trunk of December 2024 (never released), after "
                                           "KAFKA-14563 moved a TV2 partition's add to the leader: as "
                                           "kafka-4.0-dev-2025-01, and a client upgrading to TV2 keeps its epoch, "
                                           "so its first TV2 batches can join its last TV1 transaction (KAFKA-18227); "
                                           "before KAFKA-18464 too (as kafka-4.0-dev-2025-01-09)",
                                           KAFKA_4_0_DEV_2024_12),
    "kafka-later-trunk": NamedProtocol("what-if, never released as such: 4.0 with PreviousProducerId persisted "
                                       "and lastProducerEpoch not (fidelity audit C7)", KAFKA_LATER_TRUNK),
    "kafka-java-coordinator": NamedProtocol("trunk August - November 2025: the Java TransactionMetadata "
                                            "(KAFKA-18884; every transition sets previousProducerId, as the Scala "
                                            "one does from 4.1.0, KAFKA-15370), one bump per TV2 fence-abort "
                                            "(KAFKA-19367), nothing extra persisted, the leader checks of June 2025 "
                                            "(KAFKA-18042, KAFKA-18202): the switches of kafka-4.1.0; the "
                                            "same coordinator until March 2026 (kafka-trunk-2025-12, -2026-01)",
                                            KAFKA_JAVA_COORDINATOR),
    "kafka-trunk-2025-12": NamedProtocol("trunk between KAFKA-19446 (2025-11) and KAFKA-19999 (2025-12): the Java "
                                         "coordinator, and leaders that refuse a tv2 marker not above the stored "
                                         "producer epoch, a retried one too", KAFKA_TRUNK_2025_12),
    "kafka-trunk-2026-01": NamedProtocol("trunk after KAFKA-19999 (2025-12), before KAFKA-20310: as kafka-trunk-2025-12, "
                                         "but a tv2 marker at the stored epoch without an open transaction is a "
                                         "retry and succeeds", KAFKA_TRUNK_2026_01),
    "kafka-trunk-2026": NamedProtocol("trunk after KAFKA-20310 / KAFKA-20357 (2026-03/04): kafka-trunk-2026-01 "
                                      "with PreviousProducerId and lastProducerEpoch persisted", KAFKA_TRUNK_2026),
    # the same releases under their exact ranges (after the names above, which win ties in closest_variant)
    "kafka-2.6": NamedProtocol("Kafka 2.6.0-2.6.3: KIP-360 and KIP-447 (2.5 checks), KAFKA-9600 / KAFKA-9666 in the "
                               "coordinator, no KIP-588 (a produce refused with INVALID_PRODUCER_EPOCH is fatal: "
                               "2.6.3 has no InvalidProducerEpochException)", KAFKA_2_6),
    "kafka-2.7-2.8": NamedProtocol("Kafka 2.7.0-2.8.2: as 2.6 with KIP-588 (InvalidProducerEpochException is "
                                   "abortable, PRODUCER_FENCED); TxnOffsetCommit by 2.8.2's doTxnCommitOffsets",
                                   KAFKA_2_5),
    "kafka-3.0-3.2": NamedProtocol("the switches of kafka-3.0-3.1 under their first, too wide name (kept for tests "
                                   "that use it): 3.2.x differs (kafka-3.2: a failed send() is an abortable error, "
                                   "KAFKA-9279, 3.2.0)", KAFKA_3_0_0),
    "kafka-3.0-3.1": NamedProtocol("Kafka 3.0.0-3.1.2: validateOffsetCommit (5dae3648abd) without KAFKA-14201's "
                                   "Empty-group shortcut; a failed send() is not an abortable error (KAFKA-9279 is "
                                   "3.2.0's, not on the 3.1 branch)", KAFKA_3_0_0),
    "kafka-3.2": NamedProtocol("Kafka 3.2.0-3.2.3: as kafka-3.0-3.1, with KAFKA-9279 (000ba031c3d): a send() that "
                               "fails in the application thread is an abortable error of the transaction",
                               KAFKA_3_2),
    "kafka-3.6-3.7": NamedProtocol("Kafka 3.6.0-3.7.1: KIP-890 part 1 before KAFKA-16314: the coordinator answers a "
                                   "verification outside the transaction with INVALID_TXN_STATE and the client sends "
                                   "Produce <= v10 (abortable for it, as TRANSACTION_ABORTABLE is for 3.8+); the "
                                   "offsets write is verified too, which is 3.7.0's (KAFKA-15449: 3.6 differs only "
                                   "there, with the same verdicts)", KAFKA_3_6),
    "kafka-3.8-3.9": NamedProtocol("Kafka 3.8.0-3.9.x: KIP-890 part 1 with KAFKA-16314 (TRANSACTION_ABORTABLE from the "
                                   "coordinator, Produce v11 / TxnOffsetCommit v4 from the client); 3.9 releases after "
                                   "September 2025 also have KAFKA-19690 (kafka-3.9-kafka-19690)", KAFKA_3_8),
    "kafka-3.9-kafka-19690": NamedProtocol("Kafka 3.9.x patch releases after September 2025: kafka-3.8-3.9 with "
                                           "KAFKA-19690 (PR 20577: a stale-epoch transactional batch without a "
                                           "verification guard is answered INVALID_PRODUCER_EPOCH, not "
                                           "INVALID_TXN_STATE; seen in kafka.eos with verification_steps)",
                                           KAFKA_3_9_KAFKA_19690),
    "kafka-3.3-3.5": NamedProtocol("Kafka 3.3.0-3.5.2: the 3.3+ TxnOffsetCommit checks, no partition verification "
                                   "(KIP-890 part 1 was reverted on the 3.5 branch, 928070e3206)", KAFKA_3_0),
    "kafka-4.0.1": NamedProtocol("Kafka 4.0.1 (tag 4.0.1) with transaction.version 2: kafka-4.0 with KAFKA-19367's "
                                 "4.0 cherry-pick (PRs 19958, 19991): one bump per TV2 fence-abort, so the fenced "
                                 "producer's EndTxn(ABORT) is a retry; no KAFKA-19690 (its 4.0 PR 20607 is after the "
                                 "tag)", KAFKA_4_0_1),
    "kafka-4.1.0": NamedProtocol("Kafka 4.1.0 (tag 4.1.0) with transaction.version 2: kafka-4.0.1, and every completed "
                                 "coordinator transition sets previousProducerId (KAFKA-15370 [1/N], PR 17687); the "
                                 "leader's KAFKA-18042 (an early INVALID_PRODUCER_EPOCH for a stale batch before any "
                                 "verification) and KAFKA-18202 (a TV2 producer without state starts at sequence 0); "
                                 "the same switches as kafka-java-coordinator", KAFKA_4_1_0),
    "kafka-4.1.1": NamedProtocol("Kafka 4.1.1 (tag 4.1.1) with transaction.version 2: kafka-4.1.0 with KAFKA-19690 "
                                 "(PR 20618: a stale-epoch transactional batch without a verification guard is "
                                 "answered INVALID_PRODUCER_EPOCH, not INVALID_TXN_STATE; seen in kafka.eos with "
                                 "verification_steps)", KAFKA_4_1_1),
    "kafka-4.2.0-rc1": NamedProtocol("Kafka 4.2.0-rc1 (tag 4.2.0-rc1, January 2026) with transaction.version 2: "
                                     "kafka-4.1.1 whose leaders refuse a TV2 marker not above the stored epoch unless "
                                     "it is a retry (KAFKA-19446, KAFKA-19999), with the Java TransactionMetadata "
                                     "(KAFKA-18884, the same rules); the same switches as kafka-trunk-2026-01",
                                     KAFKA_4_2_0_RC1),
    # KIPs as designed
    "kip360-designed": NamedProtocol("KIP-360 as its text designs it: retry-safe InitProducerId with the last "
                                     "producer id/epoch persisted, sequences permanent once assigned",
                                     KAFKA_2_5.with_(init_producer_id="kip360-designed", persist_last_epoch=True,
                                                     persist_prev_producer_id=True, client_epoch_bump="fail_inflight")),
    "kip447-designed": NamedProtocol("KIP-447 as its text designs it: require_stable only for read_committed "
                                     "consumers", KAFKA_3_0.with_(require_stable="read_committed")),
    # counterfactuals
    "timeout-abort-no-bump": NamedProtocol("counterfactual: 3.x with the 0.11.0.0 timeout abort (no epoch bump)",
                                           KAFKA_3_0.with_(timeout_abort_bumps_epoch=False)),
    "no-coordinator-epoch-check": NamedProtocol("counterfactual: leaders accept markers of an old coordinator",
                                                KAFKA_3_0.with_(marker_coordinator_epoch_check=False)),
    "tv2-rotation-markers-new-producer-id": NamedProtocol(
        "counterfactual: 4.0, but a transaction that rotates the producer id at epoch overflow writes its "
        "markers under the new producer id", KAFKA_4_0.with_(rotation_markers_new_producer_id=True)),
    "tv2-leader-add-epoch-blind": NamedProtocol(
        "counterfactual, in no Kafka snapshot: kafka-4.0-leader-add with 3.x's epoch-blind hasOngoingTransaction "
        "(KAFKA-14563's commit made it epoch-aware when it moved the add to the leader), so a batch of the next "
        "transaction joins the one still completing: why the check must be epoch-aware",
        TV2_LEADER_ADD_EPOCH_BLIND),
    "tv2-without-verification": NamedProtocol("counterfactual: 4.0's per-transaction epoch bump without KIP-890 "
                                              "part 1's verification", KAFKA_4_0.with_(partition_verification=False)),
}

DEFAULT_VARIANT = "kafka-3.0-3.5"


def protocol_variants() -> dict[str, Variant]:
    """The named variants as ``ModelDef`` variants (every decision spelled out)."""
    return {name: Variant(v.doc, v.protocol.as_switches()) for name, v in VARIANTS.items()}


# --- what a machine can honour ----------------------------------------------------------------------


@dataclass(frozen=True)
class Support:
    """The decisions a machine models, each with the values it can honour; unlisted decisions are not
    modelled and are ignored (they cannot change its behaviour)."""

    machine: str
    honours: Mapping[str, frozenset[Any]]
    #: why a value is missing, per decision (shown in the refusal)
    why: Mapping[str, str] = field(default_factory=dict)


def refusal(protocol: Protocol, support: Support) -> str | None:
    """One line if ``support.machine`` cannot honour ``protocol``; None if it can."""
    error = protocol.consistency_error()
    if error is not None:
        return error
    for name, allowed in support.honours.items():
        value = getattr(protocol, name)
        if value not in allowed:
            reason = support.why.get(name, "")
            return (f"{support.machine} cannot honour {name}={_plain(value)}"
                    + (f" ({reason})" if reason else "")
                    + f"; it honours {', '.join(sorted(str(_plain(v)) for v in allowed))}")
    return None


# --- today's machines: their string switches and variant names ---------------------------------------

IDEMPOTENT, INIT, PIPELINE = "kafka.idempotent_produce", "kafka.init_producer_id", "kafka.eos_pipeline"

#: the decisions each of today's machines reads, under its switch names (decision -> legacy switch)
_LEGACY_NAMES: dict[str, dict[str, str]] = {
    IDEMPOTENT: {"broker_unknown_producer": "broker_unknown_producer",
                 "broker_retain_producer_state": "broker_retain_producer_state",
                 "broker_batch_cache": "broker_batch_cache",
                 "broker_duplicate_sequence_error": "broker_duplicate_sequence_error",
                 "client_version": "client_version", "client_epoch_bump": "client_epoch_bump"},
    INIT: {"init_producer_id": "init_producer_id", "persist_last_epoch": "persist_last_epoch",
           "persist_prev_producer_id": "persist_prev_producer_id",
           "previous_producer_id_update": "previous_producer_id_update"},
    PIPELINE: {"deployment": "deployment", "txn_offset_commit_check": "txn_offset_commit_check",
               "require_stable": "require_stable", "timeout_abort_bumps_epoch": "timeout_abort_bumps_epoch",
               "partition_verification": "kip890_verification",
               "client_epoch_bump_after_abort": "client_epoch_bump_after_abort",
               "transaction_version": "tv2_epoch_bump",
               "client_tv_change": "client_tv_change",
               "tv2_fence_double_bump": "tv2_fence_double_bump",
               "invalid_producer_epoch_abortable": "invalid_producer_epoch_abortable",
               "marker_coordinator_epoch_check": "marker_coordinator_epoch_check"},
}


def legacy_switches(protocol: Protocol, machine: str) -> dict[str, SwitchValue]:
    """The string switches of one of today's machines for ``protocol`` (the thin adapter)."""
    out: dict[str, SwitchValue] = {}
    for decision, legacy in _LEGACY_NAMES[machine].items():
        value = getattr(protocol, decision)
        if decision == "transaction_version":
            out[legacy] = value == TransactionVersion.TV2
        else:
            out[legacy] = _plain(value)
    return out


_SHIPPED = KAFKA_3_0  # the shipped 2.5+ choices of the part-1 machines

#: (machine, today's variant name) -> the Protocol that reproduces that variant's switches exactly
LEGACY_ALIASES: dict[tuple[str, str], Protocol] = {
    (IDEMPOTENT, "broker-0.11"): KAFKA_0_11_0_0,
    (IDEMPOTENT, "broker-1.0.0-1.0.1"): KAFKA_1_0_0,
    (IDEMPOTENT, "broker-1.0.2-1.1"): KAFKA_1_0_2,
    (IDEMPOTENT, "broker-2.0-2.3"): KAFKA_1_0_2,
    (IDEMPOTENT, "broker-2.4"): KAFKA_2_4,
    (IDEMPOTENT, "kip360-client-old-broker"): KAFKA_1_0_2.with_(client_version="kip360"),
    (IDEMPOTENT, "kip360-designed"): VARIANTS["kip360-designed"].protocol,
    (IDEMPOTENT, "kafka-shipped"): _SHIPPED,
    (INIT, "pre-kip360"): KAFKA_2_4,
    (INIT, "kip360-designed"): VARIANTS["kip360-designed"].protocol,
    (INIT, "kafka-shipped"): _SHIPPED,
    (INIT, "kafka-later-trunk"): _SHIPPED.with_(persist_prev_producer_id=True),
    # the init machine has no TV2, so its trunk names are the shipped TV1 coordinator with their changes
    (INIT, "kafka-java-coordinator"): _SHIPPED.with_(previous_producer_id_update="every-transition"),
    (INIT, "kafka-2026-trunk"): _SHIPPED.with_(previous_producer_id_update="every-transition",
                                               persist_prev_producer_id=True, persist_last_epoch=True),
    (PIPELINE, "eos-beta-kip447"): _SHIPPED,
    (PIPELINE, "eos-beta-2.5"): KAFKA_2_5,
    (PIPELINE, "eos-beta-pre-kip447"): _SHIPPED.with_(txn_offset_commit_check="pre-kip447", require_stable="never"),
    (PIPELINE, "eos-alpha-pre-kip447"): _SHIPPED.with_(deployment="per-partition",
                                                       txn_offset_commit_check="pre-kip447", require_stable="never"),
    (PIPELINE, "eos-alpha-kip447"): _SHIPPED.with_(deployment="per-partition"),
    (PIPELINE, "kafka-2.4-eos-alpha"): KAFKA_2_4,
    (PIPELINE, "kafka-0.11-eos-alpha"): KAFKA_0_11_0_0,
    (PIPELINE, "timeout-abort-no-bump"): VARIANTS["timeout-abort-no-bump"].protocol,
    (PIPELINE, "no-coordinator-epoch-check"): VARIANTS["no-coordinator-epoch-check"].protocol,
    (PIPELINE, "kip890-verification"): KAFKA_3_8,
    (PIPELINE, "kip890-tv2"): KAFKA_3_8.with_(transaction_version="tv2"),
    (PIPELINE, "kip890-tv2-kafka-19367"): KAFKA_3_8.with_(transaction_version="tv2", tv2_fence_double_bump=False,
                                                          tv2_failed_fence_leaves_epoch=True),
    (PIPELINE, "tv2-client-upgrade"): KAFKA_3_8.with_(client_tv_change="upgrade"),
    (PIPELINE, "tv2-client-downgrade"): KAFKA_3_8.with_(transaction_version="tv2", client_tv_change="downgrade"),
    (PIPELINE, "tv2-without-verification"): _SHIPPED.with_(transaction_version="tv2"),
    (PIPELINE, "timeout-abort-no-bump-kip890"): KAFKA_3_8.with_(timeout_abort_bumps_epoch=False),
}


#: what today's machines can honour (refusal): the pipeline's coordinator is hard-wired to KIP-360 as
#: shipped without persistence; the init machine has no TV2; the idempotent machine has no
#: transactions (its decisions are all of its switches, every value honoured)
LEGACY_SUPPORT: dict[str, Support] = {
    IDEMPOTENT: Support(IDEMPOTENT, {"transaction_version": frozenset({TransactionVersion.TV1}),
                                     "partition_verification": frozenset({False})},
                        {"transaction_version": "no transactions", "partition_verification": "no transactions"}),
    INIT: Support(INIT, {"transaction_version": frozenset({TransactionVersion.TV1})},
                  {"transaction_version": "its EndTxn is the TV1 rule"}),
    PIPELINE: Support(PIPELINE, {"init_producer_id": frozenset({InitProducerIdMode.KIP360_SHIPPED}),
                                 "persist_last_epoch": frozenset({False}),
                                 "persist_prev_producer_id": frozenset({False})},
                      {"init_producer_id": "its coordinator is hard-wired to KIP-360 as shipped",
                       "persist_last_epoch": "its transaction log is hard-wired",
                       "persist_prev_producer_id": "its transaction log is hard-wired"}),
}


def resolve(name: str, machine: str | None = None) -> Protocol:
    """A variant by name: with ``machine``, that machine's own (today's) name first; then a named
    ``Protocol``; then a legacy name of any machine when it is unambiguous. Unknown: ValueError, one line."""
    if machine is not None and (machine, name) in LEGACY_ALIASES:
        return LEGACY_ALIASES[(machine, name)]
    if name in VARIANTS:
        return VARIANTS[name].protocol
    found = {p for (m, n), p in LEGACY_ALIASES.items() if n == name}
    if len(found) == 1:
        return found.pop()
    if found:
        raise ValueError(f"variant {name!r} means different things for different machines; name the machine")
    raise ValueError(f"unknown variant {name!r}; one of {', '.join(sorted(VARIANTS))} "
                     f"(or a legacy name: {', '.join(sorted({n for _, n in LEGACY_ALIASES}))})")
