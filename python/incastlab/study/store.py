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

What it does with a damaged file (a disk fault, a copy cut short, a hand edit): data
files carry Parquet page checksums (CRC-32) as well as Parquet's own framing, so a
truncated, overwritten or garbled file fails to read. It is then named in a one-line
warning and moved to ``STORE/damaged/`` (or, in a store this process may not write,
skipped); its points are missing from the store, so the next run simulates them again.
Reading needs no write access: ``incastlab report`` works on a read-only store.
"""

from __future__ import annotations

import json
import os
import platform
import re
import socket
import time
import uuid
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from ..errors import EnvironmentProblem, UsageError
from ..outfiles import OutputError
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
#: Where damaged data files are moved (not read, not deleted: a user may want to look).
DAMAGED = "damaged"


class DamagedFileWarning(UserWarning):
    """A file of a store (or of an output directory) could not be read and was set aside."""


class ResultStore:
    """A result store directory (see the module docstring)."""

    def __init__(self, root: str | os.PathLike, param: str = "--store", readonly: bool = False):
        """``readonly``: only read (``incastlab report``): no write access needed, and a
        damaged file is skipped, not moved."""
        self.root = Path(root)
        self.data = self.root / "data"
        self.runs = self.root / "runs"
        self.readonly = readonly
        #: Damaged files this process could not move away: skipped by every read.
        self.skipped: set[Path] = set()
        self._swept = False
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
                fmt = json.loads(marker.read_text()).get("format") if marker.is_file() else None
            except (OSError, ValueError, AttributeError):  # AttributeError: JSON but not an object
                fmt = None
            if fmt != FORMAT:
                raise UsageError(param, str(self.root), f"a result store of format {FORMAT} (this one's is {fmt})")
        elif not self.root.parent.is_dir():
            raise UsageError(param, str(self.root), f"a directory whose parent exists ({self.root.parent} does not)")
        where = self.root if self.root.exists() else self.root.parent
        if not self.readonly and not os.access(where, os.W_OK):
            raise UsageError(param, str(self.root), f"a writable directory ({where} is not)")

    def _ensure(self) -> None:
        """Create the store's directories and marker (before its first write), and remove
        the temporary files of writers that were killed (once per store and process)."""
        self.root.mkdir(exist_ok=True)
        for d in (self.data, self.runs):
            d.mkdir(exist_ok=True)
        if not self._swept:
            self._swept = True
            _remove_stale_temps(self.data, self.runs)
        marker = self.root / MARKER
        if not marker.exists():
            _write_text_atomically(marker, json.dumps({"format": FORMAT, "what": "incastlab result store"}) + "\n")

    # --- reading ---------------------------------------------------------------------

    def files(self) -> list[Path]:
        """The finished data files (temporary files are hidden by their leading dot)."""
        return sorted(p for p in self.data.glob("part-*.parquet") if p not in self.skipped and p.is_file())

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
            except (pa.ArrowException, OSError) as e:
                # a file that does not read whole: find it (them), set it aside, read the rest
                if not self._set_aside_damaged(files):  # each reads alone: they do not fit together
                    raise EnvironmentProblem(f"the result store {self.root} does not read as one dataset "
                                             f"({_short_reason(e)})") from None
        return None

    def _set_aside_damaged(self, files: list[Path]) -> list[Path]:
        """Read each of ``files`` alone; move those that fail to ``STORE/damaged/`` (or
        skip them here when the store cannot be written), each with a one-line warning.
        Returns the files set aside."""
        bad = []
        for f in files:
            try:
                pq.read_table(f, page_checksum_verification=True)
            except FileNotFoundError:
                continue  # compacted away meanwhile: not damaged
            except (pa.ArrowException, OSError) as e:
                bad.append(f)
                self._set_aside(f, _short_reason(e))
        return bad

    def _set_aside(self, f: Path, why: str) -> None:
        dest = self.root / DAMAGED / f.name
        if self.readonly:
            self.skipped.add(f)
            what = (f"skipped (reading only; the next sweep or reproduce on this store moves it to {dest.parent} "
                    "and simulates its points again)")
        else:
            try:
                dest.parent.mkdir(exist_ok=True)
                os.replace(f, dest)
                what = f"moved to {dest}; its points will be simulated again"
            except OSError as e:
                self.skipped.add(f)
                what = f"skipped (it could not be moved: {e.strerror or e}); its points count as missing"
        warnings.warn(DamagedFileWarning(f"result store file {f} is damaged ({why}); {what}"), stacklevel=3)

    # --- writing ---------------------------------------------------------------------

    def write(self, rows: list[dict[str, Any]]) -> Path | None:
        """``rows`` as one new Parquet file, whole or not at all (a temporary file, renamed)."""
        if not rows:
            return None
        try:
            self._ensure()
        except OSError as e:
            raise self._cannot_write(e) from None
        table = pa.Table.from_pylist(rows)
        name = f"part-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}-{uuid.uuid4().hex[:12]}.parquet"
        final = self.data / name
        tmp = self.data / f".{name}.tmp"
        try:
            # no fsync: a killed process loses nothing the kernel has (and fsync cost 5-20 ms
            # a batch here, while the worker waited); ext4 orders the data of a file replaced by
            # rename before the rename (auto_da_alloc), which covers most power losses too
            pq.write_table(table, tmp, compression="zstd", write_page_checksum=True)
            os.replace(tmp, final)
        except OSError as e:  # a full disk: one line; the batches stored before are kept
            raise self._cannot_write(e) from None
        finally:
            tmp.unlink(missing_ok=True)
        return final

    def _cannot_write(self, e: OSError) -> OutputError:
        # pyarrow's OSError: "Error writing bytes to file. Detail: [errno 28] No space left on device"
        why = os.strerror(e.errno) if e.errno else re.sub(r"^.*Detail: \[errno \d+\] ", "", " ".join(str(e).split()))
        return OutputError(f"cannot write to the result store {self.root}: {why}; the points stored before "
                           "are kept, and the same command simulates only the rest")

    def compact(self, above: int = COMPACT_ABOVE_FILES) -> int:
        """Merge the data files into one when there are more than ``above``; returns how many
        files were merged. Safe next to writers and readers: the merged file is renamed in
        before the pieces are removed (readers keep one row per key meanwhile), and only the
        files read are removed, so rows written meanwhile stay."""
        files = self.files()
        if len(files) <= above:
            return 0
        try:
            table = self._read()
        except FileNotFoundError:  # another process is compacting these very files
            return 0
        files = [f for f in files if f.exists() and f not in self.skipped]  # less any set aside as damaged
        if table is None:
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
        try:
            self._ensure()
            _write_text_atomically(self.runs / f"{run_id}.json", json.dumps(journal, indent=1, default=str) + "\n")
        except OSError as e:
            raise self._cannot_write(e) from None

    def journals(self) -> list[dict[str, Any]]:
        """Every run's journal, oldest first (unreadable ones skipped with a warning). A run
        whose journal says "running" but whose process is gone (killed, its machine
        rebooted) reads as "died" (``journal_status``); the file itself is left as it is."""
        out = []
        for p in sorted(self.runs.glob("*.json")):
            try:
                if not p.is_file():
                    raise ValueError("not a regular file")
                j = json.loads(p.read_text())
                if not isinstance(j, dict):
                    raise ValueError("not a JSON object")
            except (OSError, ValueError) as e:
                warnings.warn(DamagedFileWarning(f"skipping run journal {p}: {' '.join(str(e).split())[:160]}"),
                              stacklevel=2)
                continue
            j["status"] = journal_status(j)
            out.append(j)
        return sorted(out, key=lambda j: str(j.get("started", "")))


# temporary names: .part-TIME-PID-HEX.parquet.tmp (write) and .NAME.PID.HEX.tmp (journals)
_STALE_TEMP = re.compile(r"^\.(?:part-[^-]+-(\d+)-[0-9a-f]+\.parquet|.+\.(\d+)\.[0-9a-f]+)\.tmp$")


#: A writer's temporary file lives for the length of one write (under a second); one this old
#: whose pid does not run here is a killed writer's, even in a store several hosts share.
STALE_TEMP_S = 3600


def _remove_stale_temps(*dirs: Path) -> None:
    """Remove the temporary files a killed writer left: a batch being written when a sweep
    was killed, up to a few MB each."""
    from ..outfiles import pid_running

    for d in dirs:
        for p in d.glob(".*.tmp"):
            m = _STALE_TEMP.match(p.name)
            try:
                if m and not pid_running(int(m.group(1) or m.group(2))) \
                        and time.time() - p.stat().st_mtime > STALE_TEMP_S:
                    p.unlink()
            except OSError:
                continue


def _short_reason(e: BaseException) -> str:
    """pyarrow's message on one line, without the path it repeats, to its first sentence."""
    text = re.sub(r"^Could not open Parquet input source '[^']*': ", "", " ".join(str(e).split()))
    return text.split(". ")[0].rstrip(".")[:120] or type(e).__name__


