"""Switches (one protocol decision each) and named variants (a Kafka version or a KIP) per model.

Where a KIP's text and the shipped code differ, both are switches and the variant's doc says which
one it follows.
"""

from __future__ import annotations

from eoscheck.checker.registry import Switch, SwitchValue, Variant

from .partition.validation import UNKNOWN_PRODUCER_MODES
from .producer.config import CLIENT_VERSIONS, EPOCH_BUMP_MODES

# --- kafka.idempotent_produce -----------------------------------------------------------------

IDEMPOTENT_SWITCHES: dict[str, Switch] = {
    "broker_unknown_producer": Switch(
        "what the leader answers a producer it has no state for, sending a sequence other than 0: "
        "out_of_order (0.11), unknown_producer_id with the log start offset (1.0-2.4, the "
        "spurious-OutOfOrderSequence design), accept any sequence (2.5+, KIP-360)",
        "accept", UNKNOWN_PRODUCER_MODES),
    "broker_retain_producer_state": Switch(
        "KAFKA-7190 (KIP-360 'prolonged retention'; cherry-picked into 2.4.0, 1a5971ebdc7): moving the "
        "log start offset keeps the producer state; 0.11-2.3 evicted producers whose last batch fell below it",
        True),
    "broker_batch_cache": Switch(
        "batches cached per producer for duplicate detection (NUM_BATCHES_TO_RETAIN: 5 since 1.0; "
        "0.11 kept only the last batch)", 5),
    "broker_duplicate_sequence_error": Switch(
        "a same-epoch batch older than every cached batch, with a sequence other than 0, gets "
        "DUPLICATE_SEQUENCE_NUMBER (1.0.0-1.0.1 only: the spurious-OutOfOrderSequence design's item 5; "
        "KAFKA-6683 removed it in 1.0.2 and 1.1.0) instead of OUT_OF_ORDER_SEQUENCE_NUMBER",
        False),
    "client_version": Switch(
        "producer client: 0.11 (OutOfOrderSequence raised, producer id reset), pre-kip360 (1.0-2.4: reset sequences to 0 "
        "under the same epoch on UNKNOWN_PRODUCER_ID), kip360 (2.5+: local epoch bump)",
        "kip360", CLIENT_VERSIONS),
    "client_epoch_bump": Switch(
        "KIP-360 client's epoch bump: resequence_inflight (as shipped: startSequencesAtBeginning "
        "rewrites in-flight batches from 0 under the new epoch) or fail_inflight (as the KIP designs: "
        "a sequence never changes once assigned; the batch and later sequenced ones fail)",
        "resequence_inflight", EPOCH_BUMP_MODES),
}

_OLD_BROKER: dict[str, SwitchValue] = {"broker_unknown_producer": "unknown_producer_id",
                                       "broker_retain_producer_state": False, "broker_batch_cache": 5}
_NEW_BROKER: dict[str, SwitchValue] = {"broker_unknown_producer": "accept", "broker_retain_producer_state": True,
                                       "broker_batch_cache": 5}

