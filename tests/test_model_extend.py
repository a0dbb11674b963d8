"""``model.extend``: a model derived from kafka.eos with a switch of its own and a hook override
keeps kafka.eos's behaviour with the switch off, and the hook changes exactly the leader's check."""

from __future__ import annotations

import pytest
from eoscheck.checker.explore import explore
from eoscheck.checker.explore.options import ExploreOptions
from eoscheck.checker.registry import Switch
from eoscheck.model.errors import Errors
from eoscheck.model.extend import EosMachine, derive_eos, variant_of
from eoscheck.model.machines.eos_model import MODEL as EOS
from eoscheck.model.state import TxnMetadata, TxnPartitionState

#: the late-batch configuration of specs/eos-expired-state-late-batch-kafka-3.*.toml
LATE = {"txn_timeouts": 1, "max_ticks": 2}


class RefuseAll(EosMachine):
    """A deliberately wrong proposal: with the switch on, every transactional batch is refused."""

    def produce_verification(self, partition: int, leader: TxnPartitionState, txn: TxnMetadata,
                             producer_id: int, epoch: int) -> int:
        if self.extensions["refuse_all"]:
            return int(Errors.INVALID_TXN_STATE)
        return super().produce_verification(partition, leader, txn, producer_id, epoch)


DERIVED = derive_eos(name="test.refuse-all", doc="", machine=RefuseAll,
                     switches={"refuse_all": Switch("refuse every batch", False)},
                     variants={"refuse-all": variant_of("kafka-3.0-3.5", "", refuse_all=True)})


def counts(model, variant: str, properties: tuple[str, ...] = ()) -> tuple[int, list[str]]:
    result = explore(model.machine(variant, bounds=LATE),
                     ExploreOptions(properties=properties, stop_at_first=False))
    return result.stats.distinct, sorted(v.property for v in result.violations)


@pytest.mark.parametrize("variant", ["kafka-3.0-3.5", "kafka-3.6-3.9"])
def test_with_the_switch_off_the_derived_model_is_kafka_eos(variant: str) -> None:
    assert counts(DERIVED, variant) == counts(EOS, variant)


def test_the_override_acts_and_only_through_its_switch() -> None:
    distinct, violated = counts(DERIVED, "refuse-all", ("NoLoss", "NoZombieWrite"))
    base_distinct, base_violated = counts(EOS, "kafka-3.0-3.5", ("NoLoss", "NoZombieWrite"))
    assert base_violated == ["NoZombieWrite"]
    assert violated == [] and distinct < base_distinct  # nothing is ever written: no zombie, and no loss
    machine = DERIVED.machine("refuse-all", bounds=LATE)
    assert isinstance(machine, RefuseAll) and machine.extensions == {"refuse_all": True}
    assert machine.protocol == EOS.machine("kafka-3.0-3.5").protocol  # type: ignore[attr-defined]


def test_derived_model_declares_everything_of_kafka_eos() -> None:
    assert set(DERIVED.variants) == set(EOS.variants) | {"refuse-all"}
    assert set(DERIVED.switches) == set(EOS.switches) | {"refuse_all"}
    assert DERIVED.bounds == EOS.bounds and DERIVED.properties == EOS.properties
    assert all(DERIVED.resolve_switches(v, {})["refuse_all"] is False for v in EOS.variants)


def test_bad_derivations_are_refused() -> None:
    with pytest.raises(TypeError, match="subclass of EosMachine"):
        derive_eos(name="x", doc="", machine=int, switches={}, variants={})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown kafka.eos variant"):
        variant_of("kafka-9.9", "")
    with pytest.raises(ValueError, match="already a switch"):
        derive_eos(name="x", doc="", machine=RefuseAll,
                   switches={"partition_verification": Switch("", False)}, variants={})
