"""Reading a vector file (the format of ``kafka-unit-test-vectors.sample.json``) and checking its
shape; anything malformed is one ``VectorFileError`` with the path to the bad part."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple


class VectorFileError(ValueError):
    """The file is not a readable vector file (exit 2 of ``eoscheck conform``)."""


class Step(NamedTuple):
    input: dict[str, Any]
    expected: dict[str, Any]


class Vector(NamedTuple):
    id: str
    mechanism: str
    component: str
    source: dict[str, Any]
    initial_state: dict[str, Any]
    steps: tuple[Step, ...]
    notes: str


class VectorFile(NamedTuple):
    path: str
    commit: str | None
    commit_date: str | None
    error_codes: dict[str, int]
    mechanisms: dict[str, str]
    vectors: tuple[Vector, ...]


# The mechanisms a vector may name: the eight of Kafka's vector set (its sample's top-level 'mechanisms') and the two
# eoscheck's own files add. A step is dispatched by its input's 'api'/'event', not by the mechanism, so an unknown one
# would otherwise run silently under a label the model does not know: refuse it instead (exit 2).
KNOWN_MECHANISMS = ("init_producer_id", "produce_validation", "producer_client", "producer_expiration",
                    "transactional_id_expiration", "offset_fetch_require_stable", "txn_offset_commit",
                    "txn_state_machine", "txn_verification", "txn_client_requests")


def _need(cond: bool, where: str, what: str) -> None:
    if not cond:
        raise VectorFileError(f"{where}: {what}")


def load_vectors(path: str | Path) -> VectorFile:
    p = Path(path)
    if p.exists() and not p.is_file() and not p.is_dir():
        # a FIFO blocks the read for ever, /dev/zero never ends it
        raise VectorFileError(f"{p}: not a regular file")
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise VectorFileError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise VectorFileError(f"{p}: is a directory, not a vector file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise VectorFileError(f"{p}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise VectorFileError(f"{p}: not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise VectorFileError(f"{p}: nested too deeply to read") from None
    return parse_vectors(raw, str(p))


def parse_vectors(raw: Any, where: str = "<vectors>") -> VectorFile:
    _need(isinstance(raw, dict), where, "the top level must be an object with a 'vectors' list")
    _need(isinstance(raw.get("vectors"), list), where, "missing 'vectors' list")
    mechanisms = raw.get("mechanisms", {})
    _need(isinstance(mechanisms, dict), where, "'mechanisms' must be an object")
    codes = raw.get("error_codes", {})
    _need(isinstance(codes, dict) and all(isinstance(v, int) for v in codes.values()), where,
          "'error_codes' must map names to integers")
    source = raw.get("source", {})
    _need(isinstance(source, dict), where, "'source' must be an object")
    seen: set[str] = set()
    vectors = []
    for i, v in enumerate(raw["vectors"]):
        at = f"{where}: vectors[{i}]"
        _need(isinstance(v, dict), at, "a vector must be an object")
        vid = v.get("id")
        _need(isinstance(vid, str) and vid != "", at, "missing string 'id'")
        at = f"{where}: vector {vid}"
        _need(vid not in seen, at, "duplicate id")
        seen.add(vid)
        mech = v.get("mechanism")
        _need(isinstance(mech, str) and mech != "", at, "missing string 'mechanism'")
        _need(not mechanisms or mech in mechanisms, at, f"mechanism {mech!r} is not listed in 'mechanisms'")
        init = v.get("initial_state", {})
        _need(isinstance(init, dict), at, "'initial_state' must be an object")
        steps = v.get("steps")
        _need(isinstance(steps, list) and len(steps) > 0, at, "'steps' must be a non-empty list")
        parsed = []
        for j, st in enumerate(steps):
            _need(isinstance(st, dict) and isinstance(st.get("input"), dict), f"{at}: steps[{j}]",
                  "a step must be an object with an 'input' object")
            exp = st.get("expected", {})
            _need(isinstance(exp, dict), f"{at}: steps[{j}]", "'expected' must be an object")
            parsed.append(Step(st["input"], exp))
        src = v.get("source", {})
        _need(isinstance(src, dict), at, "'source' must be an object")
        _need(mech in KNOWN_MECHANISMS, at, f"mechanism {mech!r} is not one the model knows ({', '.join(KNOWN_MECHANISMS)})")
        notes = v.get("notes", "")
        vectors.append(Vector(vid, mech, str(v.get("component", "")), src, init, tuple(parsed),
                              notes if isinstance(notes, str) else json.dumps(notes)))
    return VectorFile(where, source.get("commit"), source.get("commit_date"), dict(codes), dict(mechanisms),
                      tuple(vectors))
