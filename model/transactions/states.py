"""Kafka's transaction-state transition table (``TransactionState``, ``TransactionMetadata``).

``prepareTransitionTo`` refuses a target state whose valid-previous-states set does not contain the
current state (IllegalStateException). The model checks every transition it makes against this table,
so an invalid transition is a property violation, not a silent state change.
"""

from __future__ import annotations

from .codes import TxnState

S = TxnState

#: target state -> the states it may be entered from (TransactionMetadata.scala, snapshot 2024-10)
VALID_PREVIOUS_STATES: dict[TxnState, frozenset[TxnState]] = {
    S.EMPTY: frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.ONGOING: frozenset({S.ONGOING, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.PREPARE_COMMIT: frozenset({S.ONGOING}),
    S.PREPARE_ABORT: frozenset({S.ONGOING, S.PREPARE_EPOCH_FENCE}),
    S.COMPLETE_COMMIT: frozenset({S.PREPARE_COMMIT}),
    S.COMPLETE_ABORT: frozenset({S.PREPARE_ABORT}),
    S.DEAD: frozenset({S.EMPTY, S.COMPLETE_ABORT, S.COMPLETE_COMMIT}),
    S.PREPARE_EPOCH_FENCE: frozenset({S.ONGOING}),
}

#: 4.0.0 on (KAFKA-14563, 755adf8a56, KIP-890 part 2): PrepareAbort also follows Empty / CompleteX, so that a TV2 client
#: unsure whether a partition was added can abort (4.0.0 TransactionMetadata.scala, 4.1.0 .. 4.2.0-rc1
#: TransactionState.java). Kafka's table takes them for every transaction version; the TV2 condition is in
#: ``completeTransitionTo`` (a new start time only for a TV2 transit) and in the coordinator's EndTxn, which answers a
#: TV0/1 abort from these states before any transition
TV2_EXTRA_PREVIOUS: dict[TxnState, frozenset[TxnState]] = {
    S.PREPARE_ABORT: frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
}

#: states in which the transactional id may expire (``TransactionState.isExpirationAllowed``)
EXPIRATION_ALLOWED = frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT})


def is_valid_transition(current: int, target: int, *, tv2: bool = False) -> bool:
    """Whether ``prepareTransitionTo(target)`` accepts ``current`` as the previous state; ``tv2``: the table of 4.0.0
    and later (``TV2_EXTRA_PREVIOUS``), which only versions with transaction version 2 have."""
    allowed = VALID_PREVIOUS_STATES[TxnState(target)]
    if tv2:
        allowed = allowed | TV2_EXTRA_PREVIOUS.get(TxnState(target), frozenset())
    return TxnState(current) in allowed


def is_prepare(state: int) -> bool:
    """PrepareCommit or PrepareAbort: markers are (or must be) in flight."""
    return state in (S.PREPARE_COMMIT, S.PREPARE_ABORT)


def is_complete(state: int) -> bool:
    return state in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT)
