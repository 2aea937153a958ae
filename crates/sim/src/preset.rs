//! Named presets: a documented set of scenario fields a user picks by one word
//! (`--preset fast08`, `Scenario(preset="fast08")`), so the readings the project runs
//! (FAST'08 as ns-2 ran it, a simulator's rules, a stock Linux) are names, not five fields
//! set by hand. A preset gives a value only where the scenario does not: a field given
//! explicitly wins, and a field the preset does not name keeps the schema's default.
//!
//! The table lives here, in the core, beside the schema ([`crate::schema`]); the Python
//! front reads it from `scenario_schema()` and generates the docs table and
//! `incastlab simulate --preset-table` from it. [`ScenarioSpec::from_json`] applies it,
//! so a JSON scenario names its preset as any other field.
//!
//! A preset whose values depend on the host (`linux`) holds the stock values here (the
//! kernel's compiled-in constants and default sysctls), so a scenario means the same on
//! every machine; `host` says how a front reads the running host instead
//! (`incastlab validate` runs what the running kernel says, field by field).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::scenario::ScenarioSpec;
use crate::time::PS_PER_MS;

/// The presets' names, as the `preset` field takes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum PresetName {
    /// No field set: the schema's defaults.
    #[default]
    Rfc,
    Fast08,
    Ns2,
    Ns3,
    Linux,
}

/// A value a preset gives a field, in the core's units (as the field's JSON takes it).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Setting {
    Whole(u64),
    Word(&'static str),
    On(bool),
}

impl Setting {
    fn json(self) -> Value {
        match self {
            Setting::Whole(n) => Value::from(n),
            Setting::Word(w) => Value::from(w),
            Setting::On(b) => Value::from(b),
        }
    }
}

/// One field a preset sets: the core's name, the value and where the value comes from.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Set {
    pub field: &'static str,
    pub value: Setting,
    pub why: &'static str,
}

/// A named preset.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Preset {
    pub name: &'static str,
    /// One line: what the preset is and its source.
    pub doc: &'static str,
    /// Empty, or how a front reads the running host in place of the stock values.
    pub host: &'static str,
    pub settings: &'static [Set],
}

const fn set(field: &'static str, value: Setting, why: &'static str) -> Set {
    Set { field, value, why }
}

use Setting::{On, Whole, Word};

/// ns-2.35's hard-wired rules (the ns-2 peer's `--ns2-rules`: peers/ns2/README.md).
const NS2_RULES: [Set; 4] = [
    set("tcp_rules", Word("ns2"), "ns-2.35's Agent/TCP: the RTO timer runs on an idle connection, fast \
        retransmit needs an ACK beyond recover_, ssthresh halves the window (tcp::ns2_rules)"),
    set("buffer_admission", Word("packets"), "DropTail counts packets (queue/drop-tail.cc)"),
    set("rto_backoff", Word("sample"), "the backoff ends at the ACK of a timed segment (tcp.cc, TcpAgent::newack)"),
    set("tie_break", Word("fifo"), "its scheduler runs equal-time events in the order they were scheduled"),
];

