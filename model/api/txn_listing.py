"""The transaction coordinator's read-only admin answers (KIP-664, 3.0.0): DescribeTransactions for one
transactional id and ListTransactions over the cache, with the filters each version's request carries.

Read at the tags (``git show TAG:core/src/main/scala/kafka/coordinator/transaction/...``):
``TransactionCoordinator.handleDescribeTransactions`` (KAFKA-12267, 3f09fb97b6, first tag 3.0.0; the same decisions at
3.0.0, 3.9.1, 4.0.0, 4.1.0 and 4.2.0-rc1), ``handleListTransactions`` and
``TransactionStateManager.listTransactionStates`` (KAFKA-12369, 3708a7c6c1, first tag 3.0.0; the duration filter of
KIP-994, KAFKA-16265 b4e96913cc, first tag 3.8.0; the transactional-id pattern of KIP-1152, KAFKA-19073 0c1fbf3aeb,
first tag 4.1.0, not in 4.0.1). Neither request changes any state, and no machine of kafka.eos sends one: these rules
are the conformance interface's only.

The model's ``TxnMetadata`` keeps no timestamps (time is abstracted), so the duration filter reads each
transaction's start time and the coordinator's clock from the caller (the harness takes them from the vector).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple

from ..errors import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, Errors
from ..state import TxnMetadata
from ..transactions.codes import TxnState
from .coordinator import CoordinatorState
from .protocol import Protocol

#: ``TransactionState.fromName`` / ``stateName`` (the same names at 3.0.0 .. 4.2.0-rc1)
STATE_NAMES: dict[int, str] = {
    TxnState.EMPTY: "Empty", TxnState.ONGOING: "Ongoing", TxnState.PREPARE_COMMIT: "PrepareCommit",
    TxnState.PREPARE_ABORT: "PrepareAbort", TxnState.COMPLETE_COMMIT: "CompleteCommit",
    TxnState.COMPLETE_ABORT: "CompleteAbort", TxnState.DEAD: "Dead", TxnState.PREPARE_EPOCH_FENCE: "PrepareEpochFence",
}
_BY_NAME = {name: state for state, name in STATE_NAMES.items()}


def duration_filter(protocol: Protocol) -> bool:
    """ListTransactions v1's DurationFilter (KIP-994, 3.8.0); an older request has none (-1)."""
    return "kip-994" not in protocol.lacks


def pattern_filter(protocol: Protocol) -> bool:
    """ListTransactions v2's TransactionalIdPattern (KIP-1152, 4.1.0); an older request has none (null)."""
    return "kip-1152" not in protocol.lacks


class DescribedTransaction(NamedTuple):
    """``DescribeTransactionsResponseData.TransactionState``: the fields after ``error`` are set only with NONE."""

    transactional_id: str
    error: int
    producer_id: int = NO_PRODUCER_ID
    epoch: int = NO_PRODUCER_EPOCH
    state: int = -1
    partitions: tuple[int, ...] = ()


def describe_transaction(state: CoordinatorState, transactional_id: str, *, active: bool = True) -> DescribedTransaction:
    """``handleDescribeTransactions``: COORDINATOR_NOT_AVAILABLE before the coordinator started, INVALID_REQUEST for
    the empty id, the lookup's error (COORDINATOR_LOAD_IN_PROGRESS while the partition loads, NOT_COORDINATOR when it
    is not owned here), TRANSACTIONAL_ID_NOT_FOUND for an id with no metadata or one being expired (Dead); else the
    metadata's producer id, epoch, state and partitions (its timeout and start time too, which the model does not
    keep). A null id throws IllegalArgumentException in Kafka: KafkaApis never passes one."""
    def answer(error: int) -> DescribedTransaction:
        return DescribedTransaction(transactional_id, int(error))

    if not active:
        return answer(Errors.COORDINATOR_NOT_AVAILABLE)
    if transactional_id == "":
        return answer(Errors.INVALID_REQUEST)
    if state.loading:
        return answer(Errors.COORDINATOR_LOAD_IN_PROGRESS)
    if state.lookup_error:
        return answer(state.lookup_error)
    meta = state.metadata
    if not meta.exists or meta.state == TxnState.DEAD:
        return answer(Errors.TRANSACTIONAL_ID_NOT_FOUND)
    return DescribedTransaction(transactional_id, int(Errors.NONE), meta.producer_id, meta.epoch, meta.state,
                                meta.partitions)


