"""``--record FILE``: the fine-grained intervals as Parquet or CSV, for ``monitor plot``.

Rows are written as the run goes (not all kept in memory) to a temporary file beside FILE
and renamed at the end, also when Ctrl-C (or SIGTERM, SIGHUP) ends the run, so FILE is
whole: what was recorded, with the file's footer. A failed run (a full disk) leaves none.
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from ..errors import UsageError
from ..interrupts import on_abrupt_exit
from ..outfiles import Outputs, cannot_write, check_writable

COLUMNS = ["t_s", "dt_s", "rx_bytes", "tx_bytes", "rx_packets", "tx_packets"]
SCHEMA = pa.schema([("t_s", pa.float64()), ("dt_s", pa.float64())]
                   + [(c, pa.uint64()) for c in COLUMNS[2:]])
FORMATS = {".parquet": "parquet", ".csv": "csv"}


def check_path(path: str, param: str = "--record") -> str:
    """The format of ``path`` (by extension); UsageError if unknown or not writable (a
    device, a directory, a missing or read-only directory: ``outfiles.check_writable``)."""
    fmt = FORMATS.get(os.path.splitext(path)[1].lower())
    if fmt is None:
        raise UsageError(param, path, "a file name ending in .parquet or .csv")
    check_writable(path, param)
    return fmt


class Recorder:
    """Rows written as they come to a temporary file beside FILE, moved into place by
    ``close`` (also after Ctrl-C: what was recorded is kept) and removed by ``abort``."""

    def __init__(self, path: str, param: str = "--record"):
        self.fmt = check_path(path, param)
        self.path = path
        self._files = Outputs()
        self.partial = self._files.reserve(path, param)
        self._forget = on_abrupt_exit(self._files.discard)
        self._writer = None

    def write(self, t_s, dt_s, rx_bytes, tx_bytes, rx_packets, tx_packets) -> None:
        batch = pa.record_batch([pa.array(t_s, pa.float64()), pa.array(dt_s, pa.float64()),
                                 *(pa.array(c, pa.uint64()) for c in (rx_bytes, tx_bytes, rx_packets, tx_packets))],
                                schema=SCHEMA)
        try:
            if self._writer is None:
                if self.fmt == "parquet":
                    self._writer = pq.ParquetWriter(self.partial, SCHEMA)
                else:
                    self._writer = pacsv.CSVWriter(self.partial, SCHEMA)
            self._writer.write_batch(batch)
        except OSError as e:  # a full disk: the run stops, the file goes
            self.abort()
            raise cannot_write(self.path, e) from None

    def close(self) -> None:
        """Finish the file and move it into place (an empty run still writes a header)."""
        if self._writer is None:
            self.write([], [], [], [], [], [])
        try:
            self._writer.close()
        except OSError as e:
            self.abort()
            raise cannot_write(self.path, e) from None
        self._files.commit()
        self._forget()

    def abort(self) -> None:
        if self._writer is not None:
            try:
                self._writer.close()
            except Exception:  # noqa: BLE001 - cleaning up after another failure
                pass
        self._files.discard()
        self._forget()


def read(path: str):
    """The recorded intervals as a pandas DataFrame; UsageError if not a recording."""
    fmt = FORMATS.get(os.path.splitext(path)[1].lower())
    if fmt is None:
        raise UsageError("FILE", path, "a .parquet or .csv file written by incastlab monitor --record")
    if not os.path.isfile(path):
        raise UsageError("FILE", path, "an existing file written by incastlab monitor --record")
    try:
        table = pq.read_table(path) if fmt == "parquet" else \
            pacsv.read_csv(path, convert_options=pacsv.ConvertOptions(column_types=SCHEMA))
    except (pa.ArrowInvalid, OSError) as e:
        # one line, printable: Arrow's message may quote the file's bytes
        why = "".join(c if c.isascii() and c.isprintable() else "?" for c in " ".join(str(e).split()))[:160]
        raise UsageError("FILE", path, f"a file written by incastlab monitor --record ({why})") from None
    missing = [c for c in COLUMNS if c not in table.column_names]
    if missing:
        raise UsageError("FILE", path, f"a monitor recording (missing columns {', '.join(missing)})")
    try:
        df = table.select(COLUMNS).cast(SCHEMA).to_pandas()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise UsageError("FILE", path, "a monitor recording (times in seconds, counters as whole numbers)") from None
    # what the recorder writes: finite end times in order, each interval above zero
    t, dt = df["t_s"].to_numpy(), df["dt_s"].to_numpy()
    if not (np.isfinite(t).all() and np.isfinite(dt).all() and (dt > 0).all() and (np.diff(t) >= 0).all()):
        raise UsageError("FILE", path, "a monitor recording (finite times in order, intervals above zero)")
    return df
