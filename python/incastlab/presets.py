"""Presets: the core's named presets as tables, and a real TCP stack read item by item.

The presets themselves (``fast08``, ``ns2``, ``ns3``, ``linux``, ``rfc``) are the core's
(``crates/sim/src/preset.rs``, read through ``incastlab.schema.PRESETS``); ``table`` renders
them for ``incastlab simulate --preset-table`` and the docs.

The core's ``linux`` preset is a stock kernel, so a scenario means the same everywhere. The
kernel this machine runs, as the namespace testbed sees it, is ``linux(...)``: each row
names a behaviour, what the running kernel says about it (a sysctl, the routes, the
timer tick, or a constant of the kernel's source where there is no knob), the scenario
field and value the simulator runs for it, and whether the simulator models it. The
kernel values are read when the preset is built, so the table describes this machine,
and the scenario follows them (``tcp_sack = 0`` gives NewReno recovery, a route's
``initcwnd`` the initial window). ``incastlab validate`` runs the simulator with it
(``--preset-table`` prints it); docs/testbed.md, "Simulator vs testbed", has it as measured.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import schema, units
from .errors import UsageError

# The testbed's --cc (a kernel module name) -> the simulator's cc.
CC_OF_KERNEL = {"cubic": "cubic", "reno": "newreno"}

# Kernel constants where Linux has no knob (include/net/tcp.h).
TCP_INIT_CWND = 10          # segments
TCP_RTO_MIN_S = 0.2         # HZ / 5
TCP_DELACK_MIN_S = 0.040    # HZ / 25, also TCP_ATO_MIN: the delayed-ACK timeout incast's ACKs see
TCP_DELACK_MAX_S = 0.2      # HZ / 5: icsk_delack_max unless TCP_DELACK_MAX_US sets it
MSS_WITH_TIMESTAMPS = 1448  # 1500 - 20 (IP) - 20 (TCP) - 12 (timestamp option, padded)
MSS_PLAIN = 1460
ETHERNET_HEADER = 14        # what tbf counts beyond the IP packet (skb->len at a bridge port)

# The namespace testbed's links: veth pairs and a Linux bridge, which cross a packet at the
# CPU's speed. Measured on this project's 2-core machine (docs/testbed.md, "What lets the
# kernel's probes through"): one server's back-to-back 1514-byte frames reach the bridge a
# median 2.4-3.3 us apart (3.7-5 Gbit/s), and with the port unshaped one server moves
# 3.9-5.3 Gbit/s. The simulator's results at 100 Mbit/s move by at most 8 % between 4 and
# 40 Gbit/s; at 1 Gbit/s they fall by up to 45 % (the decomposition table there).
TESTBED_LINK_RATE_BPS = 4_000_000_000


@dataclass(frozen=True)
class Item:
    """One row: a behaviour, the kernel's value, the simulator's field=value, modelled or not."""

    what: str
    kernel: str
    simulator: str
    modelled: str
    fields: dict[str, Any] = field(default_factory=dict)  # what this row sets in the scenario

    @property
    def is_modelled(self) -> bool:
        return self.modelled.startswith("yes")


@dataclass
class Kernel:
    """Where the preset reads the running kernel; tests point it at a fake one.

    By default the root namespace: its sysctls and its default route. ``Kernel.of_netns``
    reads a network namespace instead (its sysctls are its own: a new namespace starts from
    the kernel's defaults for most of them), and the route its sockets take to ``peer``:
    ``incastlab validate`` reads a server's and the client's namespace of the testbed it
    built, so the table is what the testbed's sockets see."""

    sysctl_dir: Path = Path("/proc/sys/net/ipv4")
    module_dir: Path = Path("/sys/module")
    routes: Callable[[], str] = lambda: _ip_route()
    jiffy: Callable[[], float | None] = lambda: _jiffy()
    #: The running kernel's release (``uname -r``; every namespace runs the same kernel).
    release: Callable[[], str] = lambda: os.uname().release
    netns: str | None = None
    #: The route towards this address is the one a socket uses (``ip route get``); None: the default route.
    peer: str | None = None

    @classmethod
    def of_netns(cls, netns: str, peer: str) -> "Kernel":
        return cls(routes=lambda: _ip_route(netns, peer), netns=netns, peer=peer)

    @property
    def where(self) -> str:
        return f"namespace {self.netns}" if self.netns else "the root namespace"

    def sysctl(self, name: str) -> str | None:
        if self.netns:
            return _netns_sysctl(self.netns, name)
        try:
            return " ".join((self.sysctl_dir / name).read_text().split())  # tcp_rmem's tabs too
        except OSError:
            return None

    def module_param(self, module: str, param: str) -> str | None:
        try:
            return (self.module_dir / module / "parameters" / param).read_text().strip()
        except OSError:
            return None

    def route_metric(self, name: str) -> str | None:
        """A metric (``initcwnd``, ``rto_min``) on the route to ``peer`` (``ip route get``
        shows the metrics of the route it matched), or on the default route."""
        for line in self.routes().splitlines():
            if self.peer is not None or line.startswith("default"):
                m = re.search(rf"\b{name} (?:lock )?(\S+)", line)
                if m or self.peer is None:
                    return m.group(1) if m else None
        return None


def _ip_route(netns: str | None = None, peer: str | None = None) -> str:
    args = ["ip"] + (["-n", netns] if netns else []) + (["route", "get", peer] if peer else ["route", "show"])
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def _netns_sysctl(netns: str, name: str) -> str | None:
    try:
        p = subprocess.run(["ip", "netns", "exec", netns, "cat", f"/proc/sys/net/ipv4/{name}"],
                           capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return " ".join(p.stdout.split()) if p.returncode == 0 else None


def _jiffy() -> float | None:
    from .testbed.compare import jiffy_seconds
    return jiffy_seconds()


# Linux reno's rules where they differ from RFC 5681 (net/ipv4/tcp_cong.c; no knob), as the
# simulator's flags (tcp/congestion/newreno.rs)
RENO_RULES = ("ssthresh_from_cwnd", "count_acked_segments", "cwnd_limited_growth")


def reno_item(fields: Any = None) -> Item:
    """Reno's growth and loss response: Linux's ``tcp_reno_ssthresh``, ``tcp_slow_start``
    and ``tcp_cong_avoid_ai`` behind ``tcp_is_cwnd_limited``, compiled in."""
    what = "reno's window: ssthresh from cwnd, growth per segment acknowledged, only when cwnd-limited"
    kernel = ("always (tcp_reno_ssthresh: max(cwnd / 2, 2); tcp_slow_start, tcp_cong_avoid_ai; "
              "tcp_is_cwnd_limited; no knob)")
    sim = ", ".join(f"{f}=True" for f in RENO_RULES)
    missing = [f for f in RENO_RULES if not in_this_build(f, fields)]
    if missing:
        return Item(what, kernel, "RFC 5681 eq. (2)-(4) per ACK",
                    f"no: not in this build (no `{missing[0]}` in the scenario schema)")
    return Item(what, kernel, sim, "yes", {f: True for f in RENO_RULES})


def in_this_build(public_name: str, fields: Any = None) -> bool:
    """The scenario schema has this field. A feature check, not a version guess: RACK-TLP and
    PRR land as scenario fields (``rack_tlp``, ``prr``), and the rows that name them become
    modelled, and the preset sets them, in the first build whose schema has them."""
    return public_name in (schema.BY_PUBLIC if fields is None else fields)


def _newer_field(what: str, kernel: str, public: str, on: bool, kernel_on: bool, fields: Any) -> Item:
    sim = f"{public}={on}"
    if not in_this_build(public, fields):
        return Item(what, kernel, sim, f"no: not in this build (no `{public}` in the scenario schema)")
    if on != kernel_on:  # RACK without TLP or TLP without RACK: the field has both or neither
        return Item(what, kernel, sim, f"no: `{public}` turns RACK and TLP on together", {public: on})
    return Item(what, kernel, sim, "yes", {public: on})


def _compiled_in(what: str, kernel: str, public: str, without: str, fields: Any) -> Item:
    """A rule Linux always runs (no knob), modelled as the simulator's flag `public` where
    this build has it; `without` is what the simulator does instead where it does not."""
    if not in_this_build(public, fields):
        return Item(what, kernel, without, f"no: not in this build (no `{public}` in the scenario schema)")
    return Item(what, kernel, f"{public}=True", "yes", {public: True})


# tcp_cubic's HyStart parameters as the simulator's `hystart` runs them (tcp/congestion/hystart.rs)
HYSTART_DEFAULTS = {"hystart_detect": "3", "hystart_low_window": "16", "hystart_ack_delta_us": "2000"}


def hystart_item(k: Kernel, fields: Any = None) -> Item:
    """CUBIC's slow-start exit: tcp_cubic's ``hystart`` module parameter and the three that
    shape it; the simulator's ``hystart`` runs the module's defaults."""
    what = "CUBIC slow start: HyStart"
    on = k.module_param("tcp_cubic", "hystart")
    params = {name: k.module_param("tcp_cubic", name) for name in HYSTART_DEFAULTS}
    kernel = f"tcp_cubic hystart = {_value(on)}" + "".join(f", {n} = {_value(v)}" for n, v in params.items())
    enabled = on != "0"
    sim = f"hystart={enabled}"
    if not in_this_build("hystart", fields):
        return Item(what, kernel, "RFC 5681 slow start", "no: not in this build (no `hystart` in the scenario schema)")
    differs = [f"{n} = {v}" for n, v in params.items() if enabled and v is not None and v != HYSTART_DEFAULTS[n]]
    if differs:
        return Item(what, kernel, sim, f"no: the simulator's HyStart has tcp_cubic's defaults, not {', '.join(differs)}",
                    {"hystart": enabled})
    return Item(what, kernel, sim, "yes", {"hystart": enabled})


# tcp_cubic's parameters as the simulator's `cubic_linux` runs them (tcp/congestion/cubic_linux.rs)
CUBIC_DEFAULTS = {"beta": "717", "bic_scale": "41", "fast_convergence": "1", "tcp_friendliness": "1"}


def cubic_rules_item(k: Kernel, fields: Any = None) -> Item:
    """CUBIC's arithmetic: tcp_cubic.c's rules (whole packets, t in jiffies, ssthresh from
    cwnd), which the simulator's ``cubic_linux`` runs with the module's default parameters."""
    what = "CUBIC's window arithmetic: tcp_cubic.c"
    params = {name: k.module_param("tcp_cubic", name) for name in CUBIC_DEFAULTS}
    kernel = "tcp_cubic " + ", ".join(f"{n} = {_value(v)}" for n, v in params.items())
    if not in_this_build("cubic_linux", fields):
        return Item(what, kernel, "RFC 9438", "no: not in this build (no `cubic_linux` in the scenario schema)")
    differs = [f"{n} = {v}" for n, v in params.items() if v is not None and v != CUBIC_DEFAULTS[n]]
    if differs:
        return Item(what, kernel, "cubic_linux=True",
                    f"no: the simulator runs tcp_cubic's defaults, not {', '.join(differs)}", {"cubic_linux": True})
    return Item(what, kernel, "cubic_linux=True", "yes", {"cubic_linux": True})


def _value(raw: str | None) -> str:
    return "unreadable" if raw is None else raw


def linux(*, cc: str | None, quickack: bool = False, rto_min_s: float | None = None, rto_min_via: str = "route",
          delack_max_s: float | None = None, rwnd_clamp: int | None = None, kernel: Kernel | None = None,
          client: Kernel | None = None, fields: Any = None) -> list[Item]:
    """The ``linux`` preset's table for senders running congestion control `cc` (the testbed's
    ``--cc``; None: the kernel's default). `kernel` is where the senders (servers) run,
    `client` where the receiver does (default: the same). `rto_min_s` is the testbed's RTOmin
    for the senders, set the way `rto_min_via` says (a route's ``rto_min``, the
    ``tcp_rto_min_us`` sysctl, or the ``TCP_RTO_MIN_US`` socket option; None: the kernel's),
    `delack_max_s` the client's ``TCP_DELACK_MAX_US``, `quickack` and `rwnd_clamp` its other
    socket options. `fields` stands in for the schema's field names in tests. Refuses a cc
    the simulator lacks."""
    k = kernel or Kernel()
    c = client or k
    default_cc = k.sysctl("tcp_congestion_control")
    algo = cc or default_cc
    if algo not in CC_OF_KERNEL:
        flag = "--cc" if cc else "--cc (not given: the kernel's default, net.ipv4.tcp_congestion_control)"
        raise UsageError(flag, algo,
                         "cubic or reno: the congestion controls the simulator models (cc=cubic, cc=newreno)")
    items = [Item("congestion control", f"testbed --cc {algo} (default: {_value(default_cc)})" if cc else
                  f"net.ipv4.tcp_congestion_control = {algo}",
                  f"cc={CC_OF_KERNEL[algo]}", "yes", {"cc": CC_OF_KERNEL[algo]})]
    if algo == "cubic":
        items.append(hystart_item(k, fields))
        items.append(cubic_rules_item(k, fields))
    else:
        items.append(reno_item(fields))

    sack = k.sysctl("tcp_sack")
    tcp = "sack" if sack != "0" else "newreno"
    items.append(Item("SACK loss recovery (RFC 2018, RFC 6675)", f"net.ipv4.tcp_sack = {_value(sack)}",
                      f"tcp={tcp}", "yes", {"tcp": tcp}))

    recovery = k.sysctl("tcp_recovery")
    early = k.sysctl("tcp_early_retrans")
    rack = recovery is not None and recovery.isdigit() and int(recovery) & 1 == 1
    tlp = early in ("3", "4")
    items.append(_newer_field("RACK loss detection (RFC 8985)", f"net.ipv4.tcp_recovery = {_value(recovery)}"
                              f" (0x1: RACK {'on' if rack else 'off'})", "rack_tlp", rack and tlp, rack, fields))
    items.append(_newer_field("tail loss probe (RFC 8985 §7)", f"net.ipv4.tcp_early_retrans = {_value(early)}"
                              f" (3, 4: TLP {'on' if tlp else 'off'})", "rack_tlp", rack and tlp, tlp, fields))
    items.append(_compiled_in("2 ms more on the tail loss probe's timeout and RACK's reordering timer",
                              "always (TCP_TIMEOUT_MIN_US: tcp_schedule_loss_probe, tcp_rack_mark_lost; no knob)",
                              "rack_timer_floor", "RFC 8985 §6.3, §7.2: nothing added", fields))
    items.append(_newer_field("PRR during recovery (RFC 6937)", "always (tcp_cwnd_reduction; no knob)",
                              "prr", True, True, fields))
    items.append(_compiled_in("PRR's extra segment below ssthresh: only on an ACK that advanced SND.UNA and "
                              "marked nothing newly lost", "always (tcp_cwnd_reduction: FLAG_SND_UNA_ADVANCED "
                              "&& !newly_lost; no knob)", "prr_extra_if_advanced",
                              "RFC 6937 §3: on every ACK", fields))
    items.append(_compiled_in("PRR's first ACK: the fast retransmit sent within its allowance",
                              "always (tcp_cwnd_reduction: sndcnt = max(sndcnt, prr_out ? 0 : 1); no knob)",
                              "prr_counts_fast_retransmit",
                              "RFC 6937 §3 read literally: the fast retransmit, then that ACK's sndcnt", fields))
    items.append(_compiled_in("the ACK that ends fast recovery grows cwnd from ssthresh",
                              "always (tcp_ack: tcp_try_undo_recovery sets Open before tcp_cong_control runs "
                              "tcp_cong_avoid; tcp_init_cwnd_reduction clears snd_cwnd_cnt; no knob)",
                              "grow_on_recovery_exit", "RFC 6675 / RFC 6582: cwnd = ssthresh, no growth", fields))
    items.append(_compiled_in("after a timeout, a retransmission RACK finds lost again starts fast recovery",
                              "always (tcp_fastretrans_alert, TCP_CA_Loss: FLAG_LOST_RETRANS falls through to "
                              "tcp_enter_recovery; tcp_rack_reo_timeout; no knob)", "recovery_from_loss",
                              "RFC 6582 §3.2 step 4: no fast retransmit until the timeout's window is "
                              "acknowledged; the next RTO resends it", fields))
    items.append(_compiled_in("the RTO counts from the oldest unacknowledged segment's transmission while the probe "
                              "or reordering timer is pending: an ACK after a lost probe does not push it back",
                              "always (tcp_rearm_rto: tcp_rto_delta_us; tcp_schedule_loss_probe re-arms the probe "
                              "timer, tcp_send_loss_probe with tlp_high_seq set only re-arms the RTO; no knob)",
                              "rearm_rto_from_head", "RFC 6298 §5.3: restarted at every ACK of new data", fields))
    items.append(tso_deferral_item(k, fields))
    items.append(_compiled_in("an ACK's allowance goes in GSO skbs of at most half cwnd, each tested for deferral",
                              "always (tcp_write_xmit: tcp_cwnd_test's max(cwnd / 2, 1) per skb, "
                              "tcp_tso_should_defer for each; no knob)", "gso_half_cwnd",
                              "the allowance tested once, as a whole", fields))
    items.append(_compiled_in("RACK's RTT from the last segment an ACK acknowledges cumulatively, taken after "
                              "the ones it SACKs: a hole sent with it waits a reordering window (Disorder)",
                              "always (tcp_ack: tcp_sacktag_write_queue, then tcp_clean_rtx_queue, both through "
                              "tcp_rack_advance; no knob)", "rack_rtt_sack_first",
                              "RFC 8985 §6.2: the newest delivered segment's RTT", fields))
    items.append(_compiled_in("SACKed segments leave the flight cwnd limits outside recovery: an ACK that SACKs "
                              "lets as many new segments go",
                              "always (tcp_packets_in_flight in tcp_cwnd_test, tcp_tso_should_defer; no knob)",
                              "sacked_leave_flight", "RFC 3042 limited transmit on the first two duplicate ACKs",
                              fields))
    items.append(_compiled_in("a window that once filled cwnd grows on all its ACKs, the last window of a "
                              "response too",
                              "always (tcp_write_xmit -> tcp_cwnd_validate keeps is_cwnd_limited until snd_una "
                              "passes cwnd_usage_seq; tcp_is_cwnd_limited; no knob)", "cwnd_limited_latch",
                              "judged from the flight before each ACK", fields))

    ts = k.sysctl("tcp_timestamps")
    on = ts != "0"
    mss = MSS_WITH_TIMESTAMPS if on else MSS_PLAIN
    items.append(Item("timestamps (RFC 7323): RTT sample per ACK", f"net.ipv4.tcp_timestamps = {_value(ts)}",
                      f"timestamps={on}, mss={mss}", "yes", {"timestamps": on, "mss": mss}))

    iw_route = k.route_metric("initcwnd")
    iw = int(iw_route) if iw_route and iw_route.isdigit() else TCP_INIT_CWND
    where = (f"default route initcwnd {iw_route}" if iw_route
             else f"no initcwnd on the default route: TCP_INIT_CWND = {iw}")
    items.append(Item("initial window", where, f"init_cwnd={iw}", "yes", {"init_cwnd": iw}))

    jiffy = k.jiffy()
    rto, rto_kernel = rto_min(k, jiffy, rto_min_s if rto_min_via == "route" else None,
                              rto_min_s if rto_min_via == "socket" else None,
                              rto_min_s if rto_min_via == "sysctl" else None, "testbed --rto-min")
    items.append(delayed_ack(c, jiffy, quickack, delack_max_s))
    items.append(_compiled_in("an ACK at once for a segment shorter than the MSS", "always (tcp_measure_rcv_mss: "
                              "ICSK_ACK_PUSHED, tcp_cleanup_rbuf; no knob)", "ack_short_segments",
                              "RFC 1122: delayed like any other", fields))
    if not quickack:
        items.append(quickack_item(c, jiffy, fields))
    items.append(Item("minimum RTO", rto_kernel, f"rto_min={rto:g}", "yes", {"rto_min": rto}))
    items.append(_compiled_in("the RTO: srtt + rttvar, rttvar never below RTOmin (200 ms + srtt), from microsecond "
                              "RTT samples, in whole jiffies", "always (tcp_rtt_estimator, __tcp_set_rto: "
                              "usecs_to_jiffies(srtt + rttvar); no knob)", "rto_min_on_rttvar",
                              "RFC 6298 §2: max(RTOmin, SRTT + 4 RTTVAR), samples in timer ticks", fields))

    if jiffy:
        items.append(Item("timers on jiffies", f"HZ = {1 / jiffy:g} (tick {jiffy * 1e3:g} ms, probed with "
                          "TCP_RTO_MIN_US)", f"timer_granularity={jiffy:g}, timer_ticks=True", "yes",
                          {"timer_granularity": jiffy, "timer_ticks": True}))
        items.append(_compiled_in("timer wheel: a TCP timer of n jiffies fires n + 1 ticks after the tick it was armed "
                                  "in (rounded up to 8 jiffies from 64)", "always (kernel/time/timer.c: "
                                  "calc_wheel_index, calc_index; icsk_retransmit_timer and icsk_delack_timer are "
                                  "timer_lists; no knob)", "timer_wheel",
                                  "the first tick at or after the expiry; the delayed ACK exactly", fields))
    else:
        exact = {"timer_ticks": False, "timer_granularity": schema.BY_PUBLIC["timer_granularity"].public_default}
        if in_this_build("timer_wheel", fields):
            exact["timer_wheel"] = False
        items.append(Item("timers on jiffies", "tick not detected (TCP_RTO_MIN_US needs Linux 6.15)",
                          "exact timers", "no", exact))

    idle = k.sysctl("tcp_slow_start_after_idle")
    restart = idle != "0"
    items.append(Item("restart from the initial window after idle", f"net.ipv4.tcp_slow_start_after_idle = "
                      f"{_value(idle)}", f"slow_start_after_idle={restart}", "yes", {"slow_start_after_idle": restart}))

    rmem = k.sysctl("tcp_rmem")
    if rwnd_clamp:
        items.append(Item("receive window", f"testbed --rwnd-clamp {rwnd_clamp} (TCP_WINDOW_CLAMP)",
                          f"rwnd={rwnd_clamp}", "yes", {"rwnd": rwnd_clamp}))
    else:
        items.append(Item("receive window", f"autotuned, net.ipv4.tcp_rmem = {_value(rmem)}", "rwnd=1GiB",
                          "yes: no fixed limit; the window advertised is rcv_ssthresh (the rows below)",
                          {"rwnd": "1GiB"}))

    items.extend(receiver_window_items(c, fields))

    items.append(_compiled_in("after a timeout: SACKed segments kept, the lost ones resent as ACKs and SACKs grow cwnd",
                              "always (tcp_timeout_mark_lost; TCP_CA_Loss: tcp_cong_control on acked_sacked, "
                              "tcp_xmit_retransmit_queue; no knob)", "loss_retransmit_queue",
                              "RFC 2018 §8 and RFC 5681: SACKs forgotten, go back N", fields))
    frto = k.sysctl("tcp_frto")
    items.append(_newer_field("F-RTO after a timeout: new data first (RFC 5682 §3; its undo of a spurious timeout "
                              "not modelled)", f"net.ipv4.tcp_frto = {_value(frto)}", "frto", frto != "0",
                              frto != "0", fields))
    return items


# the receive-buffer numbers the simulator's rcv_autotuning starts from and stops at
# (crates/sim/src/tcp/linux_rcv.rs: TCP_RMEM_DEFAULT, TCP_RMEM_MAX; tcp_rmem[0] is unused there)
MODELLED_RMEM = "4096 131072 33554432"
# skb len / truesize in 1/256 for a full 1448-byte segment on veth (2048-byte fragment + the
# sk_buff: 2288 B), the scaling_ratio tcp_measure_rcv_mss measures on the testbed; read in
# its tcp:tcp_rcvbuf_grow trace (docs/testbed.md), not a sysctl
VETH_SCALING_RATIO = 162


def receiver_window_items(c: Kernel, fields: Any = None) -> list[Item]:
    """The client's receive-window rules (net/ipv4/tcp_input.c): tcp_grow_window's quick ACK
    per window step, receive-buffer autotuning (tcp_rcv_space_adjust, tcp_rcvbuf_grow), the
    ping-pong mode that holds quick ACKs, and the skb ratio they compute with. The advertised
    window is the smaller of ``rwnd`` (the row above) and the grown ``rcv_ssthresh``."""
    items = [_compiled_in("an ACK at once for each segment that opens the receive window",
                          "always (tcp_grow_window sets icsk_ack.quick; no knob)", "rcv_window_growth",
                          "RFC 1122: pairs, a fixed window", fields)]
    moderate, rmem = c.sysctl("tcp_moderate_rcvbuf"), c.sysctl("tcp_rmem")
    kernel = f"net.ipv4.tcp_moderate_rcvbuf = {_value(moderate)}, tcp_rmem = {_value(rmem)}"
    if not in_this_build("rcv_autotuning", fields):
        items.append(Item("receive-buffer autotuning (DRS)", kernel, "-", "no: not in this build"))
    elif moderate == "0":
        items.append(Item("receive-buffer autotuning (DRS)", kernel, "rcv_autotuning=False", "yes: off in the kernel",
                          {"rcv_autotuning": False}))
    else:
        same = rmem is None or rmem == MODELLED_RMEM
        items.append(Item("receive-buffer autotuning (DRS)", kernel, "rcv_autotuning=True",
                          "yes" if same else f"yes, from tcp_rmem = {MODELLED_RMEM} (the kernel's default), not this "
                          "host's", {"rcv_autotuning": True}))
    if moderate != "0" and in_this_build("rcv_autotuning", fields):
        items.append(receiver_rtt_item(c, fields))
    thresh = c.sysctl("tcp_pingpong_thresh")
    if not in_this_build("ack_pingpong", fields):
        items.append(Item("ping-pong mode holds quick ACKs", f"net.ipv4.tcp_pingpong_thresh = {_value(thresh)}", "-",
                          "no: not in this build"))
    else:
        items.append(Item("ping-pong mode holds quick ACKs",
                          f"net.ipv4.tcp_pingpong_thresh = {_value(thresh)} (tcp_event_data_sent, "
                          "tcp_delack_timer_handler)", "ack_pingpong=True",
                          "yes" if thresh in (None, "1") else "yes, with the default threshold 1, not this host's",
                          {"ack_pingpong": True}))
    if in_this_build("rcv_scaling_ratio", fields):
        items.append(Item("receive window per buffer byte (scaling_ratio)",
                          f"measured per connection (tcp_measure_rcv_mss): {VETH_SCALING_RATIO}/256 on veth",
                          f"rcv_scaling_ratio={VETH_SCALING_RATIO}", "yes: read in the testbed's tcp_rcvbuf_grow trace",
                          {"rcv_scaling_ratio": VETH_SCALING_RATIO}))
    return items


def tso_deferral_item(k: Kernel, fields: Any = None) -> Item:
    """TSO deferral (tcp_tso_should_defer): every TCP socket builds GSO skbs whatever the NIC
    offers (sk_setup_caps), so the rule runs on veth too; the simulator's ``tso_deferral``
    models it with tcp_tso_win_divisor = 3, the default. A divisor of 0 switches to another
    test (tcp_max_tso_deferred_mss), not modelled."""
    what = "a small send allowance waits for the next ACK (TSO deferral)"
    divisor = k.sysctl("tcp_tso_win_divisor")
    kernel = f"net.ipv4.tcp_tso_win_divisor = {_value(divisor)} (tcp_tso_should_defer; GSO on every TCP socket)"
    if not in_this_build("tso_deferral", fields):
        return Item(what, kernel, "every allowance at once",
                    "no: not in this build (no `tso_deferral` in the scenario schema)")
    if divisor == "0":
        return Item(what, kernel, "tso_deferral=False", "no: divisor 0 (tcp_max_tso_deferred_mss) is not modelled",
                    {"tso_deferral": False})
    modelled = "yes" if divisor in (None, "3") else "yes, with the default divisor 3, not this host's"
    return Item(what, kernel, "tso_deferral=True", modelled, {"tso_deferral": True})


# the release that dropped zero-ms timestamp samples from the receiver RTT (commit a7ffb88bcbb1,
# "tcp: remove zero TCP TS samples for autotuning", merged for 6.16)
RCV_RTT_FROM_WINDOW_SINCE = (6, 16)


def kernel_version(release: str) -> tuple[int, int] | None:
    """(major, minor) of a ``uname -r`` string such as ``6.18.0-1-amd64``; None if it has none."""
    m = re.match(r"(\d+)\.(\d+)", release)
    return (int(m[1]), int(m[2])) if m else None


def receiver_rtt_item(c: Kernel, fields: Any = None) -> Item:
    """The receiver RTT that paces autotuning (tcp_rcv_rtt_measure_ts, tcp_rcv_rtt_measure):
    since Linux 6.16 a 0 ms timestamp sample is none, so where round trips are shorter than
    the 1 ms timestamp clock the estimate comes from the window-based sample (the time one
    advertised window took to arrive); before, every timestamp sample counted, at least 1 ms."""
    what = "receiver RTT for autotuning: no 0 ms timestamp samples, the window-based sample"
    release = c.release()
    version = kernel_version(release)
    on = version is None or version >= RCV_RTT_FROM_WINDOW_SINCE
    kernel = f"Linux {release} (tcp_rcv_rtt_measure_ts, tcp_rcv_rtt_measure; no knob)"
    if not in_this_build("rcv_rtt_from_window", fields):
        return Item(what, kernel, "every timestamp sample, at least 1 ms",
                    "no: not in this build (no `rcv_rtt_from_window` in the scenario schema)")
    modelled = "yes" if version is not None else "yes, as Linux >= 6.16 (the release names no version)"
    return Item(what, kernel, f"rcv_rtt_from_window={on}", modelled, {"rcv_rtt_from_window": on})


def _in_jiffies(seconds: float, jiffy: float | None) -> float:
    """`seconds` as the kernel keeps a timer value: rounded up to whole jiffies
    (usecs_to_jiffies, msecs_to_jiffies), where the tick is known."""
    if not jiffy:
        return seconds
    from .testbed.kernel import jiffies_up
    return jiffies_up(seconds, jiffy)


def rto_min(k: Kernel, jiffy: float | None, route_s: float | None = None, socket_s: float | None = None,
            sysctl_s: float | None = None, who: str = "") -> tuple[float, str]:
    """A socket's RTOmin as ``tcp_rto_min()`` decides it (include/net/tcp.h): a locked
    ``rto_min`` on the socket's route first; else ``icsk_rto_min``, which the
    ``TCP_RTO_MIN_US`` option sets and which starts as ``net.ipv4.tcp_rto_min_us`` of the
    socket's namespace when the socket is made (Linux 6.11+), else TCP_RTO_MIN. The
    ``*_s`` arguments are what `who` sets that the kernel reading may not show yet; the
    value is in whole jiffies, as the kernel keeps it. Returns (seconds, the kernel column)."""
    route = f"{route_s * 1e3:g}ms" if route_s is not None else k.route_metric("rto_min")
    sysctl = str(round(sysctl_s * 1e6)) if sysctl_s is not None else k.sysctl("tcp_rto_min_us")
    where = "the route to the client" if k.peer else "the default route"
    set_by = lambda given: f" ({who})" if given is not None and who else ""
    if route:
        value = units.parse_duration_ps(route, "rto_min") / 1e12
        text = f"route rto_min {route} on {where}{set_by(route_s)}: tcp_rto_min() reads the locked route metric first"
    elif socket_s is not None:
        value, text = socket_s, f"TCP_RTO_MIN_US {round(socket_s * 1e6)}{set_by(socket_s)}, no rto_min on {where}"
    elif sysctl and sysctl.isdigit():
        value = int(sysctl) / 1e6
        text = (f"net.ipv4.tcp_rto_min_us = {sysctl} in {k.where}{set_by(sysctl_s)}, "
                f"no TCP_RTO_MIN_US, no rto_min on {where}")
    else:
        value, text = TCP_RTO_MIN_S, f"TCP_RTO_MIN = {TCP_RTO_MIN_S * 1e3:g} ms (no route metric, option or sysctl)"
    kept = _in_jiffies(value, jiffy)
    if kept != value:
        text += f"; kept as {kept * 1e3:g} ms (whole jiffies)"
    return kept, text


def quickack_item(c: Kernel, jiffy: float | None, fields: Any = None) -> Item:
    """Linux's entries into quick-ACK mode at the receiver (net/ipv4/tcp_input.c):
    ``tcp_event_data_recv``'s ``tcp_incr_quickack`` at a connection's first data and when
    data comes more than the receiving socket's RTO after the last, ``tcp_data_queue``'s
    ``tcp_enter_quickack_mode`` for data it already holds. The gap is measured against the
    client's own RTO, from its RTOmin (`c`), which a testbed's ``--rto-min`` for the servers
    does not change."""
    what = "quick-ACK mode at the first data, after a gap longer than the RTO, and for old data"
    kernel = ("always (tcp_event_data_recv: tcp_incr_quickack, at most 16 ACKs; tcp_data_queue: "
              "tcp_enter_quickack_mode; no knob)")
    item = _compiled_in(what, kernel, "quickack_mode", "RFC 1122: delayed like any other", fields)
    if not item.is_modelled or not in_this_build("receiver_rto_min", fields):
        return item
    own_rto, _ = rto_min(c, jiffy)
    return Item(what, f"{kernel}; the gap against the client's RTO, its RTOmin {own_rto * 1e3:g} ms + SRTT",
                f"quickack_mode=True, receiver_rto_min={own_rto:g}", "yes",
                {"quickack_mode": True, "receiver_rto_min": own_rto})


def delayed_ack(c: Kernel, jiffy: float | None, quickack: bool, delack_max_s: float | None) -> Item:
    """The receiver's delayed-ACK timeout. Linux starts at TCP_ATO_MIN (40 ms), which incast's
    closely spaced segments keep it at (tcp_event_data_recv), and bounds it by
    ``tcp_delack_max()`` (net/ipv4/tcp_output.c, Linux 6.15): ``icsk_delack_max`` (the
    ``TCP_DELACK_MAX_US`` option, else TCP_DELACK_MAX, 200 ms) and the receiver's own RTOmin
    less a jiffy."""
    if quickack:
        return Item("delayed ACK", "testbed --quickack: TCP_QUICKACK re-armed after every read", "delayed_ack=0",
                    "yes", {"delayed_ack": 0})
    own_rto, _ = rto_min(c, jiffy)
    tick = jiffy or 0.0
    from_rto = max(own_rto, 2 * tick) - tick
    cap = _in_jiffies(delack_max_s, jiffy) if delack_max_s is not None else TCP_DELACK_MAX_S
    cap_text = (f"TCP_DELACK_MAX_US {round(delack_max_s * 1e6)} (testbed --delack-max; {cap * 1e3:g} ms in jiffies)"
                if delack_max_s is not None else f"TCP_DELACK_MAX {TCP_DELACK_MAX_S * 1e3:g} ms")
    value = min(TCP_DELACK_MIN_S, cap, from_rto)
    text = (f"TCP_ATO_MIN = {TCP_DELACK_MIN_S * 1e3:g} ms, at most tcp_delack_max() = min({cap_text}, "
            f"the client's RTOmin {own_rto * 1e3:g} ms less a jiffy)")
    return Item("delayed ACK", text, f"delayed_ack={value:g}", "yes", {"delayed_ack": value})


def testbed(*, rate_bps: int, buffer_bytes: int, burst_bytes: int, timestamps: bool = True,
            measured_think_times: bool = False, rtt_s: float | None = None, cpu_idle: str = "poll") -> list[Item]:
    """The rows of the namespace testbed's setting (docs/testbed.md): its links and its
    bottleneck, a ``tbf`` shaper, the bytes tbf counts per packet, when its servers start
    answering (measured per point with validate's ``--measured-think-times``) and its round
    trip (``rtt_s``, the simulator's; None: measured per point, validate's ``--rtt measured``),
    and what its idle CPUs do (``cpu_idle``, ``testbed.cpu_idle``)."""
    shaper = Item("the bottleneck: tbf on the client's bridge port",
                  f"tbf rate {units.format_rate(rate_bps)} burst {burst_bytes} limit {buffer_bytes}: a token bucket "
                  "releasing a packet when it holds the packet's bytes, in front of a byte FIFO",
                  f"shaper_rate={units.format_rate(rate_bps)}, shaper_burst={burst_bytes}B, buffer={buffer_bytes}B",
                  "yes", {"shaper_rate": rate_bps, "shaper_burst": burst_bytes})
    links = Item("the links: veth pairs and a Linux bridge",
                 "unshaped: a 1514-byte frame crosses in about 3 us (measured: 2.4-3.3 us between one server's "
                 "back-to-back frames at the bridge)", f"rate={units.format_rate(TESTBED_LINK_RATE_BPS)}",
                 "yes: measured on this machine", {"rate": TESTBED_LINK_RATE_BPS})
    ip_tcp = 20 + 20 + (12 if timestamps else 0)
    header = ip_tcp + ETHERNET_HEADER
    frame = Item("bytes a packet costs at the bottleneck",
                 f"tbf counts skb->len: {ETHERNET_HEADER} (Ethernet) + {ip_tcp} (IP, TCP"
                 f"{', timestamps' if timestamps else ''}) + payload", f"header={header}", "yes", {"header": header})
    start = Item("when the servers answer a block's requests",
                 "tens of us apart: the client writes its requests one after another and each server's thread "
                 "wakes when the shared cores let it (more apart under load)",
                 "think_times, read from each point's capture (testbed.start_spread)" if measured_think_times
                 else "at once (think time 0)",
                 "yes: measured per point" if measured_think_times else "no: --measured-think-times measures it", {})
    trip = Item("the round trip: a packet's crossing of veths and the bridge, both ways",
                "1-10 us a hop with idle CPUs polling; 30-80 us a hop steered to a halted vCPU (--cpu-idle system, "
                "about half of them on the VM of docs/testbed.md)",
                "rtt, read from each point's capture (testbed.round_trip)" if rtt_s is None
                else f"rtt={units.exact_duration(round(rtt_s * 10**12))}",
                "yes: measured per point (the fast mode)" if rtt_s is None else "no: --rtt measured measures it", {})
    idle = Item("idle CPUs while a point runs (packets steered by flow hash to a CPU)",
                "poll: PM QoS asks for a 0 us wake-up latency, so a packet steered to the other CPU is handled at once"
                if cpu_idle == "poll" else
                "the machine's idle policy: a packet steered to a halted vCPU waits for the interrupt that wakes it "
                "(30 us at the median on the 2-vCPU VM of docs/testbed.md), per flow by its hash",
                "no host CPU: a hop costs its link's frame time and propagation",
                "yes: nothing to model (--cpu-idle poll)" if cpu_idle == "poll"
                else "no: 35-80 us on about half of the hops, not modelled (--cpu-idle poll removes it)", {})
    return [shaper, links, frame, start, trip, idle]


def scenario_fields(items: list[Item]) -> dict[str, Any]:
    """The scenario keywords the table's rows set."""
    out: dict[str, Any] = {}
    for it in items:
        out.update(it.fields)
    return out


def linux_scenario(items: list[Item], *, servers: int, sru: int, block: int | None, buffer: int, rate: int,
                   rtt_s: float, blocks: int, seed: int = 1):
    """The testbed's scenario: the core's ``linux`` preset with the running kernel's values,
    `items` (``linux(...)``), given explicitly over it."""
    from .scenario import Scenario
    part = dict(block=block) if block is not None else dict(sru=sru)  # fixed-block or fixed-SRU mode
    # the testbed's rows (``testbed``) set the links' rate and put `rate` on the shaper
    fields = {"rate": rate, **scenario_fields(items)}
    return Scenario(preset="linux", servers=servers, **part, buffer=buffer, rtt=rtt_s, blocks=blocks, duration=None,
                    seed=seed, **fields)


def render(items: list[Item], markdown: bool = False) -> str:
    """The table, as text for the terminal or as markdown for the docs."""
    head = ["item", "kernel", "simulator", "modelled"]
    rows = [[it.what, it.kernel, it.simulator, it.modelled] for it in items]
    if markdown:
        return "\n".join(["| " + " | ".join(head) + " |", "|---|---|---|---|"] +
                         ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows])
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [head] + rows)


