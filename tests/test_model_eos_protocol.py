"""model/protocol.py: the typed protocol switch set, its named variants, refusals and the legacy aliases."""

from __future__ import annotations

from dataclasses import fields
from enum import Enum

import pytest
from eoscheck.checker.cli import main
from eoscheck.model import protocol as P
from eoscheck.model.machines import eos_pipeline
from eoscheck.model.machines.eos import SUPPORT, EosMachine
from eoscheck.model.machines.eos_model import BOUNDS
from eoscheck.model.variants import (
    IDEMPOTENT_SWITCHES,
    IDEMPOTENT_VARIANTS,
    INIT_SWITCHES,
    INIT_VARIANTS,
)

LEGACY = {P.IDEMPOTENT: (IDEMPOTENT_SWITCHES, IDEMPOTENT_VARIANTS), P.INIT: (INIT_SWITCHES, INIT_VARIANTS),
          P.PIPELINE: (eos_pipeline.SWITCHES, eos_pipeline.VARIANTS)}


@pytest.mark.parametrize(("machine", "name"), sorted(P.LEGACY_ALIASES))
def test_legacy_alias_reproduces_the_old_variant_exactly(machine: str, name: str) -> None:
    switches, variants = LEGACY[machine]
    expected = {k: s.default for k, s in switches.items()}
    expected.update(variants[name].switches)
    assert P.legacy_switches(P.resolve(name, machine), machine) == expected


def test_every_old_variant_name_has_an_alias() -> None:
    for machine, (_, variants) in LEGACY.items():
        assert set(variants) == {n for m, n in P.LEGACY_ALIASES if m == machine}, machine


def test_every_decision_is_typed_documented_and_referenced() -> None:
    switches = P.protocol_switches()
    assert set(switches) == {f.name for f in fields(P.Protocol)}
    for f in fields(P.Protocol):
        assert f.metadata["doc"] and f.metadata["ref"], f.name
        assert f.metadata["ref"] in switches[f.name].doc
        if isinstance(f.default, Enum):
            assert switches[f.name].choices == tuple(e.value for e in type(f.default))
        else:
            assert isinstance(f.default, (bool, int)) and not switches[f.name].choices


def test_switch_values_round_trip_through_the_dataclass() -> None:
    for name, v in P.VARIANTS.items():
        assert P.from_switches(v.protocol.as_switches()) == v.protocol, name
        assert v.protocol.consistency_error() is None, name


