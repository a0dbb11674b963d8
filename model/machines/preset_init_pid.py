"""``kafka.init_producer_id`` as a preset of ``kafka.eos`` (the mechanism: ``eos_presets.Preset``): the
producer instances of one transactional id (``eos_instances``) and nothing else. Its switches are
protocol decisions of the same names over the older machine's hard-wired protocol
(``protocol.LEGACY_ALIASES``' kafka-shipped), its bounds are ``kafka.eos`` bounds, its properties
``kafka.eos``'s of the same names.
"""

from __future__ import annotations

from ..protocol import INIT, LEGACY_ALIASES
from .eos_presets import Preset, PresetMachine, preset_of

#: ``kafka.init_producer_id`` as a preset of ``kafka.eos``: no data producers, one partition (idle:
#: the instances' transactions carry no data), the instances of one transactional id.
INIT_PRODUCER_ID = Preset(
    name="init_producer_id",
    legacy=INIT,
    doc="Transactional producer instances sharing one transactional id and its coordinator: "
        "InitProducerId (every KIP-360 case), epoch overflow to a new producer id, retries, lost responses, the "
        "transaction log, coordinator failover, transactional-id expiry and fencing of an open transaction.",
    base=LEGACY_ALIASES[(INIT, "kafka-shipped")],
    bounds={"clients": "instances", "max_epoch": "max_epoch", "lost_responses": "lost_responses",
            "failovers": "coordinator_failovers", "abortable_errors": "abortable_errors", "restarts": "restarts",
            "expirations": "txn_id_expirations", "transactions": "instance_transactions",
            "new_producer_ids": "instance_producer_ids"},
    fixed={"producers": 0, "partitions": 1},
    properties={name: name for name in ("UniqueProducerIdEpoch", "CoordinatorEpochMonotonic", "SoleInstanceNeverFenced",
                                        "NewestInstanceNeverFenced", "NoUnexpectedServerError",
                                        "CoordinatorLegalState")},
    temporal={"InitEventuallyCompletes": "InitEventuallyCompletes"},
)

__all__ = ["INIT_PRODUCER_ID", "Preset", "PresetMachine", "preset_of"]