IDEMPOTENT_VARIANTS: dict[str, Variant] = {
    "broker-0.11": Variant(
        "0.11.0 broker and client: an unknown producer with sequence != 0 gets OUT_OF_ORDER_SEQUENCE_NUMBER, "
        "retention evicts producer state, one cached batch; OutOfOrderSequence is raised and the client resets "
        "its producer id (use max_in_flight = 1)",
        {"broker_unknown_producer": "out_of_order", "broker_retain_producer_state": False,
         "broker_batch_cache": 1, "client_version": "0.11"}),
    "broker-1.0.0-1.0.1": Variant(
        "the spurious-OutOfOrderSequence design as shipped in 1.0.0-1.0.1: UNKNOWN_PRODUCER_ID with the log "
        "start offset, DUPLICATE_SEQUENCE_NUMBER for a duplicate (sequence != 0) older than the cache, and the "
        "pre-KIP-360 client that resets sequences to 0 under the same epoch when lastAckedOffset < logStartOffset",
        {**_OLD_BROKER, "broker_duplicate_sequence_error": True, "client_version": "pre-kip360"}),
    "broker-1.0.2-1.1": Variant(
        "as 1.0.0-1.0.1 without DUPLICATE_SEQUENCE_NUMBER (KAFKA-6683 in 1.0.2 and 1.1.0: a duplicate older "
        "than the cache gets OUT_OF_ORDER_SEQUENCE_NUMBER); the same switches as broker-2.0-2.3",
        {**_OLD_BROKER, "broker_duplicate_sequence_error": False, "client_version": "pre-kip360"}),
    "broker-2.0-2.3": Variant(
        "2.0-2.3 broker and pre-KIP-360 client (as broker-1.0.2-1.1: a duplicate older than the cache gets "
        "OUT_OF_ORDER_SEQUENCE_NUMBER, KAFKA-6683)", {**_OLD_BROKER, "client_version": "pre-kip360"}),
    "broker-2.4": Variant(
        "2.4.0-2.4.1: as 2.0-2.3, but moving the log start offset keeps the producer state (KAFKA-7190 was "
        "cherry-picked into 2.4.0); an unknown producer still gets UNKNOWN_PRODUCER_ID and the client is "
        "pre-KIP-360", {**_OLD_BROKER, "broker_retain_producer_state": True, "client_version": "pre-kip360"}),
    "kip360-client-old-broker": Variant(
        "a 2.5+ client (KIP-360 as shipped) against a 1.0-2.3 broker that still evicts producer state "
        "on DeleteRecords", {**_OLD_BROKER, "client_version": "kip360", "client_epoch_bump": "resequence_inflight"}),
    "kip360-designed": Variant(
        "KIP-360 as the KIP's text designs it: prolonged producer-state retention, unknown producers "
        "accepted, and sequences permanent once assigned (a failed batch fails every later sequenced one)",
        {**_NEW_BROKER, "client_version": "kip360", "client_epoch_bump": "fail_inflight"}),
    "kafka-shipped": Variant(
        "Kafka as shipped since 2.5 (KIP-360 code; producer-id expiry as every version has it, configured "
        "apart from transactional.id.expiration.ms since 3.4.0, KIP-854 b392cf212f7): producer state kept on DeleteRecords, "
        "unknown producers accepted with any sequence, the client bumps its epoch locally and rewrites "
        "in-flight sequences", {**_NEW_BROKER, "client_version": "kip360", "client_epoch_bump": "resequence_inflight"}),
}

# --- kafka.init_producer_id -------------------------------------------------------------------

INIT_PRODUCER_ID_MODES = ("pre-kip360", "kip360-designed", "kip360-shipped")
PREV_PRODUCER_ID_UPDATES = ("scala", "every-transition")

INIT_SWITCHES: dict[str, Switch] = {
    "init_producer_id": Switch(
        "the coordinator's InitProducerId: pre-kip360 (no producer id/epoch in the request), "
        "kip360-designed (the KIP's cases 1a-2c), kip360-shipped (validPid, lastProducerEpoch, the "
        "exhaustion precondition)", "kip360-shipped", INIT_PRODUCER_ID_MODES),
    "persist_last_epoch": Switch(
        "the transaction log record carries LastProducerEpoch (the KIP's design); Kafka did not write it "
        "until KAFKA-20357 (April 2026, flexible records), so lastProducerEpoch is -1 after a coordinator "
        "failover", False),
    "persist_prev_producer_id": Switch(
        "the transaction log record carries PreviousProducerId (the KIP's design). The tagged field exists "
        "since 4.0 (transaction.version >= 1) but valueToBytes did not set it until KAFKA-20310 (March 2026)",
        False),
    "previous_producer_id_update": Switch(
        "as shipped, which completed transitions set previousProducerId := the producer id they start from: "
        "scala (TransactionMetadata.completeTransitionTo, 2.5.0 .. 4.0.1: only the InitProducerId "
        "transition to Empty and a TV2 CompleteX; Ongoing, PrepareX and TV0/TV1 CompleteX keep it, so an id "
        "replaced by a rotation stays previousProducerId through the new id's transactions) or "
        "every-transition (4.1.0+: KAFKA-15370 [1/N], PR 17687, trunk December 2024, stamps the producer id on "
        "every transit; the Java TransactionMetadata of KAFKA-18884, 4.2.0-rc1, keeps the rule)",
        "scala", PREV_PRODUCER_ID_UPDATES),
}

