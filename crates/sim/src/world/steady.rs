//! The steady-state window (`measure_from_ps`): what the measured flows' counters held when
//! it opened, so that the results can count only what happened in it. Swift's Table 3
//! (Kumar et al., SIGCOMM 2020, §5.3) reports a steady state of long-lived flows
//! (§3.2: "Pony Express maintains long-lived flows"): throughput, loss rate (§4.2: "the lost
//! packets divided by the sent packets") and average RTT, after the flows' start is over.

use super::World;
use crate::time::Time;

/// The counters at the window's start.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Steady {
    pub from: Time,
    /// Payload bytes handed in order to the receiving applications.
    pub app_bytes: u64,
    /// Data payload bytes put on the wire (retransmissions included) and dropped at switches.
    pub bytes_sent: u64,
    pub bytes_dropped: u64,
    /// Data packets (segments, retransmissions included) sent by the measured senders.
    pub segments: u64,
    /// Retransmission timeouts of the measured senders (a flow still backing off from its
    /// start shows here: the window is not yet a steady state).
    pub timeouts: u64,
    /// The measured senders' RTT samples and their sum (`SenderStats::rtt_samples`).
    pub rtt_samples: u64,
    pub rtt_sum_ps: u64,
    /// Measured flows whose receiver took no new byte in order in the window (filled in by
    /// [`idle_flows`] for the window; 0 in a snapshot). A steady state's loss rate and
    /// goodput can come from a part of its flows: with one-packet windows, flows whose
    /// retransmissions keep being lost back off until they wait out the whole window.
    pub flows_idle: u64,
}

/// Each measured flow's progress: its connection number and the receiver's in-order point
/// (`rcv_nxt`); a flow moved when either changed.
pub type Progress = Vec<(u32, u64)>;

/// The measured flows' progress now, in flow order.
pub fn progress(conns: &crate::host::Conns) -> Progress {
    (0..conns.len() as u32).map(|f| conns.get(f)).filter(|c| c.measured).map(|c| (c.conn, c.receiver.rcv_nxt)).collect()
}

/// The flows whose progress is the same at the window's start and end.
pub fn idle_flows(start: &Progress, end: &Progress) -> u64 {
    start.iter().zip(end).filter(|(a, b)| a == b).count() as u64
}

impl Steady {
    /// The counters of `w` now (the window's start at `from`, or its end).
    pub fn of(w: &World, from: Time) -> Steady {
        let c = w.counters();
        let conns = w.conns();
        Steady {
            from,
            app_bytes: c.app_bytes,
            bytes_sent: c.data_bytes_sent,
            bytes_dropped: c.data_bytes_dropped,
            segments: conns.sender_total(|t| t.stats.segments),
            timeouts: conns.sender_total(|t| t.stats.timeouts),
            rtt_samples: conns.sender_total(|t| t.stats.rtt_samples),
            rtt_sum_ps: conns.sender_total(|t| t.stats.rtt_sum_ps),
            flows_idle: 0,
        }
    }

    /// What happened between `self` (the start) and `end` (the counters at the window's end).
    pub fn until(&self, end: &Steady) -> Steady {
        Steady {
            from: self.from,
            app_bytes: end.app_bytes - self.app_bytes,
            bytes_sent: end.bytes_sent - self.bytes_sent,
            bytes_dropped: end.bytes_dropped - self.bytes_dropped,
            segments: end.segments - self.segments,
            timeouts: end.timeouts - self.timeouts,
            rtt_samples: end.rtt_samples - self.rtt_samples,
            rtt_sum_ps: end.rtt_sum_ps - self.rtt_sum_ps,
            flows_idle: 0,
        }
    }
}
