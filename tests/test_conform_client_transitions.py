"""The producer client's transition table (``TransactionManager.State.isTransitionValid``) per profile, read at
the release tags 3.9.1, 4.0.0, 4.0.1, 4.1.0, 4.1.1 and 4.2.0-rc1 of apache/kafka
(clients/src/main/java/org/apache/kafka/clients/producer/internals/TransactionManager.java).

No TransactionManagerTest at those tags reaches a transition this file checks through a step the harness has:
KAFKA-18227's test (``testTransactionManagerEnablesV2``, 4.0.0 on) reaches COMMITTING_TRANSACTION -> INITIALIZING
through a broker's ApiVersions update (transaction.version 2 finalized), which the harness has no step for; the
2PC tests that reached PREPARED_TRANSACTION were removed with the public API (KAFKA-19414), leaving
``doInitTransactionsWith2PCEnabled`` uncalled at 4.1.0 (l.4366) and 4.2.0-rc1 (l.4367). So the table is checked
here directly, and through the harness on vectors written for this file (not Kafka tests).

The source lines, per tag:
- INITIALIZING's sources: 3.9.1 l.211-212 ``UNINITIALIZED || ABORTING_TRANSACTION``; 4.0.0 and 4.0.1 l.213-214
  ``UNINITIALIZED || COMMITTING_TRANSACTION || ABORTING_TRANSACTION`` (KAFKA-18227, 9f511c6304); 4.1.0 and 4.1.1
  l.167-168, 4.2.0-rc1 l.166-167, the same.
- PREPARED_TRANSACTION (KIP-939, KAFKA-19082 [3/4] 7f02c263a6): 4.1.0 and 4.1.1 l.173-178, 4.2.0-rc1 l.172-177:
  entered from IN_TRANSACTION or INITIALIZING; COMMITTING_TRANSACTION from IN_TRANSACTION or PREPARED_TRANSACTION;
  ABORTING_TRANSACTION also from PREPARED_TRANSACTION. 4.0.1 has no such state.
- Every other case is the same at 3.9.1, 4.0.0, 4.1.0 and 4.2.0-rc1 (3.6.0's table, KAFKA-13668).
- KAFKA-19272 (c7e4ff01cd, first tag 4.2.0-rc1): InitProducerIdHandler's NONE answer to a KeepPreparedTxn request
  naming an ongoing transaction enters PREPARED_TRANSACTION (4.2.0-rc1 l.1501-1513); 4.1.0 and 4.1.1 enter READY
  (l.1501-1502, "TO_DO Add code to handle transition to prepared_txn when keepPrepared = true").
- The way into INITIALIZING from a commit: beginCompletingTransaction's ``maybeUpdateTransactionV2Enabled(false)``
  sets clientSideEpochBumpRequired (4.0.0 l.354, 4.1.0 l.392, 4.2.0-rc1 l.390), then completeTransaction (4.0.0
  l.1272-1277) / resetTransactionState (4.1.0 l.1332-1337, 4.2.0-rc1 l.1330-1335) enters INITIALIZING.
"""

from __future__ import annotations

import itertools

import pytest
from conform_pins import FROM_4_0_0, FROM_4_1_0, run_vector
from eoscheck.model.api import client as api
from eoscheck.model.api.protocol import PROFILE_TABLE, PROFILES, SWITCH_HISTORY, history_value, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.producer import txn_calls as tc

ISE = "IllegalStateException"


def _pairs(table: tc.ClientTransitions) -> set[tuple[str, str]]:
    return {(s, t) for t, sources in tc.TRANSITIONS[table].items() for s in sources}


def test_each_table_is_declared_once_with_its_first_release() -> None:
    assert list(tc.TABLE_SINCE) == list(tc.TRANSITIONS)
    assert SWITCH_HISTORY["client_transitions"] == tuple((s.first, t) for t, s in tc.TABLE_SINCE.items())
    firsts = [s.first for s in tc.TABLE_SINCE.values()]
    assert firsts == sorted(firsts) and len(set(firsts)) == len(firsts)
    assert "KAFKA-18227" in tc.TABLE_SINCE["4.0"].evidence and "KIP-939" in tc.TABLE_SINCE["4.1"].evidence


