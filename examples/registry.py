"""Textbook models published to the engine (filled in by the examples' own modules)."""

from eoscheck.checker.registry import ModelDef

MODELS: list[ModelDef] = []
