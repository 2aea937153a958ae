"""Keep idle CPUs polling while a testbed point runs, so that a packet handed to another CPU
is picked up at once.

The testbed steers every veth's packets by flow hash (receive packet steering, `rps_cpus`
on every veth end: ``Topology._offloads``, so that one flow is not reordered across CPUs).
A packet whose flow hashes to the other CPU waits in that CPU's backlog for an
inter-processor interrupt; when that CPU is idle in a halt state the interrupt must wake
it first. Measured on the 2-vCPU VM these docs come from (nested virtualization, cpuidle
``haltpoll`` halting at once): 30 us at the median to wake a halted vCPU, 16 us a running
one, so about half of all packets took 35-80 us to cross one hop where the others took
1-10 us, decided per flow by its socket's random hash (docs/testbed.md, "Half the packets
waited for the other CPU"). A switch adds no such delay; on bare metal a deep C-state's exit
latency can add one of its own.

``held("poll")`` asks the kernel's PM QoS for a CPU wake-up latency of 0 us
(`/dev/cpu_dma_latency`, Documentation/power/pm_qos_interface.rst): the request holds while
the file stays open and ends when it is closed, by us or by the kernel when the process
dies, so nothing outlives the run. Idle CPUs then poll instead of halting, and a CPU that
polls needs no interrupt to see new work. ``held("system")`` leaves the machine's idle
policy as it is.
"""

from __future__ import annotations

import os
import struct
from contextlib import contextmanager
from typing import Iterator

CHOICES = ("poll", "system")
PM_QOS_DEVICE = "/dev/cpu_dma_latency"


@contextmanager
def held(mode: str, device: str = PM_QOS_DEVICE) -> Iterator[str]:
    """Hold the CPUs polling while the block runs (``mode`` "poll"), or not ("system").
    Yields what holds: "poll", "system", or "system (no /dev/cpu_dma_latency: ...)" when the
    kernel offers no PM QoS device to ask (a point still runs, as the machine idles)."""
    if mode not in CHOICES:
        raise ValueError(f"cpu idle mode {mode!r}: expected one of {', '.join(CHOICES)}")
    if mode == "system":
        yield "system"
        return
    fd = None
    try:
        fd = os.open(device, os.O_WRONLY)
        os.write(fd, struct.pack("i", 0))  # a 32-bit latency in us; 0: never halt
    except OSError as e:
        if fd is not None:
            os.close(fd)
        yield f"system (no {device}: {e.strerror})"
        return
    try:
        yield "poll"
    finally:
        os.close(fd)