def test_kafka_releases_differ_by_the_fixes_they_shipped() -> None:
    def diff(a: P.Protocol, b: P.Protocol) -> set[str]:
        return {f.name for f in fields(P.Protocol) if getattr(a, f.name) != getattr(b, f.name)}
    assert diff(P.KAFKA_0_11_0_0, P.KAFKA_0_11_0_2) == {"timeout_abort_bumps_epoch"}  # KAFKA-6119
    # KAFKA-6683; the variant's 2.0-2.3 part has KAFKA-6917's asynchronous offsets completion
    assert diff(P.KAFKA_1_0_0, P.KAFKA_1_0_2) == {"broker_duplicate_sequence_error", "txn_offsets_completion_async"}
    assert diff(P.KAFKA_1_0_2, P.KAFKA_2_4) == {"broker_retain_producer_state"}  # KAFKA-7190
    assert diff(P.KAFKA_3_0, P.KAFKA_3_6) == {"partition_verification"}  # KIP-890 part 1
    # KAFKA-16314 and PR 15266, both 3.8.0
    assert diff(P.KAFKA_3_6, P.KAFKA_3_8) == {"verification_abortable", "client_transaction_abortable",
                                              "client_txn_offset_commit_any_retriable"}
    assert diff(P.KAFKA_3_8, P.KAFKA_4_0) == {"transaction_version", "client_epoch_bump_after_abort",
                                              "client_pid_mapping_fatal",  # KAFKA-18019
                                              "client_produce_pid_mapping_fatal",  # KAFKA-14563 (755adf8a56)
                                              "txn_offsets_completion_async",  # KAFKA-17507
                                              "add_partitions_pending_first",  # KAFKA-18660
                                              "tv2_marker_keeps_verification",  # KAFKA-18654 [1/2]
                                              "verification_ongoing_at_epoch"}  # KAFKA-14563 (755adf8a56)
    # the January 2025 development trunks: KAFKA-18660 (January 30), then KAFKA-18464 (January 10) before it
    assert diff(P.KAFKA_4_0_DEV_2025_01_28, P.KAFKA_4_0) == {"tv2_rotation_answer_next_producer_id",
                                                             "add_partitions_pending_first",
                                                             "tv2_end_txn_pending_before_producer_id",
                                                             "tv2_marker_keeps_verification"}  # February 3
    assert diff(P.KAFKA_4_0_DEV_2025_01_09, P.KAFKA_4_0_DEV_2025_01_28) == {"tv2_end_txn_pending_first"}
    # with the leader's add: the trunks of 10-21 and 22-29 January differ by KAFKA-18575 alone (January 22), and
    # 10-21 January differs from 4.0.0 by the fixes above, not by the leader's check (epoch-aware in both)
    assert diff(P.KAFKA_4_0_DEV_2025_01, P.KAFKA_4_0_DEV_2025_01_28_LEADER_ADD) == {"tv2_leader_concurrent_below_epoch"}
    assert diff(P.KAFKA_4_0_DEV_2025_01_28, P.KAFKA_4_0_DEV_2025_01) == {"tv2_partition_add"}
    # the counterfactual: 3.x's epoch-blind hasOngoingTransaction at the leader's add and at a TV1 batch's verification
    assert diff(P.KAFKA_4_0_LEADER_ADD, P.TV2_LEADER_ADD_EPOCH_BLIND) == {"tv2_partition_add",
                                                                         "verification_ongoing_at_epoch"}
    assert diff(P.KAFKA_4_0, P.KAFKA_JAVA_COORDINATOR) == {"tv2_fence_double_bump",  # KAFKA-19367
                                                           "tv2_failed_fence_leaves_epoch",  # its follow-up
                                                           "previous_producer_id_update",  # KAFKA-18884
                                                           "verification_rejects_lower_epoch",  # KAFKA-18042
                                                           "tv2_new_producer_sequence_zero",  # KAFKA-18202
                                                           "client_batch_error_wrapped_abortable",  # KAFKA-19176
                                                           "client_abort_abortable_fatal"}  # KAFKA-19250
    assert diff(P.KAFKA_2_4, P.KAFKA_2_4_1) == {"marker_sets_producer_timestamp"}  # KAFKA-9144
    # KAFKA-19446; KAFKA-19690 (September 2025) is on trunk since
    assert diff(P.KAFKA_JAVA_COORDINATOR, P.KAFKA_TRUNK_2025_12) == {"tv2_marker_epoch_check",
                                                                     "stale_epoch_before_verification"}
    assert diff(P.KAFKA_3_8, P.KAFKA_3_9_KAFKA_19690) == {"stale_epoch_before_verification"}  # KAFKA-19690
    assert diff(P.KAFKA_TRUNK_2025_12, P.KAFKA_TRUNK_2026_01) == {"tv2_marker_epoch_check"}  # KAFKA-19999
    assert diff(P.KAFKA_TRUNK_2026_01, P.KAFKA_TRUNK_2026) == {"persist_prev_producer_id", "persist_last_epoch"}
    assert not P.KAFKA_2_4.invalid_producer_epoch_abortable and P.KAFKA_2_5.invalid_producer_epoch_abortable