# --- the core's presets as tables -------------------------------------------------------


def table(markdown: bool = False, kernel: Kernel | None = None,
          presets: dict[str, schema.PresetSpec] | None = None) -> str:
    """Every preset of the core (or of ``presets``), with the fields it sets and why: as
    text for ``incastlab simulate --preset-table`` (with where this host's kernel differs
    from the ``linux`` preset's stock values), or as the markdown section of the docs."""
    chosen = schema.PRESETS if presets is None else presets
    return _markdown(chosen) if markdown else _text(chosen, kernel)


def _markdown(presets: dict[str, schema.PresetSpec]) -> str:
    out = ["## Presets", "",
           "`preset` names a set of fields the core keeps together (`crates/sim/src/preset.rs`):",
           "`--preset fast08` on `incastlab simulate`, `preset=fast08` in a sweep grid or study file,",
           "`Scenario(preset=\"fast08\")` in Python. Its values stand where a field is not given; a field",
           "given explicitly wins; a field it does not name keeps the default above. Every result row",
           "names its preset (`preset` column). `incastlab simulate --preset-table` prints this table.", ""]
    for p in presets.values():
        out += [f"### `{p.name}`", "", p.doc + ".", ""]
        if p.host:
            out += ["On a host: " + p.host + ".", ""]
        if not p.settings:
            out += ["It sets no field.", ""]
            continue
        out += ["| field | value | why |", "|---|---|---|"]
        out += [f"| `{s.field.public}` | {s.text} | {_cell(s.why)} |" for s in p.settings]
        out.append("")
    return "\n".join(out)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _text(presets: dict[str, schema.PresetSpec], kernel: Kernel | None) -> str:
    import textwrap

    out = []
    for p in presets.values():
        out.append(f"{p.name}: " + textwrap.fill(p.doc, 100, subsequent_indent="  "))
        if not p.settings:
            out.append("  (sets no field)")
        width = max((len(s.field.public) + 1 + len(s.text) for s in p.settings), default=0) + 4
        for s in p.settings:
            out.append(textwrap.fill(s.why, 100, initial_indent=f"  {s.field.public}={s.text}".ljust(width),
                                     subsequent_indent=" " * width))
        if p.host:
            out.append("  " + textwrap.fill("on a host: " + p.host, 100, subsequent_indent="  "))
            out.append("  this host: " + host_differences(kernel))
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def host_differences(kernel: Kernel | None = None) -> str:
    """Where the running kernel differs from the ``linux`` preset's stock values, read as
    ``incastlab validate`` reads it (its congestion control, if the simulator has it)."""
    k = kernel or Kernel()
    default_cc = k.sysctl("tcp_congestion_control")
    notes = []
    if default_cc not in CC_OF_KERNEL:
        notes.append(f"net.ipv4.tcp_congestion_control = {_value(default_cc)}, which the simulator does not "
                     "model (validate runs --cc cubic or reno)")
    try:
        read = scenario_fields(linux(cc=default_cc if default_cc in CC_OF_KERNEL else "cubic", kernel=k))
    except UsageError as e:  # pragma: no cover - linux() refuses only a cc, chosen above
        return str(e)
    stock = schema.PRESETS["linux"].values()
    for name, value in read.items():
        f = schema.BY_PUBLIC[name]
        ours = stock.get(name, f.public_default if f.default is not None else None)
        theirs = f.parse(value)
        if ours is not None and theirs != ours:
            notes.append(f"{name}={f.format(theirs)} (stock {f.format(ours)})")
    return "; ".join(notes) if notes else "the same as the stock values"
