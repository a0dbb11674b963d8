"""The check every vector file's per-profile pin makes: which vectors disagree, which are not
expressible, and that a vector is not expressible because its profile lacks a named feature."""

from __future__ import annotations

from collections.abc import Mapping

from eoscheck.model.api.protocol import FEATURES, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import VectorFile


def assert_pinned(vf: VectorFile, name: str, disagree: Mapping[str, str], inexpressible: Mapping[str, str]) -> None:
    """Run ``vf`` under profile ``name``: exactly ``disagree`` disagree and ``inexpressible`` are not
    expressible; one whose reason is a feature says so, naming the profile (an alias reports the one
    it stands for), and the profile lacks that feature."""
    run = harness.run_file(vf, name)
    got = {v.id: v.outcome for v in run.vectors if v.outcome != harness.AGREE}
    want = {**{v: harness.DISAGREE for v in disagree}, **{v: harness.NOT_EXPRESSIBLE for v in inexpressible}}
    assert got == want, name
    p = protocol(name)
    for v in run.vectors:
        feature = inexpressible.get(v.id)
        if feature in FEATURES:
            assert v.reason.startswith(f"not expressible under {p.name}: ") and FEATURES[feature] in v.reason, \
                (name, v.id, v.reason)
            assert feature in p.lacks, (name, v.id, feature)
