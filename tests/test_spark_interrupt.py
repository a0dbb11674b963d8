"""Ctrl-C and SIGTERM during a Spark run from the command line: one line on stderr, exit 130 or
143, no py4j traceback, no JVM or temporary folder left, and a checkpoint that the next run
resumes to the BFS's counts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from eoscheck.checker.explore import explore
from eoscheck.checker.spec import build_machine, load_spec, spec_to_options

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "specs" / "kip360-leader-failover.toml"
CLI = "import sys; from eoscheck.checker.cli import main; sys.exit(main())"


def _cli(args: list[str], tmp: Path, **kw) -> subprocess.Popen:
    env = {**os.environ, "TMPDIR": str(tmp)}  # the run's temporary folders, to look for leftovers
    return subprocess.Popen([sys.executable, "-c", CLI, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, start_new_session=True, **kw)


def _jvms_in_group(pgid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            out.append(int(stat.parent.name))
    return out


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to find the JVM")
@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_is_one_line_and_the_checkpoint_resumes(tmp_path, sig, code):
    tmp = Path(tempfile.mkdtemp(dir=tmp_path, prefix="tmp-"))
    ck = tmp_path / "ck"
    args = ["check", str(SPEC), "--engine", "spark", "--master", "local[2]", "--checkpoint", str(ck),
            "--out", str(tmp_path / "out"), "--no-progress"]
    proc = _cli(args, tmp)
    try:
        deadline = time.monotonic() + 300
        while not (ck / "manifest.json").exists() or \
                len(json.loads((ck / "manifest.json").read_text())["levels"]) < 4:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "no level completed in time"
            time.sleep(0.2)
        if sig == signal.SIGINT:
            os.killpg(proc.pid, sig)  # a terminal's Ctrl-C: the whole foreground group, JVM included
        else:
            os.kill(proc.pid, sig)  # kill(1): the driver only
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)
    assert proc.returncode == code, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(("eoscheck: interrupted", "eoscheck: terminated")), err
    deadline = time.monotonic() + 60
    while _jvms_in_group(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not _jvms_in_group(proc.pid), "a JVM outlived the driver"
    assert list(tmp.iterdir()) == [], "temporary folders left behind"

    # The checkpoint lists only complete levels: the next run resumes and ends with the BFS's counts.
    manifest = json.loads((ck / "manifest.json").read_text())
    assert manifest["final"] is None and len(manifest["levels"]) >= 4
    if sig != signal.SIGINT:
        return  # (the resumed run is the same after either signal: once is enough for the suite)
    spec = load_spec(SPEC)
    local = explore(build_machine(spec), spec_to_options(spec))
    again = _cli([*args, "--json", str(tmp_path / "summary.json")], tmp)
    _, err = again.communicate(timeout=600)
    assert again.returncode == 0, err
    summary = json.loads((tmp_path / "summary.json").read_text())["specs"][0]
    assert summary["stats"]["distinct"] == local.stats.distinct
    assert summary["stats"]["generated"] == local.stats.generated
    assert summary["stats"]["depth"] == local.stats.depth
