"""The result store: every simulated point once, as a Parquet dataset (pyarrow).

A store is a directory::

    STORE/incastlab-store.json   what this directory is (format version)
    STORE/data/part-*.parquet    result rows, one file per finished batch
    STORE/runs/RUN.json          one journal per sweep: what it ran, where, and how it ended

A row is the core's result with every scenario field (``incastlab.result.with_scenario``),
plus ``point_key``, ``core_version``, ``core_build``, ``scenario_json`` and ``run_id``. The
key is the SHA-256 of the canonical JSON of the complete scenario in the core's units
(``Scenario.to_native()``: every field, the defaults resolved) and of the core that ran
it (``worker.core_identity``), so the same point on the same core is computed once, and
anything else (another field, another default, another build of the core) is another
point.

Why it survives kills and concurrent writers: a file is written under a hidden
temporary name (pyarrow.dataset skips names starting with ``.``) and renamed into
place, so readers see whole files or none; every writer names its own
files, so two sweeps never touch the same file; readers keep one row per key. A
SIGKILL loses the batches not yet renamed, that is the points in flight.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
import uuid
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from ..errors import UsageError
from .keys import KEY, canonical_json, point_key  # noqa: F401 - the store's keys, also for its users

if TYPE_CHECKING:
    import pandas as pd

FORMAT = 1
MARKER = "incastlab-store.json"
#: Columns a store adds to each result row.
STORE_COLUMNS = (KEY, "core_version", "core_build", "run_id", "scenario_json")
#: Compact when a store holds more files than this (many small batches read slowly).
COMPACT_ABOVE_FILES = 256
#: Reads retried when a concurrent compaction removed a file between listing and reading.
_READ_TRIES = 5


class ResultStore:
    """A result store directory (see the module docstring)."""

    def __init__(self, root: str | os.PathLike, param: str = "--store"):
        self.root = Path(root)
        self.data = self.root / "data"
        self.runs = self.root / "runs"
        try:
            self._open(param)
        except (OSError, ValueError) as e:  # a path the system refuses (too long, a NUL byte, no access)
            if isinstance(e, UsageError):
                raise
            raise UsageError(param, str(root), f"a directory path this system accepts ({e})") from None

    def _open(self, param: str) -> None:
        """Check the directory; create nothing yet (``_ensure``), so a run refused or
        stopped before its first point leaves no file behind."""
        marker = self.root / MARKER
        if "\0" in str(self.root):  # pathlib's exists() says False where open() would raise
            raise UsageError(param, str(self.root), "a directory path (without NUL bytes)")
        if self.root.exists() and not self.root.is_dir():
            raise UsageError(param, str(self.root), "a directory for the result store (this is a file)")
        if self.root.is_dir() and any(self.root.iterdir()) and not marker.exists():
            raise UsageError(param, str(self.root), f"a result store (it has no {MARKER}) or a new or empty directory")
        if marker.exists():
            try:
                fmt = json.loads(marker.read_text()).get("format")
            except (OSError, ValueError):
                fmt = None
            if fmt != FORMAT:
                raise UsageError(param, str(self.root), f"a result store of format {FORMAT} (this one's is {fmt})")
        elif not self.root.parent.is_dir():
            raise UsageError(param, str(self.root), f"a directory whose parent exists ({self.root.parent} does not)")
        where = self.root if self.root.exists() else self.root.parent
        if not os.access(where, os.W_OK):
            raise UsageError(param, str(self.root), f"a writable directory ({where} is not)")

    def _ensure(self) -> None:
        """Create the store's directories and marker (before its first write)."""
        self.root.mkdir(exist_ok=True)
        for d in (self.data, self.runs):
            d.mkdir(exist_ok=True)
        marker = self.root / MARKER
        if not marker.exists():
            _write_text_atomically(marker, json.dumps({"format": FORMAT, "what": "incastlab result store"}) + "\n")

    # --- reading ---------------------------------------------------------------------

    def files(self) -> list[Path]:
        """The finished data files (temporary files are hidden by their leading dot)."""
        return sorted(p for p in self.data.glob("part-*.parquet"))

    def keys(self) -> set[str]:
        """Every key the store holds (reads the key column only)."""
        table = self._read(columns=[KEY])
        return set(table.column(KEY).to_pylist()) if table is not None else set()

    def read(self, keys: Iterable[str] | None = None) -> "pd.DataFrame":
        """The rows for ``keys`` (all rows when None), one per key, as a DataFrame."""
        import pandas as pd

        table = self.read_table(keys)
        if table is None:
            return pd.DataFrame(columns=list(STORE_COLUMNS))
        df = table.to_pandas()
        return df.drop_duplicates(subset=KEY, keep="first").reset_index(drop=True)

    def read_table(self, keys: Iterable[str] | None = None) -> pa.Table | None:
        """The rows for ``keys`` (all when None) as one Arrow table, or None when there are
        none; a key written by two sweeps at once may appear twice (the rows are equal)."""
        wanted = None if keys is None else sorted(set(keys))
        if wanted == []:
            return None
        return self._read(filter=ds.field(KEY).isin(wanted) if wanted is not None else None)

    def _read(self, columns: list[str] | None = None, filter=None) -> pa.Table | None:
        for attempt in range(_READ_TRIES):
            files = self.files()
            if not files:
                return None
            try:
                return _dataset(files, columns is None).to_table(columns=columns, filter=filter)
            except FileNotFoundError:  # a concurrent compaction removed a file: list again
                if attempt == _READ_TRIES - 1:
                    raise
                time.sleep(0.05 * (attempt + 1))
        return None

    # --- writing ---------------------------------------------------------------------

    def write(self, rows: list[dict[str, Any]]) -> Path | None:
        """``rows`` as one new Parquet file, whole or not at all (a temporary file, renamed)."""
        if not rows:
            return None
        self._ensure()
        table = pa.Table.from_pylist(rows)
        name = f"part-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}-{uuid.uuid4().hex[:12]}.parquet"
        final = self.data / name
        tmp = self.data / f".{name}.tmp"
        try:
            # no fsync: a killed process loses nothing the kernel has (and fsync cost 5-20 ms
            # a batch here, while the worker waited); ext4 orders the data of a file replaced by
            # rename before the rename (auto_da_alloc), which covers most power losses too
            pq.write_table(table, tmp, compression="zstd")
            os.replace(tmp, final)
        finally:
            tmp.unlink(missing_ok=True)
        return final

    def compact(self, above: int = COMPACT_ABOVE_FILES) -> int:
        """Merge the data files into one when there are more than ``above``; returns how many
        files were merged. Safe next to writers and readers: the merged file is renamed in
        before the pieces are removed (readers keep one row per key meanwhile), and only the
        files read are removed, so rows written meanwhile stay."""
        files = self.files()
        if len(files) <= above:
            return 0
        try:
            table = _dataset(files, True).to_table()
        except FileNotFoundError:  # another process is compacting these very files
            return 0
        df = table.to_pandas().drop_duplicates(subset=KEY, keep="first")
        self.write(df.to_dict("records"))
        for f in files:
            f.unlink(missing_ok=True)
        return len(files)

    # --- run journals ------------------------------------------------------------------

    def new_run_id(self) -> str:
        return f"{time.strftime('%Y%m%dT%H%M%S')}-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"

    def write_journal(self, run_id: str, journal: Mapping[str, Any]) -> None:
        self._ensure()
        _write_text_atomically(self.runs / f"{run_id}.json", json.dumps(journal, indent=1, default=str) + "\n")

    def journals(self) -> list[dict[str, Any]]:
        """Every run's journal, oldest first (unreadable ones skipped with a warning)."""
        out = []
        for p in sorted(self.runs.glob("*.json")):
            try:
                out.append(json.loads(p.read_text()))
            except (OSError, ValueError) as e:
                warnings.warn(f"skipping run journal {p}: {e}", stacklevel=2)
        return sorted(out, key=lambda j: j.get("started", ""))


def _dataset(files: list[Path], unify: bool) -> ds.Dataset:
    """The files as one dataset; with ``unify``, under the union of their schemas (rows from
    another core may have other result columns; a column of nulls takes its type elsewhere)."""
    paths = [str(f) for f in files]
    if not unify:
        return ds.dataset(paths, format="parquet")
    schemas = [pq.read_schema(p) for p in paths]
    schema = pa.unify_schemas(schemas, promote_options="permissive")
    return ds.dataset(paths, format="parquet", schema=schema)


def _write_text_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:6]}.tmp")
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
