"""Pure pieces of the testbed orchestration (no root needed)."""

from __future__ import annotations

import pytest

from incastlab.testbed.counters import parse_mib
from incastlab.testbed.names import Names, server_addr
from incastlab.testbed.topology import TopologySpec


def test_parse_mib_pairs_header_and_value_lines():
    text = ("TcpExt: SyncookiesSent TCPTimeouts TCPLossProbes\nTcpExt: 0 7 3\n"
            "Tcp: RtoAlgorithm RetransSegs\nTcp: 1 42\n")
    mib = parse_mib(text)
    assert mib["TcpExt.TCPTimeouts"] == 7
    assert mib["TcpExt.TCPLossProbes"] == 3
    assert mib["Tcp.RetransSegs"] == 42


def test_server_addresses_stay_inside_the_benchmarking_range_and_are_distinct():
    addrs = [server_addr(i) for i in range(1, 1001)]
    assert len(set(addrs)) == 1000
    for a in addrs:
        o = [int(x) for x in a.split(".")]
        assert o[0] == 198 and o[1] in (18, 19) and 1 <= o[3] <= 254  # RFC 2544: 198.18.0.0/15
    with pytest.raises(ValueError):
        server_addr(0)


def test_names_fit_linux_interface_names_and_own_only_their_prefix():
    n = Names("iltb")
    assert len(Names.port_of(n.server_ns(1000))) <= 15  # IFNAMSIZ - 1
    assert n.owns("iltb-s3") and not n.owns("iltbx-s3") and not n.owns("ilmon-c")
    with pytest.raises(ValueError):
        Names("Bad-Prefix")


def test_a_buffer_smaller_than_one_frame_is_refused():
    with pytest.raises(ValueError):
        TopologySpec(servers=2, buffer_bytes=1000)


@pytest.mark.parametrize("args, flag", [
    (["testbed", "sweep", "--servers", "1", "--prefix", "bad name"], "--prefix"),
    (["testbed", "sweep", "--servers", "1", "--rate", "1bps"], "--rate"),
    (["validate", "--servers", "1", "--prefix", "X"], "--prefix"),
    # a socket option's value the kernel refuses (or a kernel without the option): by its flag
    (["testbed", "sweep", "--servers", "1", "--delack-max", "1us"], "--delack-max"),
    (["validate", "--servers", "1", "--cc", "reno", "--delack-max", "300ms"], "--delack-max"),
    (["read", "--servers", "127.0.0.1:1", "--delack-max", "1us"], "--delack-max"),
    (["serve", "--rto-min", "1us"], "--rto-min"),
    (["validate", "--servers", "1", "--cc", "reno", "--trace", "/no/such/dir/x"], "--trace"),
])
def test_bad_testbed_flags_are_refused_before_anything_runs(args, flag):
    # issue 11: a traceback (--prefix) and a raw tc usage fragment (--rate 1bps) before
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "incastlab.cli.main", *args], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and flag in r.stderr and "expected" in r.stderr