def test_the_4x_tables_differ_from_the_one_before_only_where_the_source_does() -> None:
    assert _pairs("4.0") - _pairs("3.6") == {(tc.COMMITTING, tc.INITIALIZING)}
    assert _pairs("3.6") - _pairs("4.0") == set()
    assert _pairs("4.1") - _pairs("4.0") == {
        (tc.IN_TRANSACTION, tc.PREPARED), (tc.INITIALIZING, tc.PREPARED), (tc.PREPARED, tc.COMMITTING),
        (tc.PREPARED, tc.ABORTING), (tc.PREPARED, tc.FATAL_ERROR)}
    assert _pairs("4.0") - _pairs("4.1") == set()
    # PREPARED_TRANSACTION leaves only by commit or abort (or a fatal error): beginTransaction, a second
    # initTransactions and an abortable error are all refused from it
    assert {t for s, t in _pairs("4.1") if s == tc.PREPARED} == {tc.COMMITTING, tc.ABORTING, tc.FATAL_ERROR}
    assert tc.states("4.0") == tc.STATES and tc.PREPARED not in tc.STATES
    assert tc.states("4.1") == tc.STATES_KIP_939


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_each_profile_has_its_versions_table(name: str) -> None:
    p = protocol(name)
    entry = PROFILE_TABLE[p.name]
    assert history_value("client_transitions", entry.first) == p.client_transitions
    assert history_value("client_transitions", entry.last) == p.client_transitions
    # KAFKA-18227: 4.0.0 on (the 2024-10 snapshot 1eb7644 is before it)
    assert tc.transition_valid(tc.COMMITTING, tc.INITIALIZING, p.client_transitions) == (p.name in FROM_4_0_0)
    # KIP-939's client state goes with its InitProducerId v6: both 4.1.0 on
    has_prepared = tc.PREPARED in api.client_states(p.client_transitions)
    assert has_prepared == (p.name in FROM_4_1_0) == ("kip-939" not in p.lacks)


@pytest.mark.parametrize("name", sorted(FROM_4_1_0))
def test_a_prepared_transaction_can_only_be_committed_or_aborted(name: str) -> None:
    table = protocol(name).client_transitions
    started = tc.begin_transaction(tc.TxnClient(tc.READY), table).client
    prepared = tc.prepare_transaction(started, table)
    assert (prepared.exception, prepared.client.state) == ("", tc.PREPARED)
    c = prepared.client
    assert tc.begin_transaction(c, table).exception == ISE
    assert tc.maybe_add_partition(c, "tp0").exception == ISE
    assert tc.send_offsets_to_transaction(c).exception == ISE
    assert tc.prepare_transaction(c, table).exception == ISE
    assert tc.to_abortable_error(c, table).exception == ISE
    assert tc.begin_commit(c, table).client.state == tc.COMMITTING
    assert tc.begin_abort(c, table).client.state == tc.ABORTING
    assert tc.to_fatal_error(c, table).client.state == tc.FATAL_ERROR
    # only from IN_TRANSACTION among the calls (INITIALIZING reaches it through KAFKA-19272's answer)
    for state in (tc.READY, tc.COMMITTING, tc.ABORTING):
        assert tc.prepare_transaction(tc.TxnClient(state), table).exception == ISE, state


@pytest.mark.parametrize("name", sorted(set(PROFILE_TABLE) - FROM_4_1_0))
def test_no_prepare_before_kip_939(name: str) -> None:
    with pytest.raises(ValueError, match="KIP-939"):
        tc.prepare_transaction(tc.TxnClient(tc.IN_TRANSACTION), protocol(name).client_transitions)


