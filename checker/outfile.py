"""Writing output files (reports, graphs, counterexamples) without harming what is already there.

Every file eoscheck writes goes through ``write_output``; ``check_output`` answers, before a run
starts, whether ``write_output`` would succeed, so that a bad path costs one line and exit 2 up
front rather than a traceback after an hour of exploration.

What happens to the target:

* **a regular file** (or none yet): the text goes to a temporary file beside it, which is renamed
  over it, so a reader never sees half a file. The target's permission bits (and, where allowed,
  owner) carry over; a new file gets the mode ``open()`` would give it (0666 less the umask),
  never mkstemp's 0600. A file without write permission is refused, root or not: read-only is how
  a user says "do not touch".
* **a symlink**: written through. The rename happens at the link's final target, so the link
  stays a link and the file it names gets the new content. A link through ``/proc/<pid>/fd`` or
  ``/dev/fd`` (``/dev/stdout``, ``/dev/stderr``) is an open stream, not a file to replace: it is
  opened and appended to.
* **a device node or FIFO** (``/dev/null``, ``/dev/full``, a named pipe): opened and written,
  never replaced.
* **a directory, a socket**: refused.

Every failure is an ``OutputError`` with one line that starts with the path.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import tempfile
from pathlib import Path

# Links into these trees name another process's (or our own) open files: streams, not files.
_STREAM_PREFIXES = ("/proc/", "/dev/fd/")


class OutputError(ValueError):
    """An output path cannot be written; one line, path first."""


def _umask() -> int:
    # os.umask can only be read by setting it; put it straight back.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _link_chain(path: str) -> list[str]:
    """The path followed by every symlink it passes through (at most 40, as the kernel)."""
    chain = [path]
    current = path
    for _ in range(40):
        if not os.path.islink(current):
            break
        target = os.readlink(current)
        current = os.path.normpath(os.path.join(os.path.dirname(current), target))
        chain.append(current)
    return chain


def _is_stream(path: str) -> bool:
    return any(p.startswith(_STREAM_PREFIXES) for p in _link_chain(os.path.abspath(path)))


def _own_fd(path: str) -> int | None:
    """N when ``path`` names this process's own descriptor N (/dev/stdout, /dev/fd/N,
    /proc/self/fd/N): written through that descriptor, so the bytes land where its offset is, in
    order with everything else this process prints there."""
    for p in _link_chain(os.path.abspath(path)):
        for prefix in ("/proc/self/fd/", f"/proc/{os.getpid()}/fd/", "/dev/fd/"):
            if p.startswith(prefix) and p[len(prefix):].isdigit():
                return int(p[len(prefix):])
    return None


def _read_only(st: os.stat_result, path: str) -> bool:
    if os.geteuid() == 0:  # root may write anything: a file with no write bit is still refused
        return not st.st_mode & 0o222
    return not os.access(path, os.W_OK)


def _describe(st: os.stat_result) -> str | None:
    """None when the file type is written through; else why it is refused."""
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        return "is a directory, not a file"
    if stat.S_ISSOCK(mode):
        return "is a socket; not writing to it"
    return None


def _name_too_long(path: Path, existing: Path) -> str | None:
    """Why a path that does not exist yet cannot be created for its length, or None.

    Checked up front because the kernel reports ENOENT for a missing parent before
    ENAMETOOLONG, so ``os.stat`` alone lets an over-long name (a long spec name plus
    ``.PROPERTY.itf.json``) through to the write, after the whole run."""
    try:
        name_max = os.pathconf(existing, "PC_NAME_MAX")
    except (OSError, ValueError):
        name_max = 255
    for part in path.relative_to(existing).parts:
        size = len(os.fsencode(part))
        if size > name_max:
            return f"a file name of {size} bytes is too long (at most {name_max} here)"
    size = len(os.fsencode(str(path)))
    if size >= 4096:
        return f"the path is too long ({size} bytes)"
    return None


def _nearest_dir(path: Path) -> Path:
    """The closest existing ancestor (the directory that the write will create parents in)."""
    for parent in path.parents:
        if os.path.lexists(parent):
            return parent
    return Path(".")


def check_output(path: str | Path, what: str = "output") -> None:
    """Raise OutputError (one line) unless ``write_output(path, ...)`` would be allowed.

    ``what`` names the option (``--json``) in the message. Device nodes pass: whether a device
    accepts the bytes (``/dev/full`` does not) is only known by writing.
    """
    text = str(path)
    if not text:
        raise OutputError(f"{what}: the file name is empty")
    if text.endswith(os.sep) and not os.path.isdir(text):
        # A trailing slash names a directory; writing a file called "x.md" for "x.md/" would
        # not be what was asked.
        raise OutputError(f"{text}: {what}: names a directory (trailing '/'), not a file")
    if _is_stream(text):
        return
    real = os.path.realpath(text)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise OutputError(f"{text}: {what}: cannot use this path: {exc.strerror}") from None
    if st is not None:
        why = _describe(st)
        if why:
            raise OutputError(f"{text}: {what}: {why}")
        if stat.S_ISREG(st.st_mode) and _read_only(st, real):
            raise OutputError(f"{text}: {what}: the file is read-only; not overwriting it")
        if not stat.S_ISREG(st.st_mode) and not os.access(real, os.W_OK):
            raise OutputError(f"{text}: {what}: not writable")
        return
    parent = _nearest_dir(Path(real))
    if not parent.is_dir():
        raise OutputError(f"{text}: {what}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{text}: {what}: cannot create a file in {parent} (permission denied)")
    too_long = _name_too_long(Path(real), parent)
    if too_long:
        raise OutputError(f"{text}: {what}: {too_long}")


def check_directory(path: str | Path, what: str = "--out") -> None:
    """Raise OutputError unless ``path`` is (or can be created as) a writable directory."""
    text = str(path)
    if not text:
        raise OutputError(f"{what}: the directory name is empty (use . for this directory)")
    real = Path(os.path.realpath(text))
    if real.exists():
        if not real.is_dir():
            raise OutputError(f"{text}: {what} must be a directory")
        if not os.access(real, os.W_OK | os.X_OK):
            raise OutputError(f"{text}: {what}: cannot write in this directory (permission denied)")
        return
    parent = _nearest_dir(real)
    if not parent.is_dir():
        raise OutputError(f"{text}: {what}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{text}: {what}: cannot create it in {parent} (permission denied)")
    too_long = _name_too_long(real, parent)
    if too_long:
        raise OutputError(f"{text}: {what}: {too_long}")


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether two output paths end up at the same file (through links and ``..``)."""
    if _is_stream(str(a)) or _is_stream(str(b)):
        return False  # two options may both append to stdout
    return os.path.realpath(a) == os.path.realpath(b)


