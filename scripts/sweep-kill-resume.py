"""Kill a sweep with SIGKILL mid-way, run it again, and count what was lost and recomputed
(docs/sweep.md, "Resuming after kill -9"). Usage:

    python scripts/sweep-kill-resume.py OUT [SECONDS] -- --grid servers=1..64 ... --seeds 4

OUT must not exist. The sweep runs as `incastlab sweep ARGS --out OUT` in its own process
group; after SECONDS (default 6) the group is killed, the journal and the store are read,
the same command runs again, and the points it simulated are compared with the ones that
were in flight at the kill.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from incastlab.study import spec, worker
from incastlab.study.store import ResultStore, canonical_json, point_key


def main(argv: list[str]) -> int:
    if "--" not in argv or len(argv[:argv.index("--")]) not in (1, 2):
        print(__doc__, file=sys.stderr)
        return 2
    head, args = argv[:argv.index("--")], argv[argv.index("--") + 1:]
    out, seconds = Path(head[0]), float(head[1]) if len(head) > 1 else 6.0
    if out.exists():
        print(f"{out} exists; give a new directory", file=sys.stderr)
        return 2
    cmd = [sys.executable, "-m", "incastlab.cli.main", "sweep", *args, "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    time.sleep(seconds)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()

    store = ResultStore(out / "store")
    (killed,) = store.journals()
    grid = args[args.index("--grid") + 1:]
    grid = grid[:next((i for i, a in enumerate(grid) if a.startswith("--")), len(grid))]
    seeds = int(args[args.index("--seeds") + 1]) if "--seeds" in args else None
    order = list(dict.fromkeys(point_key(canonical_json(p.scenario.to_native()), worker.core_identity())
                               for p in spec.from_grid(grid, seeds).points()))
    stored, submitted = store.keys(), set(order[:killed["submitted"]])
    in_flight = set(killed["in_flight"])
    print(f"killed after {seconds:g} s: {len(submitted)} points submitted, {len(stored)} stored in "
          f"{len(store.files())} files, {len(in_flight)} in flight; lost {len(submitted - stored)}, "
          f"all of them in flight: {submitted - stored <= in_flight}")

    rerun = subprocess.run(cmd, capture_output=True, text=True)
    if rerun.returncode != 0:
        print(rerun.stderr, file=sys.stderr)
        return 1
    done = [j for j in store.journals() if j["status"] == "done"][-1]
    rows = store.read()
    recomputed = set(rows.loc[rows["run_id"] == done["run_id"], "point_key"])
    print(f"re-run: {done['from_store']} points from the store, {done['computed']} simulated "
          f"(= {len(order)} - {len(stored)}); of those, {len(recomputed & submitted)} had been submitted before "
          f"the kill, and they are the in-flight ones: {recomputed & submitted == in_flight - stored}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
