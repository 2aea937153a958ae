"""Switch buffers from the Python front (issue 13): QoS classes and a shared pool reach the
core, and inconsistent combinations are refused naming a field (docs/model.md, "Switch
buffers"; the models' own tests are in crates/sim/src/net/buffer.rs and qos.rs)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from incastlab import Scenario, UsageError, simulate

# 16 servers, 64 KiB port: collapsed, so the client's port fills to its limit
BASE = dict(servers=16, buffer="64KiB", duration="300ms")
MTU = 1500


def test_a_qos_class_holds_only_its_share_of_the_port():
    # FAST'08 §4.1: the incast's class gets 1/n of the port; it fills to within one packet
    for n in (1, 2, 4):
        most = simulate(Scenario(**BASE, qos_classes=n)).to_dict()["max_queue_bytes"]
        share = 64 * 1024 // n
        assert share - MTU < most <= share, (n, most)


def test_a_shared_pool_lets_the_congested_port_take_more_than_a_static_one():
    # Choudhury-Hahne, alpha 1: one congested queue takes up to half the pool (+ one packet)
    r = simulate(Scenario(**BASE, buffer_sharing="dynamic", buffer_pool="512KiB", dt_alpha=1)).to_dict()
    assert 64 * 1024 < r["max_queue_bytes"] <= 256 * 1024 + MTU
    quarter = simulate(Scenario(**BASE, buffer_sharing="dynamic", buffer_pool="512KiB", dt_alpha=0.25)).to_dict()
    assert quarter["max_queue_bytes"] <= 512 * 1024 // 5 + MTU, "alpha / (1 + alpha) = 1/5 of the pool"


@pytest.mark.parametrize("given, blamed", [
    ({"buffer_pool": "1MiB"}, "buffer_pool"),  # a pool needs dynamic sharing
    ({"buffer_sharing": "dynamic", "qos_classes": 2}, "qos_classes"),
    ({"qos_classes": 8, "buffer": "10KiB"}, "qos_classes"),  # 1280 B a class: not one packet
])
def test_inconsistent_buffers_are_refused_naming_the_field(given, blamed):
    with pytest.raises(UsageError) as e:
        Scenario(servers=4, **given)
    assert e.value.param == blamed


def test_the_cli_refuses_in_one_line_with_status_2():
    r = subprocess.run([sys.executable, "-m", "incastlab.cli.main", "simulate", "--servers", "4",
                        "--buffer-sharing", "dynamic", "--qos-classes", "2"], capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "--qos-classes" in r.stderr
