"""Fan-in: how many TCP peers delivered data to this host during a second.

Incast is many senders answering at once; a single bulk flow that loses packets and waits
out RTOs shows the same line-rate stretches and timeouts on the interface counters. The
receiver's sockets tell them apart: `ss -tin` reports `bytes_received` per connection
(tcp_info.tcpi_bytes_received), and the peers whose count grew in a second are the
senders of that second. Read in the monitor's own network namespace (`--netns` re-runs
the monitor inside the interface's namespace).
"""

from __future__ import annotations

import re
import shutil
import subprocess

_BYTES_RECEIVED = re.compile(r"\bbytes_received:(\d+)")


def parse_ss(text: str) -> dict[tuple[str, str], int]:
    """(local, peer) -> bytes_received from `ss -tinH` output (a socket line, then its
    indented info line)."""
    out: dict[tuple[str, str], int] = {}
    key = None
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            cols = line.split()
            key = (cols[3], cols[4]) if len(cols) >= 5 else None
            continue
        m = _BYTES_RECEIVED.search(line)
        if key is not None and m:
            out[key] = int(m.group(1))
    return out


def read_bytes_received() -> dict[tuple[str, str], int] | None:
    """Every TCP connection's bytes received, or None when `ss` cannot be run."""
    ss = shutil.which("ss")
    if ss is None:
        return None
    try:
        r = subprocess.run([ss, "-tinH"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return parse_ss(r.stdout) if r.returncode == 0 else None


class SenderCounter:
    """Counts, second by second, the connections whose bytes_received grew."""

    def __init__(self):
        self.last: dict[tuple[str, str], int] | None = None

    def update(self, current: dict[tuple[str, str], int] | None) -> int | None:
        if current is None:
            return None
        before = self.last or {}
        self.last = current
        # a connection new this second counts if it received anything
        return sum(1 for k, v in current.items() if v > before.get(k, 0))
