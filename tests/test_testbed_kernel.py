"""The testbed refuses what this kernel lacks (a congestion control, ECN marking) in one
line, exit status 2, before anything is built (issue 12; docs/testbed.md, "DCTCP and ECN")."""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys

import pytest

from incastlab.errors import UsageError
from incastlab.testbed import kernel


def _kernel_tree(tmp_path, available: str, modules: list[str], config: str | None = None):
    tmp_path.mkdir(parents=True, exist_ok=True)
    proc = tmp_path / "tcp_available_congestion_control"
    proc.write_text(available + "\n")
    mods = tmp_path / "modules"
    for m in modules:
        (mods / "kernel" / "net" / m.split("/")[0]).mkdir(parents=True, exist_ok=True)
        (mods / "kernel" / "net" / m).write_bytes(b"")
    cfg = tmp_path / "config.gz"
    if config is not None:
        cfg.write_bytes(gzip.compress(config.encode()))
    return proc, mods, cfg


def test_available_ccs_are_the_loaded_ones_then_the_modprobeable_ones(tmp_path):
    proc, mods, _ = _kernel_tree(tmp_path, "reno cubic", ["ipv4/tcp_dctcp.ko.zst", "ipv4/tcp_cubic.ko",
                                                          "ipv4/tcp_diag.ko", "ipv4/tcp_vegas.ko.xz"])
    assert kernel.available_congestion_controls(proc, mods) == ["reno", "cubic", "dctcp", "vegas"]
    # a kernel that does not list them (not Linux): nothing to refuse, the socket option decides
    assert kernel.available_congestion_controls(tmp_path / "absent", mods) is None


def test_a_cc_the_kernel_lacks_is_refused_naming_the_flag_what_it_offers_and_the_doc():
    kernel.check_congestion(None, offered=["reno"])  # the namespace default: nothing to check
    kernel.check_congestion("bbr", offered=["reno", "bbr", "cubic"])
    with pytest.raises(UsageError) as e:
        kernel.check_congestion("dctcp", offered=["reno", "bbr", "cubic"])
    text = str(e.value)
    assert text.startswith("--cc: 'dctcp' is not allowed") and "reno, bbr, cubic" in text
    assert 'docs/testbed.md, "DCTCP and ECN"' in text and "\n" not in text


def test_an_ecn_threshold_is_refused_and_the_message_says_what_the_kernel_has(tmp_path):
    kernel.check_ecn_threshold(None, qdiscs=[])
    _, mods, cfg = _kernel_tree(tmp_path, "reno", [], "CONFIG_NET_SCH_TBF=y\n# CONFIG_NET_SCH_RED is not set\n")
    assert kernel.marking_qdiscs(cfg, mods) == []
    with pytest.raises(UsageError) as e:
        kernel.check_ecn_threshold(20, qdiscs=kernel.marking_qdiscs(cfg, mods))
    assert str(e.value).startswith("--ecn-threshold: 20 is not allowed") and "no ECN-marking qdisc" in str(e.value)
    # a kernel with RED built in and fq_codel as a module: named, and still refused (the
    # testbed's tbf port does not mark whatever the kernel could do)
    _, mods, cfg = _kernel_tree(tmp_path / "k2", "reno", ["sched/sch_fq_codel.ko"], "CONFIG_NET_SCH_RED=y\n")
    assert kernel.marking_qdiscs(cfg, mods) == ["red", "fq_codel"]
    with pytest.raises(UsageError, match="red, fq_codel"):
        kernel.check_ecn_threshold(65, qdiscs=kernel.marking_qdiscs(cfg, mods))
    assert kernel.marking_qdiscs(tmp_path / "none.gz", tmp_path / "nowhere") is None


def _netns() -> set[str]:
    if shutil.which("ip") is None:
        return set()
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


@pytest.mark.parametrize("args, flag", [
    (["testbed", "sweep", "--servers", "1,2", "--cc", "no-such-cc"], "--cc"),
    (["testbed", "sweep", "--servers", "1", "--ecn-threshold", "20"], "--ecn-threshold"),
    (["testbed", "up", "--servers", "2", "--ecn-threshold", "65"], "--ecn-threshold"),
    (["validate", "--servers", "1", "--cc", "no-such-cc"], "--cc"),
])
def test_cli_refuses_in_one_line_exit_2_and_builds_nothing(args, flag):
    before = _netns()
    r = subprocess.run([sys.executable, "-m", "incastlab.cli.main", *args, "--prefix", "iltbk"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"incastlab: error: {flag}:"), r.stderr
    assert "DCTCP and ECN" in lines[0]
    assert not {n for n in _netns() - before if n.startswith("iltbk")}, "no namespace may be left behind"
