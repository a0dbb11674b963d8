"""The Kafka models published to the engine."""

from eoscheck.checker.registry import ModelDef

MODELS: list[ModelDef] = []