def test_the_4x_release_variants_differ_from_kafka_4_0_by_what_their_tags_show() -> None:
    """Read at the release tags of a mirror with the upstream tags (docs/kafka-versions.md, 4.x table)."""
    def diff(a: P.Protocol, b: P.Protocol) -> set[str]:
        return {f.name for f in fields(P.Protocol) if getattr(a, f.name) != getattr(b, f.name)}
    base = P.VARIANTS["kafka-4.0"].protocol
    # the leader's KAFKA-18042 and KAFKA-18202, the client's KAFKA-19176 and KAFKA-19250: all first tagged 4.1.0
    LEADER_4_1 = ("verification_rejects_lower_epoch", "tv2_new_producer_sequence_zero",
                  "client_batch_error_wrapped_abortable", "client_abort_abortable_fatal")
    assert base == P.KAFKA_4_0 and base.tv2_fence_double_bump  # the 4.0.0 tag: two bumps per fence-abort
    expected = {
        # KAFKA-19367's 4.0 cherry-pick (PRs 19958, 19991)
        "kafka-4.0.1": {"tv2_fence_double_bump", "tv2_failed_fence_leaves_epoch"},
        # + KAFKA-15370 [1/N] (PR 17687): prepareTransitionTo stamps prevProducerId on every transit; the leader's
        # KAFKA-18042 (PR 19844) and KAFKA-18202 (PR 19902)
        "kafka-4.1.0": {"tv2_fence_double_bump", "tv2_failed_fence_leaves_epoch", "previous_producer_id_update",
                        *LEADER_4_1},
        # + KAFKA-19690 (PR 20618)
        "kafka-4.1.1": {"tv2_fence_double_bump", "tv2_failed_fence_leaves_epoch", "previous_producer_id_update",
                        "stale_epoch_before_verification", *LEADER_4_1},
        # + KAFKA-19446 [3/3] and KAFKA-19999 (ProducerAppendInfo.checkProducerEpoch)
        "kafka-4.2.0-rc1": {"tv2_fence_double_bump", "tv2_failed_fence_leaves_epoch", "previous_producer_id_update",
                            "stale_epoch_before_verification", "tv2_marker_epoch_check", *LEADER_4_1},
    }
    for name, changed in expected.items():
        variant = P.VARIANTS[name]
        assert diff(base, variant.protocol) == changed, name
        assert f"(tag {name.removeprefix('kafka-')}" in variant.doc, name
    got = {name: P.VARIANTS[name].protocol for name in expected}
    assert not got["kafka-4.0.1"].tv2_fence_double_bump
    assert got["kafka-4.1.0"].previous_producer_id_update == P.PreviousProducerIdUpdate.EVERY_TRANSITION
    assert got["kafka-4.1.1"].stale_epoch_before_verification and not got["kafka-4.1.0"].stale_epoch_before_verification
    assert got["kafka-4.2.0-rc1"].tv2_marker_epoch_check == P.Tv2MarkerEpochCheck.STRICT_RETRY
    # nothing persisted beyond 4.0.0's record up to 4.2.0-rc1 (TransactionLog.valueToBytes); KAFKA-20310 / -20357 later
    assert not any(p.persist_prev_producer_id or p.persist_last_epoch for p in got.values())
    # two releases have the switches of the trunk snapshots modelled before the tags were read
    assert got["kafka-4.1.0"] == P.KAFKA_JAVA_COORDINATOR and got["kafka-4.2.0-rc1"] == P.KAFKA_TRUNK_2026_01
    # every new release variant resolves by name for kafka.eos and for the pipeline's legacy adapter
    for name in expected:
        assert P.resolve(name) == got[name] and P.resolve(name, P.PIPELINE) == got[name]


def test_kafka_eos_passes_the_fence_bump_decision_to_the_timeout_abort() -> None:
    from eoscheck.model.state import TxnMetadata
    from eoscheck.model.transactions.codes import TxnState
    bounds = {n: b.default for n, b in BOUNDS.items()}
    ongoing = TxnMetadata(True, 3, -1, 1, 0, int(TxnState.ONGOING), False, -1, (0,), -1, 2)
    epochs = {name: EosMachine(P.VARIANTS[name].protocol, bounds).timeout_abort(ongoing)["txn"].epoch
              for name in ("kafka-4.0", "kafka-java-coordinator")}
    assert epochs == {"kafka-4.0": 3, "kafka-java-coordinator": 2}  # two bumps before KAFKA-19367, one after


def test_kafka_eos_failed_tv2_fence_leaves_the_metadata_after_kafka_19367() -> None:
    """FenceAppendFails and InstanceFenceAppendFails share ``failed_fence``: 4.0.0 leaves the fenced epoch in memory
    with hasFailedEpochFence (as TV1 does since KAFKA-9666), 4.0.1 / 4.1.0 leave the metadata as it was; a TV1
    server keeps KAFKA-9666's rule whatever the switch (the coordinator's abort uses the server's version)."""
    from eoscheck.model.state import TxnMetadata
    from eoscheck.model.transactions.codes import TxnState
    bounds = {n: b.default for n, b in BOUNDS.items()}
    ongoing = TxnMetadata(True, 3, -1, 1, 0, int(TxnState.ONGOING), False, -1, (0,), -1, 2)
    after = {name: EosMachine(P.VARIANTS[name].protocol, bounds).failed_fence(ongoing)
             for name in ("kafka-4.0", "kafka-java-coordinator", "kafka-trunk-2026-01", "kafka-3.8-3.9")}
    assert after["kafka-4.0"] == ongoing._replace(epoch=2, last_epoch=-1, has_failed_epoch_fence=True)
    assert after["kafka-java-coordinator"] == after["kafka-trunk-2026-01"] == ongoing
    assert after["kafka-3.8-3.9"] == after["kafka-4.0"]
    tv1_server = P.KAFKA_3_8.with_(tv2_fence_double_bump=False, tv2_failed_fence_leaves_epoch=True)
    assert EosMachine(tv1_server, bounds).failed_fence(ongoing) == after["kafka-4.0"]
    # the rule itself: a pending PrepareEpochFence is cleared, nothing else moves
    machine = EosMachine(P.VARIANTS["kafka-java-coordinator"].protocol, bounds)
    assert machine.failed_fence(ongoing._replace(pending_state=int(TxnState.PREPARE_EPOCH_FENCE))) == ongoing


