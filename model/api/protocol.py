"""``Protocol``: the switch values of one Kafka version, for every rule the interface reaches.

A profile is built from the model's own variants (``model.variants``, the pipeline's variants),
so the conformance harness checks the rules under the same switch values the specs use.
"""

from __future__ import annotations

from typing import NamedTuple

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
    #: (2.4.0's TransactionCoordinator; Errors has no code 90)
    producer_fenced: bool = True
    #: a client's EndTxn needs the metadata's exact epoch (KAFKA-9600, 2.6+); before, only a lower epoch was
    #: refused (2.4.0's endTransaction has no isFromClient: ``producerEpoch < txnMetadata.producerEpoch``)
    end_txn_exact_epoch: bool = True


#: what a profile can lack (``Protocol.lacks``) -> what it is and when Kafka got it
FEATURES: dict[str, str] = {
    "transaction-version-2": ("transaction version 2 (KIP-890 part 2: EndTxn v5, an epoch bump per transaction, "
                              "TransactionMetadata.clientTransactionVersion), released in 4.0"),
    "kip-360": ("KIP-360 (InitProducerId v3 with the producer's id and epoch, lastProducerEpoch, "
                "prepareIncrementProducerEpoch's expected epoch), released in 2.5"),
    "kip-447": "KIP-447 (TxnOffsetCommit v3 with member id and generation), released in 2.5",
    "kip-588": ("KIP-588 (PRODUCER_FENCED, error 90, from InitProducerId v4 / EndTxn, AddPartitionsToTxn and "
                "AddOffsetsToTxn v2), released in 2.7"),
    "kip-890-verification": "KIP-890 part 1 (the partition leader's transaction verification entry), released in 3.6",
    "transaction-abortable": ("the TRANSACTION_ABORTABLE error (code 120, KAFKA-16314, part of KIP-890) and the client's "
                              "abortable reaction to it, released in 3.8"),
}

#: feature -> the asserted state fields that do not exist in a version lacking it (TransactionMetadata got
#: lastProducerId and lastProducerEpoch with KIP-360): an expected value for one is left unchecked there
FEATURE_FIELDS: dict[str, tuple[str, ...]] = {
    "kip-360": ("prev_producer_id", "last_producer_epoch"),
}


def _idempotent(variant: str) -> dict[str, object]:
    values: dict[str, object] = {name: sw.default for name, sw in IDEMPOTENT_SWITCHES.items()}
    # a variant split by version keeps its name as a prefix ("broker-2.0-2.4" -> "broker-2.0-2.3", ...)
    name = variant if variant in IDEMPOTENT_VARIANTS else next(
        (v for v in IDEMPOTENT_VARIANTS if v.startswith(variant.rsplit("-", 1)[0])), "kafka-shipped")
    values.update(IDEMPOTENT_VARIANTS[name].switches)
    return values


def _profile(name: str, idempotent_variant: str, init_variant: str, **rest: object) -> Protocol:
    idem = _idempotent(idempotent_variant)
    return Protocol(
        name=name, init_producer_id=str(INIT_VARIANTS[init_variant].switches["init_producer_id"]),
        broker_unknown_producer=str(idem["broker_unknown_producer"]),
        broker_batch_cache=int(idem["broker_batch_cache"]),  # type: ignore[call-overload]
        broker_duplicate_sequence_error=bool(idem["broker_duplicate_sequence_error"]),
        broker_retain_producer_state=bool(idem["broker_retain_producer_state"]),
        client_version=str(idem["client_version"]), client_epoch_bump=str(idem["client_epoch_bump"]),
        **rest)  # type: ignore[arg-type]


#: 3.9 has the TransactionVersion feature enum but no TV2 path: EndTxn stops at v4 and TransactionMetadata keeps
#: no client transaction version
_NO_TV2 = frozenset({"transaction-version-2"})
#: before 2.5 (2.4.0's message definitions): InitProducerId stops at v2 (no producer id / epoch), TxnOffsetCommit at
#: v2 (no member / generation), EndTxn, AddPartitionsToTxn and AddOffsetsToTxn at v1; no verification (3.6)
_BEFORE_2_5 = _NO_TV2 | {"kip-360", "kip-447", "kip-588", "kip-890-verification", "transaction-abortable"}

#: profile name -> (doc, Protocol); the newest first
PROFILES: dict[str, tuple[str, Protocol]] = {
    "kafka-later-trunk": (("trunk after the 2024-10 snapshot (4.0+): EndTxn split by the request's "
                          "transaction version, TV2 CompleteX keeps lastProducerEpoch"),
                          _profile("kafka-later-trunk", "kafka-shipped", "kafka-later-trunk", end_txn="later-trunk",
                                   tv2_last_epoch="keep", down_convert_fenced=True, max_txn_timeout_ms=900000,
                                   txn_offset_commit="current", fence_at_max_epoch="keep")),
    "kafka-2024-10": (("the apache/kafka snapshot 1eb7644 (2024-10-25, between 3.9 and 4.0) the vectors "
                      "were read from: KIP-890 part 2 partly merged"),
                      _profile("kafka-2024-10", "kafka-shipped", "kafka-shipped", end_txn="snapshot-2024-10",
                               tv2_last_epoch="current", down_convert_fenced=True, max_txn_timeout_ms=900000,
                               txn_offset_commit="current")),
    "kafka-2.7-3.9": ("released 2.7 .. 3.9: KIP-360 as shipped, no transaction version 2",
                      _profile("kafka-2.7-3.9", "kafka-shipped", "kafka-shipped", end_txn="tv1",
                               tv2_last_epoch="keep", down_convert_fenced=True, max_txn_timeout_ms=900000,
                               txn_offset_commit="current", lacks=_NO_TV2)),
    "kafka-2.0-2.4": (("released 2.0 .. 2.4: before KIP-360 and KIP-447; the broker as 2.0 .. 2.3 (2.4.0 already "
                       "keeps a producer's state when the log start offset passes it, KAFKA-7190)"),
                      _profile("kafka-2.0-2.4", "broker-2.0-2.4", "pre-kip360", end_txn="tv1",
                               tv2_last_epoch="keep", down_convert_fenced=False, max_txn_timeout_ms=900000,
                               txn_offset_commit="pre-kip447", lacks=_BEFORE_2_5,
                               producer_fenced=False, end_txn_exact_epoch=False)),
}

DEFAULT_PROFILE = "kafka-2024-10"

#: known commits of apache/kafka -> profile (a vector file names the commit its tests were read at)
COMMIT_PROFILES: dict[str, str] = {
    "1eb7644349cb07139d6a3c1ad1986979647cac99": "kafka-2024-10",
}

#: for an unknown commit, its date decides: the first profile whose start is not after it
_DATE_PROFILES: tuple[tuple[str, str], ...] = (
    ("2025-01-01", "kafka-later-trunk"), ("2024-09-01", "kafka-2024-10"), ("2020-10-01", "kafka-2.7-3.9"),
    ("2018-07-01", "kafka-2.0-2.4"),
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


def protocol(name: str) -> Protocol:
    if name not in PROFILES:
        raise KeyError(f"unknown variant {name!r}; one of {', '.join(PROFILES)}")
    return PROFILES[name][1]
