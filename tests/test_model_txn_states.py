"""§6.1: Kafka's valid transaction-state transitions, every pair, and the codes' numbers."""

import itertools

import pytest
from eoscheck.model import errors as part1_errors
from eoscheck.model.transactions.codes import Errors, TxnResult, TxnState
from eoscheck.model.transactions.states import EXPIRATION_ALLOWED, is_valid_transition

S = TxnState

# (previous, target) pairs allowed, transcribed from the reference's §6.1 table row by row
ALLOWED = {
    (S.EMPTY, S.EMPTY), (S.COMPLETE_COMMIT, S.EMPTY), (S.COMPLETE_ABORT, S.EMPTY),
    (S.ONGOING, S.ONGOING), (S.EMPTY, S.ONGOING), (S.COMPLETE_COMMIT, S.ONGOING), (S.COMPLETE_ABORT, S.ONGOING),
    (S.ONGOING, S.PREPARE_COMMIT),
    (S.ONGOING, S.PREPARE_ABORT), (S.PREPARE_EPOCH_FENCE, S.PREPARE_ABORT),
    (S.PREPARE_COMMIT, S.COMPLETE_COMMIT),
    (S.PREPARE_ABORT, S.COMPLETE_ABORT),
    (S.EMPTY, S.DEAD), (S.COMPLETE_ABORT, S.DEAD), (S.COMPLETE_COMMIT, S.DEAD),
    (S.ONGOING, S.PREPARE_EPOCH_FENCE),
}


@pytest.mark.parametrize("prev,target", list(itertools.product(S, S)))
def test_every_transition_pair(prev, target):
    assert is_valid_transition(prev, target) == ((prev, target) in ALLOWED)


def test_tv2_abort_without_partitions_may_start_from_empty_or_complete():
    for prev in (S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
        assert not is_valid_transition(prev, S.PREPARE_ABORT)
        assert is_valid_transition(prev, S.PREPARE_ABORT, tv2=True)
    assert not is_valid_transition(S.EMPTY, S.PREPARE_COMMIT, tv2=True)


def test_expiration_allowed_only_when_no_transaction_is_open():
    assert EXPIRATION_ALLOWED == {S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}


def test_state_ids_are_the_transaction_log_ids():
    assert [(s.name, int(s)) for s in S] == [
        ("EMPTY", 0), ("ONGOING", 1), ("PREPARE_COMMIT", 2), ("PREPARE_ABORT", 3), ("COMPLETE_COMMIT", 4),
        ("COMPLETE_ABORT", 5), ("DEAD", 6), ("PREPARE_EPOCH_FENCE", 7)]
    assert (TxnResult.ABORT, TxnResult.COMMIT) == (0, 1)


def test_error_numbers_are_kafkas():
    expected = {"NONE": 0, "UNKNOWN_SERVER_ERROR": -1, "UNKNOWN_TOPIC_OR_PARTITION": 3, "LEADER_NOT_AVAILABLE": 5,
                "NOT_LEADER_OR_FOLLOWER": 6,
                "REQUEST_TIMED_OUT": 7, "CORRUPT_MESSAGE": 2, "MESSAGE_TOO_LARGE": 10, "RECORD_LIST_TOO_LARGE": 18,
                "NOT_ENOUGH_REPLICAS_AFTER_APPEND": 20, "INVALID_REQUIRED_ACKS": 21, "UNSUPPORTED_VERSION": 35,
                "UNSUPPORTED_FOR_MESSAGE_FORMAT": 43, "OPERATION_NOT_ATTEMPTED": 55, "KAFKA_STORAGE_ERROR": 56, "COORDINATOR_LOAD_IN_PROGRESS": 14, "COORDINATOR_NOT_AVAILABLE": 15,
                "NOT_COORDINATOR": 16, "NOT_ENOUGH_REPLICAS": 19, "ILLEGAL_GENERATION": 22, "INVALID_GROUP_ID": 24,
                "UNKNOWN_MEMBER_ID": 25, "REBALANCE_IN_PROGRESS": 27, "GROUP_AUTHORIZATION_FAILED": 30, "INVALID_REQUEST": 42,
                "OUT_OF_ORDER_SEQUENCE_NUMBER": 45, "DUPLICATE_SEQUENCE_NUMBER": 46, "INVALID_PRODUCER_EPOCH": 47,
                "INVALID_TXN_STATE": 48, "INVALID_PRODUCER_ID_MAPPING": 49, "INVALID_TRANSACTION_TIMEOUT": 50,
                "CONCURRENT_TRANSACTIONS": 51,
                "TRANSACTION_COORDINATOR_FENCED": 52, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED": 53, "UNKNOWN_PRODUCER_ID": 59, "FENCED_INSTANCE_ID": 82,
                "UNSTABLE_OFFSET_COMMIT": 88, "PRODUCER_FENCED": 90, "TRANSACTION_ABORTABLE": 120,
                "NETWORK_EXCEPTION": 13,
                # the conformance interface's (session 25): authorization, OffsetDelete, DescribeTransactions and
                # ListTransactions answers, as 4.2.0-rc1's Errors.java numbers them
                "TOPIC_AUTHORIZATION_FAILED": 29, "CLUSTER_AUTHORIZATION_FAILED": 31, "GROUP_SUBSCRIBED_TO_TOPIC": 86,
                "TRANSACTIONAL_ID_NOT_FOUND": 105, "INVALID_REGULAR_EXPRESSION": 128,
                # session 26: TxnOffsetCommit's metadata size
                "OFFSET_METADATA_TOO_LARGE": 12,
                # session 27: a produce answer with record errors (KIP-467)
                "INVALID_RECORD": 87}
    assert {e.name: int(e) for e in Errors} == expected


def test_codes_errors_is_part_1s_enum():
    # one enum of Kafka's codes: the transactions room re-exports model.errors
    assert Errors is part1_errors.Errors


def test_retriable_codes_follow_the_reference():
    # §0's table: UNKNOWN_TOPIC_OR_PARTITION and UNSTABLE_OFFSET_COMMIT are retriable, the group/fencing ones not
    assert {Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.UNSTABLE_OFFSET_COMMIT} <= part1_errors.RETRIABLE
    assert not {Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID, Errors.FENCED_INSTANCE_ID,
                Errors.TRANSACTION_COORDINATOR_FENCED, Errors.TRANSACTION_ABORTABLE} & part1_errors.RETRIABLE


def test_part2_rules_described_for_the_prover_evaluate_concretely():
    from eoscheck.checker.ops import CONCRETE
    from eoscheck.model.transactions.rules import RULES

    samples = {1: True, 16: 0, 32: 0, 64: 5}
    for rule in RULES.values():
        args = {name: samples[width] if kind == "int" else True for name, width, kind in rule.args}
        out = rule.func(CONCRETE, **args)
        assert len(out if isinstance(out, tuple) else (out,)) == len(rule.returns), rule.name


def test_one_transaction_metadata_record():
    # the coordinator's per-transactional-id metadata is one record for both halves of the model
    from eoscheck.model.state import TxnMetadata
    from eoscheck.model.transactions.metadata import TxnMeta, new_metadata

    assert TxnMeta is TxnMetadata
    assert TxnMetadata._fields[-4:] == ("pending_state", "partitions", "next_producer_id", "tv")
    m = TxnMetadata(True, 3, -1, 0, -1, int(S.EMPTY), False)  # part 1's seven fields: not pending, no partitions
    assert (m.pending_state, m.partitions, m.next_producer_id, m.tv) == (-1, (), -1, 0)
    assert new_metadata(3)._replace(epoch=0) == m
