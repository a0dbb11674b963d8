"""Session 27's vectors (``tests/data/kafka-unit-test-vectors.more23.json``): SenderTest's producer without a
TransactionManager (retries, guaranteeMessageOrder's mute, the in-flight expiry, no split of an expired batch, the
exceptions a failed batch's records get), pinned per profile; comparisons that can fail; the rules on their own."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conform_pins import assert_pinned, outcome_totals
from eoscheck.model.api.protocol import PROFILES, history_value, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors, parse_vectors
from eoscheck.model.errors import Errors
from eoscheck.model.producer.no_idempotence import (
    attempts_left,
    can_retry,
    is_retriable,
    record_exceptions,
    splits,
    top_level_exception,
)

MORE23 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more23.json"
ALL = tuple(f"CLI-{n}" for n in range(340, 350))
#: the vectors that expire a batch in flight (KIP-91) and that read KIP-467's error message or record errors
EXPIRY = ("CLI-343", "CLI-344", "CLI-345", "CLI-346")
KIP_467 = ("CLI-347", "CLI-349")


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    """The pin from the profile: without KIP-91 the expiry vectors, without KIP-467 the record errors and the error
    message are not expressible; before KAFKA-12548 (3.0.0) every record gets the top-level exception (CLI-347
    disagrees), before PR 9450 (2.7.0) with the error's default message (CLI-349 disagrees)."""
    p = protocol(name)
    inexpressible = {v: "kip-91" for v in EXPIRY if "kip-91" in p.lacks}
    inexpressible.update({v: "kip-467" for v in KIP_467 if "kip-467" in p.lacks})
    disagree: dict[str, str] = {}
    if p.client_produce_exception != "record-errors" and "CLI-347" not in inexpressible:
        disagree["CLI-347"] = "every record gets the top-level InvalidRecordException"
    if p.client_produce_exception == "code" and "CLI-349" not in inexpressible:
        disagree["CLI-349"] = "the exception keeps the error's default message"
    return disagree, inexpressible


def test_the_pins_name_the_profiles_read() -> None:
    assert _derived("kafka-2.0.0") == ({}, {**dict.fromkeys(EXPIRY, "kip-91"), **dict.fromkeys(KIP_467, "kip-467")})
    assert set(_derived("kafka-2.4.0")[0]) == set(_derived("kafka-2.6")[0]) == {"CLI-347", "CLI-349"}
    assert set(_derived("kafka-2.7-2.8")[0]) == {"CLI-347"}
    assert _derived("kafka-3.0-3.1.0") == _derived("kafka-4.2") == ({}, {})


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more23_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE23), name, disagree, inexpressible)


def test_the_default_run_judges_them_under_the_commits_profile() -> None:
    run = harness.run_file(load_vectors(MORE23))
    assert outcome_totals(run) == {"agree": 10, "disagree": 0, "not expressible": 0}
    assert {v.variant for v in run.vectors} == {"kafka-2024-10"}


def _run_changed(vid: str, change: Callable[[dict], object], variant: str | None = None) -> str:
    data = json.loads(MORE23.read_text())
    data["vectors"] = [copy.deepcopy(v) for v in data["vectors"] if v["id"] == vid]
    change(data["vectors"][0])
    (v,) = harness.run_file(parse_vectors(data), variant).vectors
    return v.outcome