/// Every preset, `rfc` first.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "rfc",
        doc: "the schema's defaults: TCP as the RFCs write it on FAST'08 Table 1 (1 Gbps, RTT 100 us, SRU \
              256 KiB, NewReno, RTOmin 200 ms, a 32 KiB buffer counted in bytes), 1460 B segments, ns-2's \
              window_ of 20 packets and windowInit_ 2 (docs/defaults.md)",
        host: "",
        settings: &[],
    },
    Preset {
        name: "fast08",
        doc: "FAST'08 as ns-2 ran it (000_315d806dde942a9f.txt §3.1, Table 1): the reading every FAST'08, \
              SIGCOMM'09 and WREN'09 reproduction and the demo use (docs/model.md, \"The ns-2 reading of \
              FAST'08\"); Table 1's values are the schema's defaults",
        host: "",
        settings: &[
            set("tcp_rules", Word("ns2"), "the paper ran ns-2 (§3.1): ns-2.35's Agent/TCP rules"),
            set("limited_transmit", On(true), "ns-2's singledup_ 1 since 2001; Table 3's NewReno (89 blocks) \
                against dupack threshold 1 (84) needs it, although Table 1 says disabled"),
            set("buffer_admission", Word("packets"), "ns-2's DropTail counts packets: 32 KiB is 31 packets of 1040 B"),
            set("mss_bytes", Whole(1000), "ns-2's packetSize_ default"),
            set("rwnd_bytes", Whole(20 * 1000), "ns-2's window_ of 20 packets"),
        ],
    },
    Preset {
        name: "ns2",
        doc: "ns-2.35's rules, as the ns-2 peer's --ns2-rules gives them (peers/ns2/README.md), on the schema's \
              other defaults; fast08 adds ns-2's packet size and window",
        host: "",
        settings: &NS2_RULES,
    },
    Preset {
        name: "ns3",
        doc: "ns-3.44's TcpSocketBase and device queues, as the ns-3 peer's --ns3-rules gives them for NewReno \
              without SACK (the rules are modelled for NewReno only), on the schema's other defaults",
        host: "",
        settings: &[
            set("tcp_rules", Word("ns3"), "ns-3.44's TcpSocketBase (tcp::recovery::ns3)"),
            set("buffer_admission", Word("mtu_slots"), "its device queue admits a packet while one more MTU fits"),
            set("rto_backoff", Word("new_ack"), "it recomputes the RTO from srtt/rttvar on every new ACK"),
            set("tie_break", Word("fifo"), "events at equal times run in the order they were scheduled"),
            set("header_bytes", Whole(42), "2 bytes of PPP framing on its point-to-point links (with \
                timestamps ns-3 adds a 12-byte option: give header 54)"),
        ],
    },
    Preset {
        name: "linux",
        doc: "a stock Linux kernel's TCP as far as the simulator models it: the compiled-in constants \
              (include/net/tcp.h) and the default sysctls; what `incastlab validate` starts from",
        host: "incastlab validate reads the running kernel item by item (sysctls, the default route, the \
               timer tick) and runs what it finds in place of these values; `incastlab validate --cc cubic \
               --preset-table` shows each item and `simulate --preset-table` where this host differs",
        settings: &[
            set("cc", Word("cubic"), "net.ipv4.tcp_congestion_control's default since Linux 2.6.19 (RFC 9438)"),
            set("tcp", Word("sack"), "net.ipv4.tcp_sack = 1 (RFC 2018, RFC 6675)"),
            set("prr", On(true), "tcp_cwnd_reduction, always (RFC 6937; no knob)"),
            set("rack_tlp", On(true), "net.ipv4.tcp_recovery = 1 (RACK), tcp_early_retrans = 3 (TLP; RFC 8985)"),
            set("hystart", On(true), "tcp_cubic's hystart = 1, hystart_detect = 3 (ACK train and delay; not \
                RFC 9406's HyStart++)"),
            set("prr_extra_if_advanced", On(true), "tcp_cwnd_reduction's sndcnt++ only with FLAG_SND_UNA_ADVANCED \
                and no newly lost segment (net/ipv4/tcp_input.c)"),
            set("prr_counts_fast_retransmit", On(true), "tcp_cwnd_reduction: sndcnt = max(sndcnt, prr_out ? 0 : 1), \
                the fast retransmit counted in the entering ACK's allowance (net/ipv4/tcp_input.c; RFC 9937)"),
            set("grow_on_recovery_exit", On(true), "tcp_ack: tcp_fastretrans_alert leaves Recovery (tcp_try_undo_recovery \
                sets Open) before tcp_cong_control, so that ACK runs tcp_cong_avoid from ssthresh; \
                tcp_init_cwnd_reduction clears snd_cwnd_cnt (net/ipv4/tcp_input.c)"),
            set("ack_short_segments", On(true), "tcp_measure_rcv_mss marks a segment shorter than rcv_mss \
                ICSK_ACK_PUSHED; tcp_cleanup_rbuf ACKs it once read (net/ipv4/tcp_input.c, tcp.c)"),
            set("rcv_window_growth", On(true), "tcp_grow_window: rcv_ssthresh grows by 2 advmss per in-order segment \
                up to window_clamp, icsk_ack.quick |= 1 ACKs that segment at once (net/ipv4/tcp_input.c)"),
            set("rcv_autotuning", On(true), "tcp_rcv_space_adjust, tcp_rcvbuf_grow: window_clamp from the bytes copied \
                per receiver RTT, tcp_rmem = 4096 131072 33554432, tcp_moderate_rcvbuf = 1 (net/ipv4/tcp_input.c)"),
            set("rcv_rtt_from_window", On(true), "Linux >= 6.16: tcp_rcv_rtt_measure_ts drops a 0 ms timestamp \
                sample (tcp_rtt_tsopt_us(tp, 0)), tcp_rcv_rtt_measure's window-based sample feeds rcv_rtt_est \
                (net/ipv4/tcp_input.c)"),
            set("ack_pingpong", On(true), "tcp_event_data_sent enters ping-pong mode (tcp_pingpong_thresh = 1), \
                tcp_delack_timer_handler leaves it; tcp_in_quickack_mode and tcp_cleanup_rbuf honour it"),
            set("rcv_scaling_ratio", Whole(162), "scaling_ratio from tcp_measure_rcv_mss: 1448 x 256 / 2288, a \
                full segment's skb truesize on veth (read in the testbed's tcp:tcp_rcvbuf_grow trace; the kernel \
                starts from TCP_DEFAULT_SCALING_RATIO = 128)"),
            set("rack_timer_floor", On(true), "tcp_schedule_loss_probe (packets_out > 1) and tcp_rack_mark_lost add \
                TCP_TIMEOUT_MIN_US = 2 ms before rounding to jiffies (net/ipv4/tcp_output.c, tcp_recovery.c)"),
            set("recovery_from_loss", On(true), "tcp_fastretrans_alert, TCP_CA_Loss: tcp_identify_packet_loss sets \
                FLAG_LOST_RETRANS when RACK marks a retransmission lost, and it falls through to tcp_enter_recovery; \
                tcp_rack_reo_timeout enters recovery from any other state (net/ipv4/tcp_input.c, tcp_recovery.c)"),
            set("loss_retransmit_queue", On(true), "tcp_timeout_mark_lost keeps SACKed segments; in TCP_CA_Loss \
                tcp_cong_control grows cwnd on acked_sacked and tcp_xmit_retransmit_queue resends lost-marked ones \
                (net/ipv4/tcp_input.c, tcp_output.c)"),
            set("frto", On(true), "net.ipv4.tcp_frto = 2 (tcp_enter_loss, tcp_process_loss: RFC 5682's SACK-enhanced \
                F-RTO)"),
            set("quickack_mode", On(true), "tcp_event_data_recv: tcp_incr_quickack(sk, TCP_MAX_QUICKACKS) at the \
                first data and after a gap longer than icsk_rto; tcp_data_queue: tcp_enter_quickack_mode for old data \
                (net/ipv4/tcp_input.c)"),
            set("rearm_rto_from_head", On(true), "tcp_rearm_rto uses tcp_rto_delta_us (the rtx queue head's send time + \
                icsk_rto) when ICSK_TIME_LOSS_PROBE or ICSK_TIME_REO_TIMEOUT is pending; tcp_ack's tcp_set_xmit_timer -> \
                tcp_schedule_loss_probe re-arms the probe timer with a probe outstanding, and tcp_send_loss_probe with \
                tlp_high_seq set goes to tcp_rearm_rto (net/ipv4/tcp_input.c, tcp_output.c, tcp_recovery.c)"),
            set("tso_deferral", On(true), "tcp_write_xmit -> tcp_tso_should_defer: every TCP socket builds GSO skbs \
                (sk_setup_caps), net.ipv4.tcp_tso_win_divisor = 3 (net/ipv4/tcp_output.c)"),
            set("gso_half_cwnd", On(true), "tcp_write_xmit: cwnd_quota = tcp_cwnd_test() = min(max(cwnd / 2, 1), cwnd - \
                in_flight) per skb, and tcp_tso_should_defer for each skb of more than one segment (net/ipv4/tcp_output.c)"),
            set("rack_rtt_sack_first", On(true), "tcp_ack calls tcp_sacktag_write_queue before tcp_clean_rtx_queue; \
                tcp_rack_advance sets rack.rtt_us for every segment either gives it (net/ipv4/tcp_input.c, \
                tcp_recovery.c)"),
            set("sacked_leave_flight", On(true), "tcp_packets_in_flight = packets_out - tcp_left_out + retrans_out \
                in tcp_cwnd_test and tcp_tso_should_defer; tcp_data_snd_check after every ACK (include/net/tcp.h, \
                net/ipv4/tcp_output.c)"),
            set("cwnd_limited_latch", On(true), "tcp_write_xmit -> tcp_cwnd_validate keeps is_cwnd_limited and \
                max_packets_out until snd_una passes cwnd_usage_seq; tcp_is_cwnd_limited reads them (net/ipv4/tcp_output.c, \
                include/net/tcp.h)"),
            set("cubic_linux", On(true), "tcp_cubic.c: bictcp_update and tcp_cong_avoid_ai in whole packets, t in jiffies, \
                cnt at most once a jiffy; cubictcp_recalc_ssthresh from cwnd; cubictcp_state's bictcp_reset at a timeout \
                (net/ipv4/tcp_cubic.c, tcp_cong.c)"),
            set("rto_min_on_rttvar", On(true), "tcp_rtt_estimator: mdev_max_us restarts at tcp_rto_min_us each round trip \
                and rttvar_us >= mdev_max_us; __tcp_set_rto: usecs_to_jiffies(srtt + rttvar) (net/ipv4/tcp_input.c, \
                include/net/tcp.h)"),
            set("ssthresh_from_cwnd", On(true), "reno's tcp_reno_ssthresh, max(cwnd / 2, 2), at recovery entry and \
                at a timeout (net/ipv4/tcp_cong.c, tcp_input.c tcp_enter_loss)"),
            set("count_acked_segments", On(true), "reno's tcp_slow_start and tcp_cong_avoid_ai count the segments \
                each ACK acknowledges (net/ipv4/tcp_cong.c)"),
            set("cwnd_limited_growth", On(true), "reno's tcp_reno_cong_avoid grows only if tcp_is_cwnd_limited \
                (include/net/tcp.h)"),
            set("timestamps", On(true), "net.ipv4.tcp_timestamps = 1 (RFC 7323)"),
            set("mss_bytes", Whole(1448), "1500 - 40 B of TCP/IP headers - 12 B of timestamp option"),
            set("init_cwnd_segments", Whole(10), "TCP_INIT_CWND (RFC 6928)"),
            set("delayed_ack_ps", Whole(40 * PS_PER_MS), "TCP_DELACK_MIN = HZ/25"),
            set("timer_granularity_ps", Whole(4 * PS_PER_MS), "timers on jiffies at CONFIG_HZ=250 (Debian, \
                Ubuntu; 1000 on others)"),
            set("timer_ticks", On(true), "timers fire on jiffies"),
            set("timer_wheel", On(true), "the TCP timers are timer_lists (icsk_retransmit_timer, icsk_delack_timer): \
                calc_wheel_index / calc_index file a timer under the next bucket boundary after its expiry, one jiffy late \
                at the least (kernel/time/timer.c)"),
            set("slow_start_after_idle", On(true), "net.ipv4.tcp_slow_start_after_idle = 1 (RFC 5681 §4.1)"),
            set("rwnd_bytes", Whole(1 << 30), "no fixed window: tcp_rmem autotuning; rcv_window_growth advertises rcv_ssthresh \
                windows"),
        ],
    },
];

