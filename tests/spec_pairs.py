"""One check for a known-bug spec pair's member: the post-fix spec holds; the pre-fix spec violates
exactly one property with the expected shortest trace, whose counterexample file is committed."""

from __future__ import annotations

from pathlib import Path

from eoscheck.checker.explore import explore
from eoscheck.checker.spec import build_machine, load_spec, spec_to_options

REPO = Path(__file__).resolve().parents[1]


def check_spec_pair_member(name: str, prop: str, length: int | None) -> None:
    """``length`` None: the spec must expect and get "holds"; otherwise one violation of ``prop``."""
    spec = load_spec(REPO / "specs" / f"{name}.toml")
    result = explore(build_machine(spec), spec_to_options(spec))
    if length is None:
        assert spec.expect.verdict == "holds" and result.verdict == "holds"
        return
    assert [(v.property, len(v.trace)) for v in result.violations] == [(prop, length)]
    assert (REPO / "counterexamples" / f"{name}.{prop}.itf.json").exists()