class ListFilters(NamedTuple):
    """A ListTransactions request's filters (empty: no filter; ``duration_ms`` < 0 and no pattern: none)."""

    producer_ids: frozenset[int] = frozenset()
    state_names: tuple[str, ...] = ()
    duration_ms: int = -1
    transactional_id_pattern: str | None = None


class ListedTransaction(NamedTuple):
    transactional_id: str
    producer_id: int
    state: int


class ListAnswer(NamedTuple):
    error: int
    transactions: tuple[ListedTransaction, ...] = ()
    unknown_state_filters: tuple[str, ...] = ()
    #: the exception ``listTransactionStates`` throws ('' for none): InvalidRegularExpression for a pattern that does
    #: not compile, which KafkaApis' error handler answers INVALID_REGULAR_EXPRESSION (error 128, ``error``)
    exception: str = ""


class InvalidRegularExpression(ValueError):
    """Kafka's ``InvalidRegularExpression`` (``Errors.INVALID_REGULAR_EXPRESSION``, 128)."""


def _compiled(pattern: str | None) -> re.Pattern[str] | None:
    """``Pattern.compile`` of a non-empty pattern (null and "" filter nothing). Java's and Python's regular expressions
    agree on the common syntax (classes, groups, quantifiers, anchors); ``matches()`` is a whole-string match."""
    if not pattern:
        return None
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise InvalidRegularExpression(f"Transaction ID pattern `{pattern}` is not a valid regular expression: "
                                       f"{exc}.") from None


def list_transactions(cache: Mapping[str, TxnMetadata], filters: ListFilters, protocol: Protocol, *,
                      start_ms: Mapping[str, int] | None = None, now_ms: int = 0, loading: bool = False,
                      active: bool = True) -> ListAnswer:
    """``handleListTransactions`` / ``listTransactionStates``: COORDINATOR_NOT_AVAILABLE before the coordinator
    started, COORDINATOR_LOAD_IN_PROGRESS while any partition loads; else every cached transaction but the Dead ones
    that passes each filter given: its producer id among ``producer_ids``, its state among the known ``state_names``
    (an unknown name is listed back in ``unknown_state_filters`` and matches nothing), running for longer than
    ``duration_ms`` (``now - txnStartTimestamp > duration``, 3.8.0+), its id matching the whole pattern (4.1.0+). A
    profile whose request has no duration or pattern field reads neither (the request's default)."""
    if not active:
        return ListAnswer(int(Errors.COORDINATOR_NOT_AVAILABLE))
    if loading:
        return ListAnswer(int(Errors.COORDINATOR_LOAD_IN_PROGRESS))
    duration = filters.duration_ms if duration_filter(protocol) else -1
    unknown = tuple(dict.fromkeys(n for n in filters.state_names if n not in _BY_NAME))
    states = {_BY_NAME[n] for n in filters.state_names if n in _BY_NAME}
    try:
        pattern = _compiled(filters.transactional_id_pattern if pattern_filter(protocol) else None)
    except InvalidRegularExpression:
        return ListAnswer(int(Errors.INVALID_REGULAR_EXPRESSION), (), (), "InvalidRegularExpression")
    starts = start_ms or {}

    def included(tid: str, meta: TxnMetadata) -> bool:
        if meta.state == TxnState.DEAD:
            return False  # being expired or unloaded: never listed
        if filters.producer_ids and meta.producer_id not in filters.producer_ids:
            return False
        if filters.state_names and meta.state not in states:
            return False
        if duration >= 0 and now_ms - starts.get(tid, now_ms) <= duration:
            return False
        return pattern is None or pattern.fullmatch(tid) is not None

    listed = tuple(ListedTransaction(tid, meta.producer_id, meta.state)
                   for tid, meta in sorted(cache.items()) if meta.exists and included(tid, meta))
    return ListAnswer(int(Errors.NONE), listed, unknown)
