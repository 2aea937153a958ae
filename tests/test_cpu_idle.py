"""What the testbed's idle CPUs do while a point runs (``incastlab.testbed.cpu_idle``; issue 27:
a packet steered to a halted vCPU waited 30 us for the interrupt that woke it)."""

from __future__ import annotations

import os

import pytest

from incastlab.testbed import TopologySpec, cpu_idle


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_poll_asks_for_a_zero_wake_up_latency_while_the_block_runs_and_no_longer(tmp_path):
    device = tmp_path / "cpu_dma_latency"
    device.write_bytes(b"\xff\xff\xff\xff")
    before = _open_fds()
    with cpu_idle.held("poll", device=str(device)) as state:
        assert state == "poll"
        # PM QoS reads a 32-bit latency in microseconds; the request lasts while the file is open
        assert device.read_bytes() == b"\x00\x00\x00\x00"
        assert len(_open_fds()) == len(before) + 1
    assert _open_fds() == before, "the request ends with the block"


def test_the_request_ends_when_the_block_raises(tmp_path):
    device = tmp_path / "cpu_dma_latency"
    device.write_bytes(b"")
    before = _open_fds()
    with pytest.raises(KeyboardInterrupt):
        with cpu_idle.held("poll", device=str(device)):
            raise KeyboardInterrupt
    assert _open_fds() == before


def test_system_leaves_the_machine_as_it_is(tmp_path):
    device = tmp_path / "cpu_dma_latency"
    device.write_bytes(b"\xff\xff\xff\xff")
    with cpu_idle.held("system", device=str(device)) as state:
        assert state == "system"
    assert device.read_bytes() == b"\xff\xff\xff\xff"


def test_a_kernel_without_the_device_runs_as_it_idles_and_says_so(tmp_path):
    with cpu_idle.held("poll", device=str(tmp_path / "absent")) as state:
        assert state == f"system (no {tmp_path / 'absent'}: No such file or directory)"


def test_the_topology_refuses_an_unknown_mode():
    assert TopologySpec(servers=2).cpu_idle == "poll"
    with pytest.raises(ValueError, match="cpu_idle must be one of"):
        TopologySpec(servers=2, cpu_idle="halt")
    with pytest.raises(ValueError, match="expected one of poll, system"):
        with cpu_idle.held("halt"):
            pass


def test_the_command_line_offers_the_modes_the_testbed_takes():
    from incastlab.cli.testbed import CPU_IDLE_CHOICES
    assert CPU_IDLE_CHOICES == cpu_idle.CHOICES
