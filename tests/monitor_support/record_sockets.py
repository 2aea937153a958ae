"""Record what the monitor's fan-in count reads (``TcpWatch.read``) for a unit-test fixture.

    ip netns exec NS python record_sockets.py --every 0.5 --count 6 > readings.json

Prints one JSON object: ``{"every_s": ..., "readings": [baseline, reading, ...]}``, each
reading the dict ``TcpWatch.read`` returns. Run a workload in the same namespace meanwhile
(``tests/test_monitor_units.py`` says how the committed recording was made).
"""

from __future__ import annotations

import argparse
import json
import time

from incastlab import _native


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--every", type=float, default=0.5)
    p.add_argument("--count", type=int, default=6)
    a = p.parse_args()
    watch = _native.TcpWatch()
    readings = [watch.read()]
    for _ in range(a.count):
        time.sleep(a.every)
        readings.append(watch.read())
    print(json.dumps({"every_s": a.every, "readings": readings}))


if __name__ == "__main__":
    main()
