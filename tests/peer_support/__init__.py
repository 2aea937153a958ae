"""What the peer-harness tests share: stand-in executables and a hand-written trace."""

from __future__ import annotations

import stat
from pathlib import Path

# A trace in the peers' format in which flow 0's retransmission of 1461 is dropped.
ONE_LOST_RETRANSMIT = """\
0.000100000,tx,0,1,1460
0.000100000,tx,0,1461,1460
0.000130000,drop,0,1461,1460,21
0.000200000,rtx,0,1461,1460
0.000230000,drop,0,1461,1460,21
"""


def executable(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` and make it executable (a stand-in for ns or ns3-incast)."""
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path
