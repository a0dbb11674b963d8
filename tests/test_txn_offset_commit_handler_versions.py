"""``TxnOffsetCommitHandler``'s table per release (fid16; read at every tag 2.0.0 .. 3.9.0 of apache/kafka,
``clients/.../producer/internals/TransactionManager.java`` and ``common/protocol/Errors.java``):
GROUP_AUTHORIZATION_FAILED is abortable in every version; COORDINATOR_LOAD_IN_PROGRESS is retried from 2.0.1
(KAFKA-7296); the group's fencing is named (abortable) from 2.5.0 (KIP-447), an unexpected, fatal error before;
INVALID_PRODUCER_EPOCH raises InvalidProducerEpochException in 2.7.0-3.5.2 (``isFatalException`` ->
``error.exception()`` after KIP-588) and ProducerFencedException before (code 47's exception) and after
(KAFKA-14278, 3.6.0)."""

from __future__ import annotations

import pytest
from eoscheck.model.api.protocol import PROFILE_TABLE, SWITCH_HISTORY, history_value, protocol, version
from eoscheck.model.errors import Errors
from eoscheck.model.producer.txn_offsets_client import (
    ABORTABLE,
    FATAL,
    HANDLERS,
    RETRY,
    OffsetCommitReaction,
    on_txn_offset_commit_error,
)


def _at(release: str, error: Errors) -> OffsetCommitReaction:
    """The reaction of the release's client, by its profile's switches."""
    (name,) = [n for n, p in PROFILE_TABLE.items() if p.first <= version(release) <= p.last]
    p = protocol(name)
    return on_txn_offset_commit_error(int(error), any_retriable=p.txn_offset_commit_any_retriable,
                                      handler=p.txn_offset_commit_handler)


@pytest.mark.parametrize("release", ["2.0.0", "2.0.1", "2.4.1", "2.5.0", "2.6.3", "2.7.0", "3.5.2", "3.6.0", "3.8.0"])
def test_group_authorization_is_abortable_in_every_version(release: str) -> None:
    assert _at(release, Errors.GROUP_AUTHORIZATION_FAILED) == (ABORTABLE, "GroupAuthorizationException")
    assert _at(release, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED) == (FATAL,
                                                                          "TransactionalIdAuthorizationException")


@pytest.mark.parametrize(("release", "label"), [
    ("2.0.0", "ProducerFencedException"), ("2.4.1", "ProducerFencedException"), ("2.6.3", "ProducerFencedException"),
    ("2.7.0", "InvalidProducerEpochException"), ("3.0.0", "InvalidProducerEpochException"),
    ("3.5.2", "InvalidProducerEpochException"), ("3.6.0", "ProducerFencedException"),
    ("3.9.0", "ProducerFencedException")])
def test_invalid_producer_epoch_is_fatal_with_the_versions_exception(release: str, label: str) -> None:
    assert _at(release, Errors.INVALID_PRODUCER_EPOCH) == (FATAL, label)


@pytest.mark.parametrize(("release", "fenced"), [("2.6.3", (FATAL, "KafkaException")),
                                                 ("2.7.0", (FATAL, "ProducerFencedException")),
                                                 ("3.6.0", (FATAL, "ProducerFencedException"))])
def test_producer_fenced_has_no_code_before_2_7(release: str, fenced: tuple[str, str]) -> None:
    # Errors.forCode(90) before KAFKA-9911 is UNKNOWN_SERVER_ERROR: "Unexpected error" (no such broker sends it)
    assert _at(release, Errors.PRODUCER_FENCED) == fenced


@pytest.mark.parametrize(("release", "action"), [("2.0.0", FATAL), ("2.0.1", RETRY), ("2.3.1", RETRY), ("3.7.1", RETRY),
                                                 ("3.8.0", RETRY)])
def test_a_loading_coordinator_is_retried_from_2_0_1(release: str, action: str) -> None:
    assert _at(release, Errors.COORDINATOR_LOAD_IN_PROGRESS).action == action


@pytest.mark.parametrize("error", [Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION, Errors.FENCED_INSTANCE_ID])
def test_the_group_fencing_is_unexpected_before_kip_447(error: Errors) -> None:
    assert _at("2.4.1", error) == (FATAL, "KafkaException")
    assert _at("2.0.0", error) == (FATAL, "KafkaException")
    assert _at("2.5.0", error).action == ABORTABLE
    assert _at("3.9.0", error).action == ABORTABLE


def test_the_handler_switch_follows_its_history() -> None:
    assert set(dict(SWITCH_HISTORY["txn_offset_commit_handler"]).values()) == set(HANDLERS)
    assert history_value("txn_offset_commit_handler", version("2.0.0")) == "2.0.0"
    assert history_value("txn_offset_commit_handler", version("2.0.1")) == "2.0.1"
    assert protocol("kafka-2.0-2.3").name == "kafka-2.0.1"  # the old name, an alias (of kafka-2.0.1 since KIP-211's split)
    with pytest.raises(ValueError, match="unknown TxnOffsetCommit handler"):
        on_txn_offset_commit_error(int(Errors.NONE), handler="1.0")
