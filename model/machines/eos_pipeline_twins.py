"""A ``kafka.eos_pipeline`` spec rewritten as its ``kafka.eos`` twin through the pipeline preset
(``eos_pipeline_preset``): the same configuration as a plain ``kafka.eos`` spec (the named variant
closest to the preset's protocol with the switch overrides that make it exact, the bounds that differ
from kafka.eos's defaults, the property names), and the verdict and trace length measured on the
preset. Pure text; ``tests/test_eos_pipeline_preset.py`` checks that the committed twins it names
are exactly this text.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from eoscheck.checker.registry import SwitchValue

from ..protocol import VARIANTS, Protocol
from .eos_model import BOUNDS as EOS_BOUNDS
from .eos_pipeline import MODEL as PIPELINE_MODEL
from .eos_pipeline_preset import (
    PIPELINE_PRESET,
    PipelinePreset,
    eos_bounds,
    protocol_of,
)
from .eos_twins import _table, _value

#: a pipeline twin's file name: this prefix and the original's name
PIPELINE_TWIN_PREFIX = "eos-group-twin-"


def closest_variant(wanted: Protocol) -> tuple[str, dict[str, SwitchValue]]:
    """The named kafka.eos variant with the fewest decisions differing from ``wanted``, and those
    decisions (ties: the earlier variant, i.e. the older Kafka)."""
    want = wanted.as_switches()

    def overrides(name: str) -> dict[str, SwitchValue]:
        have = VARIANTS[name].protocol.as_switches()
        return {d: v for d, v in want.items() if have[d] != v}
    name = min(VARIANTS, key=lambda n: len(overrides(n)))
    return name, overrides(name)


def twin_text(path: Path, expect: Mapping[str, Any], preset: PipelinePreset = PIPELINE_PRESET) -> str:
    """The ``kafka.eos`` twin of the pipeline spec at ``path``, expecting ``expect`` (the preset's
    verdict, property and trace length)."""
    raw = tomllib.loads(path.read_text())
    if raw.get("model") != PIPELINE_MODEL.name:
        raise ValueError(f"{path}: a {raw.get('model')} spec, not one of {PIPELINE_MODEL.name}")
    switches = PIPELINE_MODEL.resolve_switches(raw.get("variant", PIPELINE_MODEL.default_variant),
                                               raw.get("switches", {}))
    bounds = {name: b.default for name, b in PIPELINE_MODEL.bounds.items()} | raw.get("bounds", {})
    variant, overrides = closest_variant(protocol_of(preset, switches))
    eos = eos_bounds(preset, bounds)
    check = dict(raw.get("check", {}))
    names = check.get("properties") or list(preset.properties)
    check["properties"] = [preset.properties.get(p, preset.temporal.get(p, p)) for p in names]
    description = raw.get("description", path.stem).rstrip(".")
    lines = [f"description = {_value(f'kafka.eos twin of {path.stem} (kafka.eos_pipeline preset, bench/compare_presets.py): {description}')}",
             'model = "kafka.eos"',
             f"variant = {_value(variant)}"]
    lines += _table("switches", overrides) + _table("bounds", {k: v for k, v in eos.items()
                                                               if v != EOS_BOUNDS[k].default})
    lines += _table("check", check) + _table("expect", dict(expect))
    return "\n".join(lines).rstrip("\n") + "\n"


__all__ = ["PIPELINE_TWIN_PREFIX", "closest_variant", "twin_text"]