/// The preset called `name`.
pub fn preset_named(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

impl Preset {
    /// The value this preset gives the field `field` (core name), if it names it.
    pub fn value_of(&self, field: &str) -> Option<Value> {
        self.settings.iter().find(|s| s.field == field).map(|s| s.value.json())
    }
}

impl ScenarioSpec {
    /// A spec from its JSON object: each key it lacks takes the value of the preset it
    /// names (its `preset` key; none: `rfc`), then the schema's default. An unknown preset
    /// is left for serde to refuse with the field's other words.
    pub fn from_json(mut v: Value) -> Result<ScenarioSpec, serde_json::Error> {
        if let Some(obj) = v.as_object_mut() {
            let name = obj.get("preset").and_then(Value::as_str).unwrap_or("rfc");
            if let Some(p) = preset_named(name) {
                for s in p.settings {
                    obj.entry(s.field).or_insert_with(|| s.value.json());
                }
            }
        }
        serde_json::from_value(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{check_fields, field_named, FIELDS};
    use serde_json::json;

    #[test]
    fn every_preset_is_a_word_of_the_preset_field_in_order() {
        let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
        assert_eq!(field_named("preset").unwrap().choices, names.as_slice());
    }

    #[test]
    fn every_setting_names_a_schema_field_once_with_a_value_inside_its_range() {
        for p in PRESETS {
            let mut seen: Vec<&str> = p.settings.iter().map(|s| s.field).collect();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), p.settings.len(), "{}: a field set twice", p.name);
            for s in p.settings {
                assert!(FIELDS.iter().any(|f| f.name == s.field), "{}: no field {}", p.name, s.field);
                assert_ne!(s.field, "preset");
            }
            let spec = ScenarioSpec::from_json(json!({ "preset": p.name, "servers": 16 })).unwrap();
            check_fields(&serde_json::to_value(&spec).unwrap()).unwrap();
            spec.validate().unwrap_or_else(|e| panic!("{}: {e}", p.name));
        }
    }

    #[test]
    fn a_preset_fills_only_the_fields_not_given() {
        let spec = ScenarioSpec::from_json(json!({ "preset": "fast08", "servers": 16, "mss_bytes": 1460 })).unwrap();
        assert_eq!(spec.preset, PresetName::Fast08);
        assert_eq!(spec.mss_bytes, 1460, "the given field wins");
        assert_eq!(spec.rwnd_bytes, Some(20_000), "the preset's window_ of 20 packets of 1000 B");
        assert_eq!(spec.buffer_bytes, 32 * 1024, "a field the preset does not name keeps its default");
    }

    #[test]
    fn without_a_preset_the_spec_is_the_default_one() {
        let plain = ScenarioSpec::from_json(json!({ "servers": 4 })).unwrap();
        let rfc = ScenarioSpec::from_json(json!({ "servers": 4, "preset": "rfc" })).unwrap();
        let default = ScenarioSpec { servers: 4, ..ScenarioSpec::default() };
        for s in [plain, rfc] {
            assert_eq!(serde_json::to_value(s).unwrap(), serde_json::to_value(&default).unwrap());
        }
    }

    #[test]
    fn an_unknown_preset_is_refused() {
        assert!(ScenarioSpec::from_json(json!({ "preset": "ns4", "servers": 1 })).is_err());
    }

    #[test]
    fn ns2_rules_are_the_ns2_presets_and_fast08_agrees_with_them() {
        let fast08 = preset_named("fast08").unwrap();
        for s in &NS2_RULES {
            let default = serde_json::to_value(ScenarioSpec::default()).unwrap()[s.field].clone();
            let in_fast08 = fast08.value_of(s.field).unwrap_or(default);
            assert_eq!(in_fast08, s.value.json(), "fast08 runs ns-2's {}", s.field);
        }
    }
}
