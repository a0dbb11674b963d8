"""Output files are written, never clobbered: modes kept, links and special files written through,
read-only files and directories refused with one line (checker.outfile)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from eoscheck.checker.outfile import (
    OutputError,
    check_directory,
    check_output,
    same_file,
    write_output,
)
from private_devices import FULL, NULL, device, stdout_link


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_new_file_gets_the_umask_mode_not_0600(tmp_path):
    old = os.umask(0o022)
    try:
        write_output(tmp_path / "new.json", "{}\n")
    finally:
        os.umask(old)
    assert mode(tmp_path / "new.json") == 0o644


def test_existing_file_keeps_its_mode_and_gets_the_new_content(tmp_path):
    target = tmp_path / "report.json"
    target.write_text("old")
    target.chmod(0o640)
    write_output(target, "new")
    assert target.read_text() == "new" and mode(target) == 0o640


def test_no_temporary_file_is_left_beside_the_target(tmp_path):
    write_output(tmp_path / "a.json", "x")
    write_output(tmp_path / "a.json", "y")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]


def test_symlink_is_written_through_and_stays_a_link(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    real.chmod(0o604)
    link = tmp_path / "link.json"
    link.symlink_to(real.name)
    write_output(link, "new")
    assert link.is_symlink() and os.readlink(link) == real.name
    assert real.read_text() == "new" and mode(real) == 0o604


def test_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.json"
    link.symlink_to("made.json")
    write_output(link, "x")
    assert link.is_symlink() and (tmp_path / "made.json").read_text() == "x"


def test_fifo_is_written_through_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = subprocess.Popen([sys.executable, "-c", f"print(open({str(fifo)!r}).read(), end='')"],
                              stdout=subprocess.PIPE, text=True)
    write_output(fifo, "through the pipe")
    out, _ = reader.communicate(timeout=30)
    assert out == "through the pipe"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_null_device_is_written_through_and_stays_a_device(tmp_path):
    null = device(tmp_path, "null", NULL)
    before = os.stat(null)
    write_output(null, "nothing")
    after = os.stat(null)
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev and after.st_ino == before.st_ino


def test_full_device_fails_with_one_line_and_stays_a_device(tmp_path):
    full = device(tmp_path, "full", FULL)
    with pytest.raises(OutputError, match=r"full: cannot write: no space left on device$"):
        write_output(full, "x" * 10)
    assert stat.S_ISCHR(os.stat(full).st_mode)


def test_stdout_link_appends_to_the_stream(tmp_path):
    # stdout redirected to a file: the table and the --json output both end up in it, in order
    out = tmp_path / "out.txt"
    link = stdout_link(tmp_path)
    code = ("import sys; print('before', flush=True); "
            f"from eoscheck.checker.outfile import write_output; write_output({str(link)!r}, 'json\\n'); "
            "print('after', flush=True)")
    with open(out, "w") as f:
        subprocess.run([sys.executable, "-c", code], stdout=f, check=True)
    assert out.read_text() == "before\njson\nafter\n"


def test_directory_is_refused(tmp_path):
    with pytest.raises(OutputError, match="is a directory"):
        write_output(tmp_path, "x")


def test_read_only_file_is_refused_and_unchanged(tmp_path):
    target = tmp_path / "keep.json"
    target.write_text("mine")
    target.chmod(0o444)
    with pytest.raises(OutputError, match="read-only; not overwriting it"):
        write_output(target, "theirs")
    assert target.read_text() == "mine" and mode(target) == 0o444


def test_read_only_file_behind_a_symlink_is_refused(tmp_path):
    target = tmp_path / "keep.json"
    target.write_text("mine")
    target.chmod(0o444)
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(OutputError, match="read-only"):
        write_output(tmp_path / "link", "theirs")
    assert target.read_text() == "mine"


def test_socket_is_refused(tmp_path):
    import socket

    path = tmp_path / "sock"
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(str(path))
        with pytest.raises(OutputError, match="socket"):
            check_output(path, "--json")
    finally:
        s.close()


def test_missing_parents_are_created(tmp_path):
    write_output(tmp_path / "a" / "b" / "c.json", "x")
    assert (tmp_path / "a" / "b" / "c.json").read_text() == "x"


def test_parent_that_is_a_file_is_refused_up_front(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match="(?i)not a directory"):
        check_output(tmp_path / "file" / "out.json", "--json")
    with pytest.raises(OutputError, match="must be a directory"):
        check_directory(tmp_path / "file", "--out")


def test_same_file_sees_through_links_and_dots(tmp_path):
    (tmp_path / "x.json").write_text("")
    (tmp_path / "l.json").symlink_to("x.json")
    assert same_file(tmp_path / "l.json", tmp_path / "sub" / ".." / "x.json")
    link = stdout_link(tmp_path)
    assert not same_file(link, link)  # two outputs may both go to stdout


def test_readme_first_command_keeps_counterexample_modes(tmp_path):
    """`eoscheck check` over committed counterexamples (here: copies) leaves them 0644."""
    from eoscheck.checker.cli import main

    repo = Path(__file__).resolve().parents[1]
    out = tmp_path / "cx"
    out.mkdir()
    name = "diehard-big-jug-reaches-4.NotSolved"
    for suffix in (".json", ".itf.json"):
        copy = out / f"{name}{suffix}"
        copy.write_bytes((repo / "counterexamples" / f"{name}{suffix}").read_bytes())
        copy.chmod(0o644)
    spec = repo / "specs" / "examples" / "diehard-big-jug-reaches-4.toml"
    assert main(["check", str(spec), "--out", str(out), "--no-progress"]) == 0
    assert {mode(p) for p in out.iterdir()} == {0o644}
