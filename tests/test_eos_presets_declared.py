"""The one preset mechanism (``model/machines/eos_presets.py``): every preset is a ``Preset``
declaration published under ``kafka.eos.<name>`` and the older machine's name, and a new preset needs
no code of its own."""

from __future__ import annotations

import pytest
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.registry import find_model
from eoscheck.model.machines.eos_model import BOUNDS as EOS_BOUNDS
from eoscheck.model.machines.eos_presets import Preset, PresetMachine, To, preset_of
from eoscheck.model.protocol import INIT
from eoscheck.model.registry import INIT_PRODUCER_ID_MACHINE, PRESETS


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_each_preset_is_published_under_both_names(name: str) -> None:
    preset, older = PRESETS[name]
    for model in (f"kafka.eos.{name}", preset.legacy):
        md = find_model(model)
        if model == preset.legacy and preset_of(md) is None:
            continue  # the older name still builds the hand-written machine
        assert preset_of(md) is preset
        assert (md.variants, md.switches, md.bounds) == (older.variants, older.switches, older.bounds)
        assert list(md.properties) == list(preset.properties) and list(md.temporal) == list(preset.temporal)
        m = md.machine()
        assert isinstance(m, PresetMachine)
        assert set(m.properties()) == set(md.properties) and set(m.temporal_properties()) == set(md.temporal)


def test_a_bound_may_set_several_kafka_eos_bounds_with_offsets() -> None:
    preset, older = PRESETS["eos_pipeline"]
    defaults = {n: b.default for n, b in older.bounds.items()}
    out = preset.eos_bounds({**defaults, "records": 3, "max_generation": 3})
    assert (out["input_records"], out["transactions"], out["rebalances"]) == (3, 4, 2)
    assert out["members"] == out["producers"] == defaults["instances"]
    # unmapped and unpinned kafka.eos bounds keep kafka.eos's defaults
    assert out["readers"] == EOS_BOUNDS["readers"].default


def test_only_a_preset_that_asks_refuses_values_outside_kafka_eos_ranges() -> None:
    pipeline, _ = PRESETS["eos_pipeline"]
    with pytest.raises(ValueError, match="rebalances=9 is outside 0..3"):
        pipeline.eos_bounds({"max_generation": 10})
    init, _ = PRESETS["init_producer_id"]
    assert init.eos_bounds({"max_epoch": 2})["max_epoch"] == 2  # below kafka.eos's 3, as the older machine allows


#: a fourth preset, declared only: the init machine's face with one instance slot pinned and a property
#: under another name
ONE_SLOT = Preset(
    name="one_slot", legacy=INIT, doc="one producer instance",
    bounds={"clients": To("instances", 0), "max_epoch": "max_epoch", "lost_responses": "lost_responses",
            "failovers": "coordinator_failovers", "abortable_errors": "abortable_errors", "restarts": "restarts",
            "expirations": "txn_id_expirations", "transactions": "instance_transactions",
            "new_producer_ids": "instance_producer_ids"},
    fixed={"producers": 0, "partitions": 1},
    properties={"NeverFenced": "SoleInstanceNeverFenced"},
)


def test_a_new_preset_is_a_declaration() -> None:
    md = ONE_SLOT.model_def(INIT_PRODUCER_ID_MACHINE)
    assert md.name == "kafka.eos.one_slot" and list(md.properties) == ["NeverFenced"]
    m = md.machine("kafka-shipped", bounds={"expirations": 1, "transactions": 1, "failovers": 0,
                                            "abortable_errors": 0, "max_epoch": 4})
    r = explore(m, ExploreOptions())
    # only the declared property is checked, under its new name (a transactional-id expiry fences the instance)
    assert set(m.properties()) == {"NeverFenced"} and m.properties()["NeverFenced"].name == "NeverFenced"
    assert r.verdict == "violated" and [v.property for v in r.violations] == ["NeverFenced"]
