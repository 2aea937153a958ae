#!/usr/bin/env python3
"""`incastlab monitor` on a busy real host (issue 26): a fan-in read beside a bulk flow that
keeps the link above half its rate, on this machine's network namespaces.

    flock /tmp/incastlab-netns.lock .venv/bin/python scripts/monitor-busy-host.py \
        [--seconds 8] [--out docs/img/monitor-busy-host.png] [--json runs/busy.jsonl]

The topology is the monitor's end-to-end test's (tests/monitor_support/netns_setup.py): 16
server addresses behind a router whose port towards the client is a 500 Mbit/s tbf with a
64 KiB limit. A bulk flow from the first server address streams to the client for the whole
run; beside it the client reads 256 KiB from all 16 at once, block after block (FAST'08,
000_315d806dde942a9f.txt §2). The monitor watches the client's interface with the line
rate given, the servers' TCP counters (RTO timeouts are counted at the senders) and the
tbf's drops. Prints one Markdown row per second (the verdict, its evidence, and what the
rule before issue 26 said) and draws the rates and the verdicts. Needs root.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests"))

from monitor_support import netns_setup as topo  # noqa: E402
from monitor_support.run import CLI, env, json_lines  # noqa: E402

WORKLOAD = os.path.join(REPO, "tests", "monitor_support", "workload.py")
RATE_TC, RATE_MBPS = "500mbit", 500


def run(seconds: int, record: str, ms: str) -> tuple[list[dict], dict]:
    addrs = ",".join(topo.SERVER_ADDRS)
    # the workloads outlast the monitor's start-up (tens of seconds under `ip netns exec` on a loaded 2-core
    # box: 20 s were not enough at load 12) and are killed when it ends
    duration = seconds + 90
    server = subprocess.Popen(["ip", "netns", "exec", topo.SERVERS, sys.executable, WORKLOAD, "serve",
                               "--addrs", addrs, "--duration", str(duration + 3)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    procs = [server]
    try:
        assert server.stdout.readline().strip() == "ready", server.stderr.read()
        monitor = subprocess.Popen(
            [sys.executable, CLI, "monitor", "--netns", topo.CLIENT, "--iface", topo.CLIENT_IF,
             "--duration", f"{seconds}s", "--line-rate", f"{RATE_MBPS}Mbps", "--json", "--source", "sysfs",
             "--tcp-netns", topo.SERVERS, "--qdisc-dev", topo.SW_CLIENT_IF, "--qdisc-netns", topo.SWITCH,
             "--record", record, "--millisampler", ms],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
        procs.append(monitor)
        for mode in ("bulk", "read"):
            procs.append(subprocess.Popen(["ip", "netns", "exec", topo.CLIENT, sys.executable, WORKLOAD, mode,
                                           "--addrs", addrs, "--duration", str(duration)],
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        out, err = monitor.communicate(timeout=120)
        if monitor.returncode != 0:
            raise SystemExit(err)
        for p in procs[2:]:
            if p.poll() is not None:  # a workload that ended early leaves seconds with nothing to judge
                raise SystemExit(f"the {p.args[6]} workload ended before the monitor did (exit {p.returncode}): "
                                 f"{p.stdout.read().strip()} {p.stderr.read().strip()}")
        return json_lines(out)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def table(secs: list[dict]) -> str:
    rows = ["| s | rx avg Mbit/s | 1 ms peak Mbit/s (x avg) | fan-in (senders in one socket reading at line rate / its span) | TCP senders "
            "| RTO timeouts | tbf drops | retransmitted (D-SACKed) | verdict | the rule before |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for s in secs:
        ms = s["rx"]["1ms"]
        ratio = "-" if ms["ratio"] is None else f"{ms['ratio']:.1f}x"
        tcp = s["tcp"]
        fanin = f"{s['fanin']['senders']} / {s['fanin']['interval_ms']:.0f} ms" if s["fanin"] else "-"
        rows.append(f"| {s['t_s']:.0f} | {s['rx']['avg_mbps']:.0f} | {ms['peak_mbps']:.0f} ({ratio}) | "
                    f"{fanin} | {s['tcp_senders']} | {tcp['rto_timeouts']} | {sum(s['qdisc_drops'].values())} | "
                    f"{tcp['retrans_segs']} ({tcp['dsack_recv_segs']}) | {s['verdict']} | {s['verdict_ratio_rule']} |")
    return "\n".join(rows)


def plot(secs: list[dict], ms_path: str, out: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from incastlab import millisampler

    df = millisampler.read(ms_path)
    fig, (a, b) = plt.subplots(2, 1, figsize=(11, 7), sharex=True, gridspec_kw={"height_ratios": [2, 1]})
    for scale, width in ((0.001, 0.5), (0.01, 1.0)):
        d = df[df["scale_s"] == scale]
        a.plot(d["t_s"].astype(float), d["in_bytes"].astype(float) * 8 / scale / 1e6, linewidth=width,
               drawstyle="steps-post", label=f"rx per {scale * 1e3:g} ms")
    t = np.array([s["t_s"] for s in secs]) - 1
    a.step(np.append(t, t[-1] + 1), [s["rx"]["avg_mbps"] for s in secs] + [secs[-1]["rx"]["avg_mbps"]],
           where="post", color="black", linewidth=2, label="rx per 1 s")
    a.axhline(RATE_MBPS, color="grey", linestyle=":", linewidth=1)
    a.axhline(RATE_MBPS / 2, color="grey", linestyle="--", linewidth=1, label="half the link")
    a.set_ylabel("receive rate (Mbit/s)")
    a.set_ylim(0, RATE_MBPS * 1.35)
    a.legend(fontsize=7, loc="lower right", ncol=2)
    a.set_title("incastlab monitor on the client of a 16-server read beside a bulk flow (500 Mbit/s, 64 KiB tbf)",
                fontsize=10)
    for s, x in zip(secs, t):
        a.text(x + 0.5, RATE_MBPS * 1.18, f"{s['verdict']}\n(before: {s['verdict_ratio_rule']})", ha="center",
               fontsize=7, color="tab:red" if s["verdict"] == "incast" else "black")
    w = 0.4
    b.bar(t + 0.5 - w / 2, [s["fanin"]["senders"] if s["fanin"] else 0 for s in secs], w,
          label="fan-in (senders within one socket reading at line rate)")
    b.bar(t + 0.5 + w / 2, [s["tcp"]["rto_timeouts"] or 0 for s in secs], w, label="RTO timeouts/s (senders)")
    b.set_xlabel("time (s)")
    b.set_ylabel("count")
    b.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=int, default=8)
    p.add_argument("--out", default=os.path.join(REPO, "docs", "img", "monitor-busy-host.png"))
    p.add_argument("--json", help="also keep the monitor's JSON lines here")
    args = p.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("needs root (network namespaces)")
    tmp = tempfile.mkdtemp(prefix="incastlab-busy-")
    record, ms = os.path.join(tmp, "rec.parquet"), os.path.join(tmp, "ms.parquet")
    try:
        try:
            topo.setup(RATE_TC)
            secs, summary = run(args.seconds, record, ms)
        finally:
            topo.teardown()
        if args.json:
            with open(args.json, "w") as f:
                for s in secs:
                    f.write(json.dumps(s) + "\n")
        print(table(secs))
        print(f"sampling ({summary['source']}): {summary['interval']['statement']}; load average "
              f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} at the end")
        for s in secs:
            print(f"{s['t_s']:.0f}: {s['evidence']} (judged {s['lag_s']:.1f} s after the second ended)")
        plot(secs, ms, args.out)
        print(f"wrote {args.out}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
