"""The Kafka models published to the engine (entry point ``eoscheck.models`` -> ``MODELS``)."""

from __future__ import annotations

from collections.abc import Mapping

from eoscheck.checker.machine import Machine
from eoscheck.checker.registry import Bound, ModelDef, SwitchValue

from .machines.eos_model import MODEL as EOS
from .machines.eos_pipeline import MODEL as EOS_PIPELINE_MACHINE
from .machines.eos_pipeline_preset import PIPELINE_PRESET
from .machines.eos_presets import IDEMPOTENT_PRODUCE as IDEMPOTENT_PRESET
from .machines.eos_presets import Preset
from .machines.idempotent_produce import PROPERTY_DOCS as IDEMPOTENT_PROPERTIES
from .machines.idempotent_produce import TEMPORAL_DOCS as IDEMPOTENT_TEMPORAL
from .machines.init_producer_id import PROPERTY_DOCS as INIT_PROPERTIES
from .machines.init_producer_id import TEMPORAL_DOCS as INIT_TEMPORAL
from .machines.preset_init_pid import INIT_PRODUCER_ID as INIT_PRESET
from .variants import (
    IDEMPOTENT_SWITCHES,
    IDEMPOTENT_VARIANTS,
    INIT_SWITCHES,
    INIT_VARIANTS,
)


def _build_idempotent(switches: Mapping[str, SwitchValue], bounds: Mapping[str, int]) -> Machine:
    from .machines.idempotent_produce import IdempotentProduceMachine
    return IdempotentProduceMachine(switches, bounds)


def _build_init(switches: Mapping[str, SwitchValue], bounds: Mapping[str, int]) -> Machine:
    from .machines.init_producer_id import InitProducerIdMachine
    return InitProducerIdMachine(switches, bounds)


#: the hand-written machine that was ``kafka.idempotent_produce`` before it became a preset of ``kafka.eos``
#: (kept for the agreement tests and its own tests: a spec may name it as
#: ``model = "eoscheck.model.registry:IDEMPOTENT_PRODUCE_MACHINE"``)
IDEMPOTENT_PRODUCE_MACHINE = ModelDef(
    name="kafka.idempotent_produce",
    doc="Idempotent producers writing to one partition: sequence/epoch validation on the leader, the "
        "producer state table (last batches), retention/DeleteRecords, producer-id expiry (KIP-854), "
        "client retries until delivery.timeout.ms, error handling before and after KIP-360.",
    variants=IDEMPOTENT_VARIANTS,
    default_variant="kafka-shipped",
    switches=IDEMPOTENT_SWITCHES,
    bounds={
        "clients": Bound("idempotent producer instances (each with its own producer id)", 1, 1, 3),
        "records": Bound("records each client sends during the run (one record per batch)", 2, 1, 6),
        "acked_prefix": Bound("records each client had written and acknowledged before the run starts "
                              "(a long-running producer: its first sequence in the run is not 0)", 0, 0, 3),
        "max_in_flight": Bound("max.in.flight.requests.per.connection (<= 5 with idempotence)", 2, 1, 5),
        "delivery_timeout": Bound("delivery.timeout.ms in ticks: a batch older than this is never sent again",
                                  3, 1, 50),
        "producer_id_expiration": Bound(
            "producer.id.expiration.ms in ticks (KIP-854; transactional.id.expiration.ms before 3.4): the "
            "leader forgets a producer idle this long", 100, 1, 1000),
        "max_ticks": Bound("the clock stops here (abstract time)", 0, 0, 50),
        "max_seq": Bound("largest sequence number before the wrap to 0 (Integer.MAX_VALUE in Kafka)",
                         2**31 - 1, 1, 2**31 - 1),
        "max_epoch": Bound("largest producer epoch (Short.MAX_VALUE in Kafka)", 32767, 1, 32767),
        "lost_responses": Bound("produce responses the network may lose", 1, 0, 5),
        "transient_errors": Bound("produce requests the leader refuses with a retriable error "
                                  "(NOT_ENOUGH_REPLICAS), letting a later batch overtake", 0, 0, 5),
        "delete_records": Bound("log start offset increments (retention or DeleteRecords)", 0, 0, 5),
        "leader_failovers": Bound("leader failovers to the in-sync follower, whose log start offset may lag "
                                  "and whose producer state is its own", 0, 0, 3),
        "restarted_replica_failovers": Bound(
            "leader failovers to a replica that restarted without its producer-state snapshots and rebuilt "
            "the state from its log above its log start offset", 0, 0, 3),
        "snapshot_restored_failovers": Bound(
            "leader failovers to a replica restarted from a producer-state snapshot taken at its log end "
            "(clean shutdown): a snapshot keeps only each producer's last batch, so its duplicate cache "
            "holds one batch per producer", 0, 0, 3),
        "late_delivery": Bound(
            "1: time may pass while requests and responses are in flight, so a request can reach the "
            "leader after the client's delivery timeout and an in-flight batch can expire "
            "(Sender.getExpiredInflightBatches); 0: every message is delivered or lost within its tick",
            0, 0, 1),
        "clock_skew": Bound(
            "ticks the client's clock lags the broker's: a batch's CreateTime, which the leader stores as "
            "the producer's lastTimestamp for expiry, looks that much older", 0, 0, 10),
        "new_producer_ids": Bound("producer ids a client may get after its first (resets, epoch overflow)",
                                  1, 0, 5),
    },
    properties=IDEMPOTENT_PROPERTIES,
    build=_build_idempotent,
    temporal=IDEMPOTENT_TEMPORAL,
)

