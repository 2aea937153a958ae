//! Receiver credit, in the manner of EQDS (Olteanu et al., "An edge-queued datagram service
//! for all datacenter traffic", NSDI 2022, §4) and of the receiver-credit congestion control
//! of the Ultra Ethernet 1.0 specification: a sender sends a small unscheduled window at
//! once, and the rest only against credit, which its receiver paces out at its own link's
//! rate, in turn among the senders that still need some (`host::pacer`).
//!
//! Where NDP pulls once per packet that arrives (`host::ndp`), a credit receiver knows what
//! each sender still has to send (every data packet carries the flow's length, as EQDS's
//! packets carry the sender's backlog) and owes it exactly that: one credit per packet
//! beyond the unscheduled window, and one more for each packet the network trimmed (a
//! NACK comes back, and the packet waits for its credit). No credit is wasted on a sender
//! that has nothing left, and the credit flows from the first packet on, whether or not
//! later packets arrive. The sender is NDP's (`ndp::PullSender`), sending one packet per
//! credit, retransmissions first, with a retransmission timeout for a packet lost whole
//! (on drop-tail ports, or a header dropped).
//!
//! Simplified, and written down in `docs/transports.md`: credit is counted in packets (EQDS
//! counts bytes in credit quanta); there is no request-to-send for a flow whose whole
//! unscheduled window was lost (its timeout resends it, and the receiver learns then); no
//! speculative sending beyond the unscheduled window; no credit to the sender for headers
//! the network returned (return-to-sender is NDP's: refused with `transport = credit`).

/// The receiving end of a receiver-credit flow, beside its reassembly (its `TcpReceiver`).
#[derive(Clone, Debug, Default)]
pub struct CreditSink {
    /// The flow's length is known (from its first packet or header).
    known: bool,
    /// Credits sent so far: the number the next credit carries (cumulative).
    pub credit_no: u32,
    /// The receiver has every byte.
    pub done: bool,
    /// Headers received (payloads trimmed in the network), each owed a credit.
    pub headers: u64,
}

impl CreditSink {
    /// A packet or header of a flow of `total` bytes in packets of `mss` arrived, whose
    /// sender sends `unscheduled` packets without credit: the credits the flow is owed, the
    /// first time (0 after).
    pub fn learn(&mut self, total: u64, mss: u64, unscheduled: u32) -> u32 {
        if self.known {
            return 0;
        }
        self.known = true;
        let packets = total.div_ceil(mss);
        packets.saturating_sub(unscheduled as u64).min(u32::MAX as u64) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flow_is_owed_one_credit_per_packet_beyond_its_unscheduled_window_once() {
        let mut c = CreditSink::default();
        // 450,000 B in 9000 B packets: 50, of which 2 unscheduled
        assert_eq!(c.learn(450_000, 9000, 2), 48);
        assert_eq!(c.learn(450_000, 9000, 2), 0, "learnt once");
        let mut short = CreditSink::default();
        assert_eq!(short.learn(100, 9000, 2), 0, "a one-packet flow needs no credit");
        assert_eq!(CreditSink::default().learn(9001, 9000, 1), 1, "a short last packet counts");
    }
}
