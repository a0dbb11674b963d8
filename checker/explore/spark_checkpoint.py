"""Checkpoints of a Spark exploration: each completed BFS level as Parquet, plus a manifest.

Layout under the checkpoint directory (a local path or any URI pyarrow can open: ``file://``,
``hdfs://``, ``s3://``, ``gs://``)::

    manifest.json                  run key, partitions, one entry per completed level
    level-00001/part-00000.parquet the level's new states: fp, parent, action, state
    level-00002/...

Executors write their partition of a level while they compute it; the driver appends the level
to the manifest only after every partition is written, so a level is either listed (complete)
or ignored (an interrupted run's partial files are overwritten by the rerun). The visited set is
not stored separately: it is the union of the levels' ``fp`` columns.

A manifest carries a run key: a hash of what decides the explored graph (the machine's class and
attributes, a ``checkpoint_key`` attribute when the machine has one, a behavioural sample of its
first levels, symmetry, the checked properties and deadlock checking). Resuming with a different
spec or model is refused with one line instead of silently mixing runs. Limits (max_states,
max_depth, max_seconds) are not part of the key: raising a limit and rerunning resumes.

States are stored as pickles (fixed protocol) of their int/bool tuples; the fingerprint column is
computed from the state, never from these bytes, so the encoding only has to round-trip.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import pickle
import re
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..fingerprint import MASK64
from ..machine import Machine
from .errors import EngineSetupError

STATE_PROTOCOL = 5
#: 2: states stored through ``Machine.export_states`` (format 1 pickled them as they are)
FORMAT = 2
MANIFEST = "manifest.json"


class CheckpointError(EngineSetupError, ValueError):
    """The checkpoint directory cannot be used for this run; the message says why and what to do."""


# ---------------------------------------------------------------- run identity

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def run_key(machine: Machine, symmetry: bool, properties: Iterable[str], check_deadlock: bool,
            sample: int = 2000, view: str | None = None) -> str:
    """A hash of everything that decides the explored graph and the violations recorded on it."""
    h = hashlib.sha256()
    cls = type(machine)
    h.update(f"{cls.__module__}.{cls.__qualname__}\n".encode())
    key = getattr(machine, "checkpoint_key", None)
    if key is not None:
        h.update(f"key={key!r}\n".encode())
    # Attributes as text, object addresses removed (they differ per process).
    for name, value in sorted(vars(machine).items()):
        h.update(_ADDRESS.sub("", f"{name}={value!r}\n").encode())
    h.update(f"symmetry={symmetry} deadlock={check_deadlock} props={sorted(properties)}\n".encode())
    if view is not None:
        h.update(f"view={view}\n".encode())
    # Behaviour: the first states in BFS order, so an edited model under the same name differs.
    from .expand import Expander, bfs_walk

    walker = Expander(machine, symmetry=symmetry, view=view, check_deadlock=False, no_properties=True)
    seen: list[int] = []
    for _level, _parent, _step, _state, fp, _new in bfs_walk(walker):
        seen.append(fp & MASK64)
        if len(seen) >= sample:
            break
    h.update(np.asarray(seen, dtype=np.uint64).tobytes())
    return h.hexdigest()


# ---------------------------------------------------------------- storage

class CheckpointStore:
    """The checkpoint directory; picklable (only the URI travels to executors)."""

    def __init__(self, uri: str):
        self.uri = uri
        self._fs: Any = None
        self._base = ""

    def __getstate__(self) -> dict:
        return {"uri": self.uri}

    def __setstate__(self, state: dict) -> None:
        CheckpointStore.__init__(self, state["uri"])

    @property
    def fs(self) -> Any:
        if self._fs is None:
            try:
                import pyarrow.fs as pafs
            except ImportError:
                raise CheckpointError("checkpoints are Parquet files and need pyarrow: "
                                      "pip install pyarrow") from None
            if "://" in self.uri:
                self._fs, self._base = pafs.FileSystem.from_uri(self.uri)
            else:
                self._fs, self._base = pafs.LocalFileSystem(), os.path.abspath(self.uri)
        return self._fs

    def path(self, *parts: str) -> str:
        _ = self.fs  # resolves _base
        return "/".join([self._base.rstrip("/"), *parts])

    def level_dir(self, level: int) -> str:
        return self.path(f"level-{level:05d}")

    # -- manifest (driver side)

    def load_manifest(self) -> dict | None:
        """The manifest, None for a new or empty directory; CheckpointError for foreign content."""
        import pyarrow.fs as pafs
        info = self.fs.get_file_info(self.path())
        if info.type == pafs.FileType.NotFound:
            return None
        if info.type != pafs.FileType.Directory:
            raise CheckpointError(f"checkpoint path {self.uri} is a file, not a directory; choose a directory")
        manifest = self.fs.get_file_info(self.path(MANIFEST))
        if manifest.type == pafs.FileType.NotFound:
            entries = self.fs.get_file_info(pafs.FileSelector(self.path(), recursive=False))
            if any(not e.base_name.startswith("level-") for e in entries):
                raise CheckpointError(
                    f"checkpoint directory {self.uri} is not empty and holds no eoscheck manifest; "
                    "choose an empty or new directory")
            return None
        try:
            with self.fs.open_input_stream(self.path(MANIFEST)) as f:
                data = json.loads(f.read().decode())
            if data.get("format") != FORMAT or not isinstance(data.get("levels"), list):
                raise ValueError(f"format {data.get('format')!r}, this version reads {FORMAT}")
        except (ValueError, UnicodeDecodeError) as exc:
            raise CheckpointError(
                f"checkpoint manifest {self.path(MANIFEST)} is corrupt ({exc}); delete the directory "
                "to start over") from None
        return data

    def write_manifest(self, data: dict) -> None:
        """Write-then-rename so a crash never leaves half a manifest."""
        self.fs.create_dir(self.path(), recursive=True)
        tmp = self.path(MANIFEST + ".tmp")
        with self.fs.open_output_stream(tmp) as f:
            f.write(json.dumps(data, indent=1, sort_keys=True).encode())
        self.fs.move(tmp, self.path(MANIFEST))

    # -- level parts (executor side)

    def write_part(self, level: int, pid: int, fps: np.ndarray, parents: np.ndarray,
                   actions: np.ndarray, states: list, machine: Machine) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq
        table = pa.table({
            "fp": pa.array(fps, type=pa.uint64()),
            "parent": pa.array(parents, type=pa.uint64()),
            "action": pa.array(actions, type=pa.int16()),
            # one state per row, each exported on its own so a row decodes without the others
            "state": pa.array([pickle.dumps(machine.export_states([s]), protocol=STATE_PROTOCOL)
                               for s in states], type=pa.binary()),
        })
        directory = self.level_dir(level)
        self.fs.create_dir(directory, recursive=True)
        pq.write_table(table, f"{directory}/part-{pid:05d}.parquet", filesystem=self.fs)

    def read_level(self, level: int, columns: list[str], pid: int | None = None,
                   partitions: int | None = None, stored_partitions: int | None = None,
                   machine: Machine | None = None) -> dict:
        """Columns of a level as numpy arrays / lists. With ``pid``: only the states that belong to
        partition ``pid`` of ``partitions`` (reads one part file when the partitioning is the
        stored one, every part file otherwise)."""
        import pyarrow.parquet as pq
        directory = self.level_dir(level)
        if pid is not None and partitions == stored_partitions:
            files = [f"{directory}/part-{pid:05d}.parquet"]
        else:
            import pyarrow.fs as pafs
            infos = self.fs.get_file_info(pafs.FileSelector(directory))
            files = sorted(i.path for i in infos if i.base_name.endswith(".parquet"))
        cols = sorted(set(columns) | {"fp"})
        out: dict[str, list] = {c: [] for c in cols}
        for path in files:
            try:
                table = pq.read_table(path, columns=cols, filesystem=self.fs)
            except FileNotFoundError:
                raise CheckpointError(f"checkpoint file {path} is missing; delete the directory to start over") from None
            fp = table.column("fp").to_numpy()
            keep = None
            if pid is not None and partitions != stored_partitions:
                assert partitions is not None  # partition pid of how many
                keep = (fp % np.uint64(partitions)) == pid
            for c in cols:
                col = table.column(c)
                if c == "state":
                    values = col.to_pylist()
                    if keep is not None:
                        values = [v for v, k in zip(values, keep) if k]
                    out[c].extend(values)
                else:
                    arr = col.to_numpy()
                    out[c].append(arr if keep is None else arr[keep])
        result: dict[str, Any] = {}
        for c in cols:
            if c == "state":
                assert machine is not None, "decoding states needs the machine"
                result[c] = [machine.import_states(pickle.loads(b))[0] for b in out[c]]
            else:
                dtype = np.int16 if c == "action" else np.uint64
                result[c] = np.concatenate(out[c]).astype(dtype) if out[c] else np.empty(0, dtype)
        return result


def encode_found(found: list) -> str:
    """Violations found so far, for the manifest (their steps/states are tuples: pickled)."""
    return base64.b64encode(pickle.dumps(found, protocol=STATE_PROTOCOL)).decode()


def decode_found(text: str) -> list:
    return pickle.loads(base64.b64decode(text.encode()))