def write_output(path: str | Path, text: str | bytes) -> Path:
    """Write ``text`` to ``path`` as the module docstring says; returns the path written."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    name = str(path)
    check_output(name)
    try:
        fd = _own_fd(name)
        if fd is not None:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
            _write_all(fd, data)
            return Path(name)
        if _is_stream(name):
            _write_through(name, data, append=True)
            return Path(name)
        real = os.path.realpath(name)
        try:
            st: os.stat_result | None = os.stat(real)
        except FileNotFoundError:
            st = None
        if st is not None and not stat.S_ISREG(st.st_mode):
            _write_through(real, data, append=False)
        else:
            _replace(Path(real), data, st)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if exc.errno == errno.ENOSPC:
            reason = "no space left on device"
        raise OutputError(f"{name}: cannot write: {reason}") from None
    return Path(name)


def _write_through(path: str, data: bytes, append: bool) -> None:
    flags = os.O_WRONLY | (os.O_APPEND if append else 0)
    fd = os.open(path, flags)
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _replace(real: Path, data: bytes, st: os.stat_result | None) -> None:
    real.parent.mkdir(parents=True, exist_ok=True)
    if st is not None and not os.access(real.parent, os.W_OK | os.X_OK):
        # The directory is not ours to add files to, but the file is writable: write in place.
        with open(real, "r+b") as f:
            f.truncate(0)
            f.write(data)
        return
    fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if st is not None:
                os.fchmod(f.fileno(), stat.S_IMODE(st.st_mode))
                if (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
                    try:
                        os.fchown(f.fileno(), st.st_uid, st.st_gid)
                    except OSError:
                        pass  # only root may give a file away; the content matters more
            else:
                os.fchmod(f.fileno(), 0o666 & ~_umask())
            os.fsync(f.fileno())
        os.replace(tmp, real)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
