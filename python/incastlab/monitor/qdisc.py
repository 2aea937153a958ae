"""Drop and overlimit counters of an interface's qdiscs, from ``tc -s -j qdisc show``.

The switch buffer that overflows in incast is, on a Linux box, a qdisc: its ``drops`` are
the frames the blog's operator could only see as switch "discards"
(``003_a133663d5dbcfa75.txt``, comment 15 and the reply to it).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass


@dataclass(frozen=True)
class QdiscStats:
    kind: str
    handle: str
    parent: str | None
    drops: int
    overlimits: int
    requeues: int
    backlog_bytes: int
    qlen: int

    @property
    def name(self) -> str:
        return f"{self.kind} {self.handle}"


def parse_tc_json(text: str) -> list[QdiscStats]:
    """Qdiscs from the JSON of ``tc -s -j qdisc show dev IF``; raises ValueError if garbled."""
    try:
        items = json.loads(text) if text.strip() else []
    except json.JSONDecodeError as e:
        raise ValueError(f"tc printed no JSON: {e}") from None
    if not isinstance(items, list):
        raise ValueError("tc JSON is not a list of qdiscs")
    out = []
    for q in items:
        if not isinstance(q, dict) or "kind" not in q:
            raise ValueError(f"tc JSON entry without a kind: {q!r}")
        out.append(QdiscStats(
            kind=str(q["kind"]),
            handle=str(q.get("handle", "")),
            parent=q.get("parent"),
            drops=int(q.get("drops", 0)),
            overlimits=int(q.get("overlimits", 0)),
            requeues=int(q.get("requeues", 0)),
            backlog_bytes=int(q.get("backlog", 0)),
            qlen=int(q.get("qlen", 0)),
        ))
    return out


def read_qdiscs(dev: str, netns: str | None = None, timeout_s: float = 2.0) -> list[QdiscStats]:
    """Qdisc stats of ``dev`` (in ``netns`` if given); OSError with a reason if unreadable."""
    tc = shutil.which("tc") or next((p for p in ("/usr/sbin/tc", "/sbin/tc") if shutil.os.path.exists(p)), None)
    if tc is None:
        raise OSError("tc is not installed (apt install iproute2)")
    cmd = [tc] + (["-n", netns] if netns else []) + ["-s", "-j", "qdisc", "show", "dev", dev]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise OSError(f"{' '.join(cmd)} did not answer within {timeout_s} s") from None
    if r.returncode != 0:
        raise OSError(f"{' '.join(cmd)}: {r.stderr.strip() or 'exit status %d' % r.returncode}")
    return parse_tc_json(r.stdout)