def test_tv2_failed_fence_leaves_epoch_needs_the_single_bump() -> None:
    why = P.KAFKA_4_0.with_(tv2_failed_fence_leaves_epoch=True).consistency_error()
    assert why is not None and why.startswith("tv2_failed_fence_leaves_epoch needs tv2_fence_double_bump=false")
    assert P.KAFKA_JAVA_COORDINATOR.consistency_error() is None
    assert P.KAFKA_4_0.with_(tv2_fence_double_bump=False).consistency_error() is None  # the other way: a what-if
    # every named variant with the single bump has the follow-up too, and none without it
    for name, named in P.VARIANTS.items():
        p = named.protocol
        assert p.tv2_failed_fence_leaves_epoch == (not p.tv2_fence_double_bump), name


def test_kafka_eos_refuses_a_client_transaction_version_change_it_cannot_start_in_one_line() -> None:
    bounds = {n: b.default for n, b in BOUNDS.items()}
    with pytest.raises(ValueError, match="^client_tv_change=upgrade needs transaction_version=tv1") as info:
        EosMachine(P.KAFKA_4_0.with_(client_tv_change="upgrade"), bounds)
    assert "\n" not in str(info.value)
    assert EosMachine(P.KAFKA_3_6.with_(client_tv_change="upgrade"), bounds).server_tv2  # honoured from TV1


def test_bad_values_are_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match=r"^client_version='1\.0' is not one of 0\.11, pre-kip360, kip360$"):
        P.Protocol().with_(client_version="1.0")
    with pytest.raises(ValueError, match="unknown protocol decision 'tv3'"):
        P.Protocol().with_(tv3=True)
    with pytest.raises(ValueError, match="must be true or false"):
        P.Protocol().with_(partition_verification="yes")
    with pytest.raises(ValueError, match="unknown variant 'kafka-9'"):
        P.resolve("kafka-9")


def test_resolve_prefers_the_machines_own_name_then_a_named_protocol(monkeypatch) -> None:
    assert P.resolve("tv2-without-verification", P.PIPELINE).client_epoch_bump_after_abort is True
    assert P.resolve("tv2-without-verification").client_epoch_bump_after_abort is False
    assert P.resolve("broker-2.0-2.3") == P.KAFKA_1_0_2  # unambiguous legacy name, any machine
    assert P.resolve("broker-2.4") == P.KAFKA_2_4
    assert P.resolve("kafka-shipped") == P.resolve("kafka-shipped", P.INIT) == P.KAFKA_3_0
    monkeypatch.setitem(P.LEGACY_ALIASES, ("kafka.other", "kafka-shipped"), P.KAFKA_2_4)
    with pytest.raises(ValueError, match="different things for different machines"):
        P.resolve("kafka-shipped")


def test_a_machine_refuses_what_it_cannot_honour_in_one_line() -> None:
    designed = P.VARIANTS["kip360-designed"].protocol
    why = P.refusal(designed, P.LEGACY_SUPPORT[P.PIPELINE])
    assert why is not None and "\n" not in why
    assert why.startswith("kafka.eos_pipeline cannot honour init_producer_id=kip360-designed")
    assert P.refusal(designed, P.LEGACY_SUPPORT[P.INIT]) is None
    assert "transaction_version=tv2" in (P.refusal(P.KAFKA_4_0, P.LEGACY_SUPPORT[P.INIT]) or "")


def test_the_pipelines_old_release_variants_are_the_ones_it_cannot_honour() -> None:
    refused = {n for (m, n), p in P.LEGACY_ALIASES.items() if P.refusal(p, P.LEGACY_SUPPORT[m])}
    # its coordinator is hard-wired to KIP-360 as shipped, so "Kafka 2.4" / "0.11" there are approximate
    assert refused == {"kafka-2.4-eos-alpha", "kafka-0.11-eos-alpha"}


def test_kafka_eos_honours_every_named_variant_and_refuses_contradictions() -> None:
    bounds = {n: b.default for n, b in BOUNDS.items()}
    for name, v in P.VARIANTS.items():
        assert P.refusal(v.protocol, SUPPORT) is None, name
        EosMachine(v.protocol, bounds)
    with pytest.raises(ValueError, match="^transaction_version=tv2 needs a KIP-360 coordinator"):
        EosMachine(P.KAFKA_4_0.with_(init_producer_id="pre-kip360"), bounds)


def test_cli_refuses_an_impossible_variant_in_one_line(tmp_path, capsys) -> None:
    spec = tmp_path / "bad.toml"
    spec.write_text('model = "kafka.eos"\nvariant = "kafka-4.0"\n[switches]\nclient_version = "0.11"\n')
    code = main(["check", str(spec), "--out", str(tmp_path), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "transaction_version=tv2 needs client_version=kip360" in err