def process_identity(pid: int | None = None) -> dict[str, Any]:
    """What tells a process apart from a later one with the same pid: its start time
    (clock ticks after boot, /proc/PID/stat field 22) and the boot's id."""
    pid = os.getpid() if pid is None else pid
    return {"pid": pid, "pid_start": _start_ticks(pid), "boot_id": _boot_id(), "host": platform.node()}


def _start_ticks(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: count from the last ")"
    return int(stat[stat.rindex(")") + 2:].split()[19])


def _boot_id() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None


def journal_status(j: Mapping[str, Any]) -> str:
    """The journal's status, with a "running" run checked against its process: "died" when
    it ran on this host and its process is gone (the pid is free, or taken by a process
    started at another time, or the machine has rebooted since)."""
    status = str(j.get("status", ""))
    if status != "running" or j.get("host") != platform.node():
        return status
    pid, started = j.get("pid"), j.get("pid_start")
    if not isinstance(pid, int):
        return status
    if j.get("boot_id") and j.get("boot_id") != _boot_id():
        return "died (the machine rebooted since)"
    now = _start_ticks(pid)
    if now is None or (started is not None and now != started):
        in_flight = len(j.get("in_flight") or [])
        return f"died (process {pid} is gone; {in_flight} points were in flight)"
    return status


def _dataset(files: list[Path], unify: bool) -> ds.Dataset:
    """The files as one dataset; with ``unify``, under the union of their schemas (rows from
    another core may have other result columns; a column of nulls takes its type elsewhere)."""
    paths = [str(f) for f in files]
    fmt = ds.ParquetFileFormat(default_fragment_scan_options=ds.ParquetFragmentScanOptions(
        page_checksum_verification=True))  # pages written without a checksum are read as they are
    if not unify:
        return ds.dataset(paths, format=fmt)
    schemas = [pq.read_schema(p) for p in paths]
    schema = pa.unify_schemas(schemas, promote_options="permissive")
    return ds.dataset(paths, format=fmt, schema=schema)


def _write_text_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:6]}.tmp")
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