@pytest.mark.parametrize("name", sorted(PROFILE_TABLE))
def test_a_commit_with_an_epoch_bump_pending_reinitializes_from_4_0(name: str) -> None:
    """completeTransaction with clientSideEpochBumpRequired after a commit (KAFKA-18227's TV2 upgrade bump): INITIALIZING
    from 4.0.0; before it the transition is invalid (no version before 4.0 sets the flag on a commit path)."""
    table = protocol(name).client_transitions
    committing = tc.TxnClient(tc.COMMITTING, started=True, added=frozenset({"tp0"}))
    r = tc.complete_transaction(committing, table, epoch_bump_required=True)
    if name in FROM_4_0_0:
        assert (r.exception, r.client.state, r.client.added) == ("", tc.INITIALIZING, frozenset())
    else:
        assert (r.client.state, r.client.added) == (tc.COMMITTING, frozenset({"tp0"})) and r.exception
    # an abort's bump is valid in every version with KIP-360
    aborting = tc.complete_transaction(committing._replace(state=tc.ABORTING), table, epoch_bump_required=True)
    assert (aborting.client.state == tc.INITIALIZING) == ("kip-360" not in protocol(name).lacks)


def _prepared_vector(call: str, exception: str | None) -> dict:
    return {"id": "PREPARED", "mechanism": "producer_client",
            "source": {"file": "clients/src/main/java/org/apache/kafka/clients/producer/internals/"
                               "TransactionManager.java", "test": "isTransitionValid (not a Kafka test)"},
            "initial_state": {"producer": {"transactional": True, "producer_id": 13131, "epoch": 1,
                                           "state": "PREPARED_TRANSACTION", "coordinator_supports_epoch_bump": True}},
            "steps": [{"input": {"call": f"transactionManager.{call}"}, "expected": {"exception": exception}}]}


@pytest.mark.parametrize("name", sorted(PROFILE_TABLE))
def test_the_harness_takes_a_prepared_client_from_4_1(name: str) -> None:
    refused = run_vector(_prepared_vector("beginTransaction()", ISE), name)
    committed = run_vector(_prepared_vector("beginCommit()", None), name)
    if name in FROM_4_1_0:
        assert (refused.outcome, committed.outcome) == (harness.AGREE, harness.AGREE), (refused.reason,
                                                                                        committed.reason)
        # a wrong expectation disagrees
        assert run_vector(_prepared_vector("beginTransaction()", None), name).outcome == harness.DISAGREE
    else:
        for r in (refused, committed):
            assert r.outcome == harness.NOT_EXPRESSIBLE and "PREPARED_TRANSACTION" in r.reason, r.reason


def test_the_tables_only_grow_from_3_6() -> None:
    grown: tuple[tc.ClientTransitions, ...] = ("3.6", "4.0", "4.1")
    for old, new in itertools.pairwise(grown):
        assert _pairs(old) <= _pairs(new)


@pytest.mark.parametrize("name", sorted(PROFILE_TABLE))
def test_an_init_answer_naming_an_ongoing_transaction_keeps_it_prepared_from_4_2(name: str) -> None:
    p = protocol(name)
    assert p.client_init_keeps_prepared == (name in {"kafka-4.2", "kafka-later-trunk"})
    assert history_value("client_init_keeps_prepared", PROFILE_TABLE[name].first) == p.client_init_keeps_prepared
    init = tc.TxnClient(tc.INITIALIZING, has_producer_id=False)

    def answered(keep: bool, ongoing: int) -> tc.CallResult:
        return tc.init_producer_id_answered(init, p.client_transitions, keep, ongoing, p.client_init_keeps_prepared)

    kept = answered(True, 4000)
    assert (kept.exception, kept.client.state) == ("", tc.PREPARED if p.client_init_keeps_prepared else tc.READY)
    # no ongoing transaction, or no KeepPreparedTxn: READY in every version
    assert answered(True, -1).client.state == tc.READY
    assert answered(False, 4000).client.state == tc.READY
