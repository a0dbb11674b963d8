"""Ad hoc runs: ``--variant``, ``--set switch=value``, ``--bound name=value`` and ``--model``.

A "what if" needs no file, like TLC's constants on the command line. The values are validated by
the spec loader's own validators (``checker.spec``), so a bad value gets the same one-line message
a spec file would, with the flag in place of the file and line.

An ad hoc run is its own configuration, so it gets its own name: the spec's (or the model's) name
followed by ``+variant`` and ``+key=value`` for each override. Its counterexample files are named
after it, so a what-if never overwrites the committed counterexample of the spec it started from.
Its expectation is "every checked property holds": the spec's ``[expect]`` was written for the
spec's own configuration.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .pathmodel import is_path_model
from .pathmodel import resolve as resolve_model_path
from .registry import ModelDef, SwitchValue, UnknownModelError, find_model
from .spec import (
    CheckOptions,
    Expect,
    Spec,
    SpecError,
    _bounds,
    _one_of,
    _switches,
    _Validator,
)
from .sweep import Sweep, split_sweep


@dataclass(frozen=True)
class AdHoc:
    """The ad hoc options as given on the command line (raw ``key=value`` texts)."""

    variant: str | None = None
    sets: tuple[str, ...] = ()
    bounds: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return self.variant is not None or bool(self.sets) or bool(self.bounds)


def _pairs(texts: Sequence[str], flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for text in texts:
        key, eq, value = text.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not key or not value:
            raise SpecError(f"{flag} {text!r}: expected NAME=VALUE")
        if key in out and out[key] != value:
            raise SpecError(f"{flag} {key} is given twice ({out[key]} and {value}); give it once")
        out[key] = value
    return out


def _switch_value(md: ModelDef, key: str, text: str) -> Any:
    """The text as the switch's declared type; left a string when it is not one (the validator
    then says what was expected)."""
    sw = md.switches.get(key)
    if sw is None:
        return text
    if isinstance(sw.default, bool):
        return {"true": True, "false": False}.get(text.lower(), text)
    if isinstance(sw.default, int):
        try:
            return int(text)
        except ValueError:
            return text
    return text.strip("\"'")


def _bound_value(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        return text  # _bounds reports "must be an integer in lo..hi, got ..."


def switch_overrides(md: ModelDef, texts: Sequence[str]) -> dict[str, SwitchValue]:
    raw = {k: _switch_value(md, k, v) for k, v in _pairs(texts, "--set").items()}
    return _switches(_Validator(Path("--set"), ""), md, raw)


def bound_values(md: ModelDef, texts: Sequence[str]) -> dict[str, int]:
    """Only the bounds given (validated against the model's ranges)."""
    raw = {k: _bound_value(v) for k, v in _pairs(texts, "--bound").items()}
    complete = _bounds(_Validator(Path("--bound"), ""), md, raw)
    return {k: complete[k] for k in raw}


def check_variant(md: ModelDef, variant: str) -> str:
    if variant not in md.variants:
        raise SpecError(f"--variant: unknown variant {variant!r} of model {md.name}; valid "
                        f"variants: {_one_of(md.variants)}")
    return variant


def model_spec(model: str) -> Spec:
    """A spec for ``--model M``: the model's defaults, every property, deadlock checked."""
    model = resolve_model_path(model, Path.cwd())
    try:
        md = find_model(model)
    except UnknownModelError as exc:
        raise SpecError(f"--model: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - a broken model package, named in one line
        raise SpecError(f"--model: loading models failed ({type(exc).__name__}: {exc})") from None
    # a spec name names files: a model file's reference (with its '/' and ':') gives way to its name
    name = md.name if is_path_model(model) else model
    return Spec(path=Path(f"(--model {model})"), name=name, description=md.doc, model=model,
                variant=md.default_variant, switches=md.resolve_switches(md.default_variant, {}),
                switch_overrides={}, bounds={n: b.default for n, b in md.bounds.items()},
                check=CheckOptions(), expect=Expect())


def _label(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def apply_adhoc(spec: Spec, adhoc: AdHoc) -> Spec:
    """``spec`` with the ad hoc variant, switches and bounds; unchanged when none is given.

    The spec's own ``[switches]`` stay on top of the new variant (they are part of the spec);
    ``--set`` goes on top of both.
    """
    if not adhoc:
        return spec
    md = find_model(spec.model)
    variant = check_variant(md, adhoc.variant) if adhoc.variant is not None else spec.variant
    sets = switch_overrides(md, adhoc.sets)
    bounds = bound_values(md, adhoc.bounds)
    overrides = {**spec.switch_overrides, **sets}
    parts = [variant] if adhoc.variant is not None else []
    parts += [f"{k}={_label(v)}" for k, v in {**sets, **bounds}.items()]
    return replace(spec, name="+".join([spec.name, *parts]), variant=variant,
                   switches=md.resolve_switches(variant, overrides), switch_overrides=overrides,
                   bounds={**spec.bounds, **bounds}, expect=Expect())


def adhoc_from_args(args: Any) -> AdHoc:
    return AdHoc(variant=getattr(args, "variant", None), sets=tuple(getattr(args, "set", None) or ()),
                 bounds=tuple(getattr(args, "bound", None) or ()))


def resolve_specs(args: Any, load: Callable[[Sequence[str]], list[Spec]]) -> list[Spec]:
    """The specs ``eoscheck check`` runs once ``--model`` and the ad hoc options are applied.

    Contradictions are refused here, before anything runs: ``--model`` with spec paths, neither,
    or ad hoc options over several specs (each would need its own what-if).
    """
    adhoc = adhoc_from_args(args)
    model = getattr(args, "model", None)
    if model is not None and args.paths:
        raise SpecError("--model runs the model without a spec file; give either --model or "
                        "SPEC paths, not both")
    if model is None and not args.paths:
        raise SpecError("the following arguments are required: SPEC|DIR (or --model MODEL)")
    fixed, sweep = split_sweep(adhoc.bounds)
    specs = [model_spec(model)] if model is not None else load(args.paths)
    if adhoc and len(specs) > 1:
        raise SpecError(f"--variant, --set and --bound apply to one spec; {len(specs)} were given")
    if sweep is None:
        return [apply_adhoc(s, adhoc) for s in specs]
    # one run per value, each validated as if given alone (so 0 or 99 is refused up front)
    return [apply_adhoc(specs[0], replace(adhoc, bounds=(*fixed, f"{sweep.bound}={value}")))
            for value in sweep.values]



def sweep_of(args: Any) -> Sweep | None:
    """The ``--bound NAME=LO..HI`` of a ``check`` run, if any (already validated)."""
    return split_sweep(adhoc_from_args(args).bounds)[1]