INIT_VARIANTS: dict[str, Variant] = {
    "pre-kip360": Variant("before KIP-360 (<= 2.4): every InitProducerId bumps the epoch; no retry safety",
                          {"init_producer_id": "pre-kip360", "persist_last_epoch": False,
                           "persist_prev_producer_id": False}),
    "kip360-designed": Variant(
        "KIP-360 as designed: retry-safe InitProducerId with the last producer id/epoch persisted in the "
        "transaction log, so a retry spanning a coordinator failover still returns the bumped epoch",
        {"init_producer_id": "kip360-designed", "persist_last_epoch": True, "persist_prev_producer_id": True}),
    "kafka-shipped": Variant(
        "Kafka as shipped (2.6.0 .. 3.9.0 and 4.0.0 .. 4.0.1 at the release tags; trunk until KAFKA-15370 [1/N], "
        "December 2024, first released in 4.1.0): lastProducerEpoch and previousProducerId "
        "live in memory only, so a retry spanning a coordinator failover is fenced; previousProducerId is "
        "set only by InitProducerId (and TV2 CompleteX). The EndTxn and fence rules are 2.6's (KAFKA-9600: "
        "a client's EndTxn needs the exact epoch; the fence sets lastProducerEpoch to -1) with 2.7's "
        "PRODUCER_FENCED (2.5/2.6 answered INVALID_PRODUCER_EPOCH, which the client treats alike). 2.5.x "
        "differs and is not modelled: EndTxn refused only a lower epoch, and the fence kept the old epoch as "
        "lastProducerEpoch, so a fenced producer's InitProducerId(pid, old epoch) got the fenced epoch back",
        {"init_producer_id": "kip360-shipped", "persist_last_epoch": False, "persist_prev_producer_id": False,
         "previous_producer_id_update": "scala"}),
    "kafka-later-trunk": Variant(
        "the Scala coordinator with PreviousProducerId persisted and lastProducerEpoch not: never released "
        "as such (the field exists since 4.0 but was first written by KAFKA-20310, March 2026, after the "
        "Java rewrite); kept as a what-if of the two switches (fidelity audit C7)",
        {"init_producer_id": "kip360-shipped", "persist_last_epoch": False, "persist_prev_producer_id": True,
         "previous_producer_id_update": "scala"}),
    "kafka-java-coordinator": Variant(
        "trunk after the Java TransactionMetadata (KAFKA-18884, August 2025) and before KAFKA-20310 "
        "(March 2026): every completed transition sets previousProducerId (as in 4.1.0+, KAFKA-15370); neither it nor "
        "lastProducerEpoch is written to the transaction log",
        {"init_producer_id": "kip360-shipped", "persist_last_epoch": False, "persist_prev_producer_id": False,
         "previous_producer_id_update": "every-transition"}),
    "kafka-2026-trunk": Variant(
        "trunk since KAFKA-20357 (April 2026) with transaction.version >= 1 (flexible records): the Java "
        "coordinator, PreviousProducerId (KAFKA-20310) and lastProducerEpoch (KAFKA-20357) persisted, so "
        "an InitProducerId retry survives a coordinator failover",
        {"init_producer_id": "kip360-shipped", "persist_last_epoch": True, "persist_prev_producer_id": True,
         "previous_producer_id_update": "every-transition"}),
}
