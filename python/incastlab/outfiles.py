"""Output files that appear whole or not at all, checked before any work starts."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from .errors import UsageError

if TYPE_CHECKING:
    import pandas as pd


def check_writable(path: str | os.PathLike, param: str, suffixes: tuple[str, ...] | None = None) -> Path:
    """Refuse a path we could not write (wrong extension, missing or read-only directory)."""
    if str(path).strip() == "":
        raise UsageError(param, str(path), "a file path")
    p = Path(path)
    if suffixes is not None and p.suffix.lower().lstrip(".") not in suffixes:
        raise UsageError(param, str(path), "a file name ending in " + ", ".join("." + s for s in suffixes))
    if p.is_dir():
        raise UsageError(param, str(path), "a file name, not a directory")
    parent = p.parent
    if not parent.is_dir():
        raise UsageError(param, str(path), f"a path in an existing directory ({parent} does not exist)")
    if not os.access(parent, os.W_OK):
        raise UsageError(param, str(path), f"a path in a writable directory ({parent} is not writable)")
    return p


def write_atomically(path: str | os.PathLike, write: Callable[[str], None]) -> Path:
    """Call ``write(tmp_name)`` then rename over ``path``, so readers never see half a file."""
    p = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=".incastlab-", suffix=p.suffix, dir=p.parent)
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, p)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return p


def write_csv(df: pd.DataFrame, path: str | os.PathLike) -> Path:
    """``df`` as CSV (no index), written atomically."""
    return write_atomically(path, lambda tmp: df.to_csv(tmp, index=False))