#: the hand-written machine that was ``kafka.init_producer_id`` before it became a preset of ``kafka.eos``
#: (kept for the agreement tests, and for the Spark engine, which runs no composed machine: a spec may
#: name it as ``model = "eoscheck.model.registry:INIT_PRODUCER_ID_MACHINE"``)
INIT_PRODUCER_ID_MACHINE = ModelDef(
    name="kafka.init_producer_id",
    doc="Transactional producer instances sharing one transactional id and its coordinator: InitProducerId "
        "(every KIP-360 case), epoch overflow to a new producer id, retries, lost responses, the transaction "
        "log, coordinator failover, transactional-id expiry and fencing of an open transaction.",
    variants=INIT_VARIANTS,
    default_variant="kafka-shipped",
    switches=INIT_SWITCHES,
    bounds={
        "clients": Bound("producer instance slots sharing the transactional id", 1, 1, 3),
        "max_epoch": Bound("largest epoch (Short.MAX_VALUE); exhausted at max_epoch - 1", 32767, 2, 32767),
        "lost_responses": Bound("InitProducerId responses the network may lose", 1, 0, 4),
        "failovers": Bound("transaction coordinator failovers (metadata reloaded from the log)", 1, 0, 3),
        "abortable_errors": Bound("abortable errors inside a transaction (a failed batch): EndTxn(ABORT), then "
                                  "InitProducerId with the client's producer id/epoch (KIP-360); each needs "
                                  "a transaction", 1, 0, 4),
        "restarts": Bound("new producer instances started in a slot after its first", 0, 0, 3),
        "expirations": Bound("transactional-id expirations (transactional.id.expiration.ms)", 0, 0, 2),
        "transactions": Bound("transactions begun (AddPartitionsToTxn) in total", 0, 0, 3),
        "new_producer_ids": Bound("producer ids the allocator may hand out", 3, 1, 6),
    },
    properties=INIT_PROPERTIES,
    build=_build_init,
    temporal=INIT_TEMPORAL,
)

#: every preset of kafka.eos (``machines.eos_presets.Preset``), by name, with the older machine it reproduces
PRESETS: dict[str, tuple[Preset, ModelDef]] = {
    p.name: (p, older) for p, older in ((IDEMPOTENT_PRESET, IDEMPOTENT_PRODUCE_MACHINE),
                                        (INIT_PRESET, INIT_PRODUCER_ID_MACHINE), (PIPELINE_PRESET, EOS_PIPELINE_MACHINE))}

#: each preset under its own name, ``kafka.eos.<name>``
PRESET_MODELS: list[ModelDef] = [p.model_def(older) for p, older in PRESETS.values()]

#: ``kafka.init_producer_id`` is the preset of ``kafka.eos`` (``machines.preset_init_pid``): its specs,
#: variants, switches, bounds and properties are the old machine's, and each gives the old machine's
#: verdict and trace length (tests/test_preset_init_pid.py)
INIT_PRODUCER_ID = INIT_PRESET.model_def(INIT_PRODUCER_ID_MACHINE, name="kafka.init_producer_id")

#: ``kafka.idempotent_produce`` is the same preset (an alias): its specs, variants, switches, bounds and
#: properties are the old machine's, and each gives the old machine's verdict and trace length
#: (tests/test_eos_presets*.py, bench/results/preset-idempotent.md)
IDEMPOTENT_PRODUCE = IDEMPOTENT_PRESET.model_def(IDEMPOTENT_PRODUCE_MACHINE, name="kafka.idempotent_produce")

#: ``kafka.eos_pipeline`` is the preset too (``machines.eos_pipeline_preset``): its specs, variants, switches,
#: bounds and properties are the old machine's; each keeps its verdict, and a violation's trace is longer
#: where kafka.eos's steps are finer (docs/eos-presets.md has the table; tests/test_eos_pipeline_preset.py)
#: (``EOS_PIPELINE_MACHINE``, imported above, is the hand-written machine that was ``kafka.eos_pipeline``, kept
#: for the agreement tests and its own tests: ``model = "eoscheck.model.registry:EOS_PIPELINE_MACHINE"``)
EOS_PIPELINE = PIPELINE_PRESET.model_def(EOS_PIPELINE_MACHINE, name="kafka.eos_pipeline")

MODELS: list[ModelDef] = [IDEMPOTENT_PRODUCE, INIT_PRODUCER_ID, EOS_PIPELINE, EOS, *PRESET_MODELS]