def test_the_comparisons_can_fail() -> None:
    # retries=2 retries the second disconnect of r2
    assert _run_changed("CLI-341", lambda v: v["initial_state"]["producer"].update(retries=2)) == harness.DISAGREE
    # without max.in.flight 1 the second batch is drained at once
    assert _run_changed("CLI-342", lambda v: v["initial_state"]["producer"].pop(
        "max_in_flight_requests_per_connection")) == harness.DISAGREE
    assert _run_changed("CLI-344", lambda v: v["initial_state"]["producer"].pop(
        "max_in_flight_requests_per_connection")) == harness.DISAGREE
    # the expiry alone does not unmute: r2 stays undrained until r1's answer is read
    def expiry_without_answer(v: dict) -> None:
        v["steps"][2]["input"]["event"] = "runOnce(); expire r1"
        v["steps"][2]["expected"] = {"sent": [], "muted_partitions": ["tp0"], "in_flight_requests": 1}
        v["steps"][3]["expected"] = {"sent": []}
    assert _run_changed("CLI-344", expiry_without_answer) == harness.AGREE
    # without the expiry the answer NONE completes the batch
    assert _run_changed("CLI-343", lambda v: v["steps"][1]["input"].update(event="response r1")) == harness.DISAGREE
    # without the expiry MESSAGE_TOO_LARGE splits the two records (named for the split)
    def split(v: dict) -> None:
        v["steps"][1]["input"]["event"] = "response r1 split into r2, r3"
        v["steps"][1]["expected"] = {"split_batches": ["r2", "r3"], "batches_done": {"r1": False}}
        v["steps"][2]["expected"] = {"sent": ["r2"], "in_flight_requests": 1, "undrained_batches": ["r3"]}
    assert _run_changed("CLI-346", split) == harness.AGREE
    # one record error: the error's own exception, not InvalidRecordException
    def one_error(v: dict) -> None:
        v["steps"][1]["input"]["record_errors"] = {"0": "0"}
        v["steps"][1]["expected"]["record_exceptions"] = {"0": "InvalidRecordException", "1": "KafkaException"}
        v["steps"][1]["expected"]["record_messages"] = {"0": "0"}
    assert _run_changed("CLI-347", one_error) == harness.AGREE
    assert _run_changed("CLI-348", lambda v: v["steps"][1]["input"].update(error_message="x")) == harness.DISAGREE
    assert _run_changed("CLI-349", lambda v: v["steps"][1]["input"].pop("error_message")) == harness.DISAGREE


def test_the_rules_on_their_own() -> None:
    assert is_retriable(Errors.NETWORK_EXCEPTION) and not is_retriable(Errors.INVALID_REQUEST)
    assert attempts_left(0, 1) and not attempts_left(1, 1)
    assert not can_retry(Errors.NOT_LEADER_OR_FOLLOWER, attempts_left=True, done=True, delivery_timed_out=False,
                         kip_91=True)
    assert splits(Errors.MESSAGE_TOO_LARGE, 2, done=False)
    assert not splits(Errors.MESSAGE_TOO_LARGE, 2, done=True) and not splits(Errors.MESSAGE_TOO_LARGE, 1, done=False)
    assert top_level_exception(Errors.MESSAGE_TOO_LARGE) == "RecordTooLargeException"
    assert top_level_exception(Errors.NETWORK_EXCEPTION) == "NetworkException"
    three = record_exceptions(Errors.INVALID_RECORD, 3, "top", {1: None, 2: "m"}, "record-errors")
    assert [(r.exception, r.message) for r in three] == [
        ("KafkaException", None), ("InvalidRecordException", "top"), ("InvalidRecordException", "m")]
    assert {r.message for r in record_exceptions(Errors.INVALID_RECORD, 2, "top", {0: "m"}, "message")} == {"top"}
    assert {r.message for r in record_exceptions(Errors.INVALID_RECORD, 2, "top", {0: "m"}, "code")} == {
        "Errors.INVALID_RECORD.message()"}
    # the authorization errors keep Sender's own exceptions
    assert record_exceptions(Errors.TOPIC_AUTHORIZATION_FAILED, 1, "x", {}, "record-errors")[0].exception \
        == "TopicAuthorizationException"


def test_the_switch_history_is_the_profiles() -> None:
    assert history_value("client_produce_exception", (2, 6, 3)) == "code"
    assert history_value("client_produce_exception", (2, 8, 2)) == "message"
    assert history_value("client_produce_exception", (3, 0, 0)) == "record-errors"
