"""Model modules loaded from a file: ``model = "path/to/file.py:ATTR"`` in a spec, ``--model
file.py:ATTR`` on the command line. No PYTHONPATH and no installation.

The rule (also in docs/tutorial-design-review.md):

- ``FILE.py:ATTR`` (or ``FILE.py``, meaning ``FILE.py:MODELS``): a Python file. In a spec a relative
  path is relative to the spec file's directory; on the command line, to the working directory.
- ``module:ATTR`` where ``module.py`` (dots as folders) lies next to the spec: that file, before any
  installed module of the name, as Python finds a module next to a script first. Otherwise
  ``module`` is imported as usual (``checker.registry``).
- ``ATTR`` names a module attribute holding a ``ModelDef`` or a list of exactly one; if the module
  has no such attribute, the ``ModelDef`` of that name in the module's ``MODELS`` list.

Each file is imported once per process as ``eoscheck.checker.pathmodel.m_<hex of its absolute
path>``. The name says where the file is, so a process that never loaded it (a worker started by
spawn, a pickle read elsewhere) imports it again on first use: importing this module installs the
finder that maps such names back to files. Classes defined in the file therefore pickle by
reference like any installed module's. Spark executors on other machines cannot see the file, so
``is_path_model`` lets the CLI refuse that combination up front.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from .signals import Terminated

#: makes this module a package, so the per-file modules below can be its submodules
__path__: list[str] = []

PREFIX = __name__ + ".m_"
DEFAULT_ATTR = "MODELS"


class PathModelError(LookupError):
    """A model file that cannot be loaded, or holds no such model; one line."""


def split_reference(text: str) -> tuple[str, str | None]:
    """``"a/b.py:NAME"`` -> ("a/b.py", "NAME"); ``"a/b.py"`` -> ("a/b.py", None)."""
    if text.endswith(".py"):
        return text, None
    head, sep, attr = text.rpartition(":")
    if sep and head.endswith(".py"):
        return head, attr
    return text, None


def is_file_reference(text: str) -> bool:
    """The model reference names a Python file (``FILE.py`` or ``FILE.py:ATTR``)."""
    return split_reference(text)[0].endswith(".py")


def is_path_model(text: str) -> bool:
    """The model is loaded from a file rather than an installed package (after ``resolve``)."""
    return is_file_reference(text)


def resolve(text: str, base: Path) -> str:
    """The model reference with a file path made independent of ``base`` (the spec's directory,
    or the working directory): absolute, or relative to the working directory when the file is
    under it (shorter in reports; the working directory does not change during a run)."""
    file_part, attr = (split_reference(text) if is_file_reference(text)
                       else _module_next_to(text, base))
    if not file_part.endswith(".py"):
        return text
    path = Path(file_part)
    if not path.is_absolute():
        path = base / path
    path = Path(_normal(path))
    try:
        shown = str(path.relative_to(Path.cwd()))
    except ValueError:
        shown = str(path)
    return shown + (f":{attr}" if attr is not None else "")


def _module_next_to(text: str, base: Path) -> tuple[str, str | None]:
    module, sep, attr = text.partition(":")
    if not sep or not module or not all(p.isidentifier() for p in module.split(".")):
        return text, None
    candidate = base.joinpath(*module.split(".")).with_suffix(".py")
    if candidate.is_file():
        return str(candidate), attr
    return text, None


def _normal(path: Path) -> str:
    import os
    return os.path.normpath(os.path.abspath(path))


def module_name(path: Path) -> str:
    return PREFIX + _normal(path).encode("utf-8").hex()


def _path_of(name: str) -> Path:
    return Path(bytes.fromhex(name[len(PREFIX):]).decode("utf-8"))


def load_module(file_part: str) -> ModuleType:
    """Import the file (once per process); errors become ``PathModelError``, one line."""
    path = Path(_normal(Path(file_part)))
    name = module_name(path)
    if name in sys.modules:
        return sys.modules[name]
    if not path.exists():
        raise PathModelError(f"model file {file_part}: no such file")
    if not path.is_file():
        raise PathModelError(f"model file {file_part}: not a file")
    try:
        return importlib.import_module(name)
    except SyntaxError as exc:
        where = f"{file_part}:{exc.lineno}" if exc.lineno else file_part
        raise PathModelError(f"model file {where}: {exc.msg}") from None
    except (KeyboardInterrupt, Terminated):
        raise  # the user's Ctrl-C or a kill, not the file's fault
    except SystemExit as exc:
        # A model file that calls sys.exit() while being imported would otherwise end the run
        # with its code (0: a check that never ran reports success).
        line = _failing_line(exc, path)
        where = f"{file_part}:{line}" if line else file_part
        raise PathModelError(f"model file {where} called sys.exit({exc.code!r}) while being "
                             "imported") from None
    except BaseException as exc:  # noqa: BLE001 - the user's module failed while importing; one line
        line = _failing_line(exc, path)
        where = f"{file_part}:{line}" if line else file_part
        raise PathModelError(f"model file {where} failed to import: {type(exc).__name__}: {exc}") from None


def _failing_line(exc: BaseException, path: Path) -> int | None:
    """The deepest line of the model file in the traceback (where the user should look)."""
    tb = exc.__traceback__
    line = None
    target = str(path)
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == target:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def lookup(text: str) -> object:
    """The object a file reference names: a ModelDef, or something the caller refuses."""
    from .registry import ModelDef

    file_part, attr = split_reference(text)
    module = load_module(file_part)
    name = attr or DEFAULT_ATTR
    if hasattr(module, name):
        obj = getattr(module, name)
        if isinstance(obj, ModelDef):
            return obj
        if isinstance(obj, (list, tuple)) and all(isinstance(m, ModelDef) for m in obj):
            if len(obj) == 1:
                return obj[0]
            names = ", ".join(m.name for m in obj) or "(none)"
            raise PathModelError(f"{file_part}:{name} holds {len(obj)} models ({names}); name one: "
                                 f"{file_part}:MODEL_NAME")
        raise PathModelError(f"{file_part}:{name} is not a ModelDef or a list of ModelDefs "
                             f"(it is {type(obj).__name__})")
    if attr is None:
        raise PathModelError(f"{file_part} has no {DEFAULT_ATTR} list; name the model: {file_part}:ATTR")
    listed: Sequence[object] = getattr(module, DEFAULT_ATTR, ())
    if isinstance(listed, (list, tuple)):
        for md in listed:
            if isinstance(md, ModelDef) and md.name == name:
                return md
    models = [m.name for m in listed if isinstance(m, ModelDef)] if isinstance(listed, (list, tuple)) else []
    hint = f"; its MODELS: {', '.join(models)}" if models else f"; it has no {DEFAULT_ATTR} list"
    raise PathModelError(f"{file_part} has no attribute {name!r} and no model of that name{hint}")


class _Finder(importlib.abc.MetaPathFinder):
    """Maps ``eoscheck.checker.pathmodel.m_<hex path>`` back to its file."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(PREFIX):
            return None
        try:
            file = _path_of(fullname)
        except ValueError:
            return None
        return importlib.util.spec_from_file_location(fullname, file, loader=_Loader(fullname, str(file)))


class _Loader(importlib.machinery.SourceFileLoader):
    """Imports without writing ``__pycache__`` into the user's folder (nothing of theirs changes)."""

    def set_data(self, path: str, data: Any, *, _mode: int = 0o666) -> None:
        return None


if not any(isinstance(f, _Finder) for f in sys.meta_path):
    sys.meta_path.append(_Finder())
