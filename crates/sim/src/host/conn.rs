//! One connection between two hosts (a flow): the sender at its sending end, the receiver
//! at its receiving end, the receiving end's view of the handshake, and the NICs of both
//! ends. Every flow of a world is one `Conn`, the incast's and a background bulk flow's
//! alike. A flow runs TCP, or a receiver-driven transport (NDP, receiver credit: issue 29),
//! whose own ends are its [`PullFlow`].

use super::credit::CreditSink;
use super::ndp::{NdpSink, PullSender};
use crate::event::PortId;
use crate::net::HostId;
use crate::tcp::{TcpReceiver, TcpSender};
use crate::time::Time;

/// The ends of a receiver-driven flow: NDP's sender (credit's too), and its receiving
/// end's pulls or credits. Its bytes are reassembled by the flow's `receiver`, as TCP's.
#[derive(Clone, Debug)]
pub struct PullFlow {
    pub sender: PullSender,
    pub sink: PullSink,
}

/// What a receiver-driven flow's receiving end asks for.
#[derive(Clone, Debug)]
pub enum PullSink {
    /// NDP: a pull per packet or header that arrives (`host::ndp`).
    Ndp(NdpSink),
    /// Receiver credit: a credit per packet still to come (`host::credit`).
    Credit(CreditSink),
}

/// The receiving end's view of a flow's connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnState {
    /// No connection (handshake mode, between blocks).
    Closed,
    /// SYN sent, waiting for the SYN-ACK.
    SynSent,
    /// Established: requests and data flow.
    Open,
}

/// One flow's connection.
pub struct Conn {
    pub sender: TcpSender,
    pub receiver: TcpReceiver,
    pub state: ConnState,
    /// Connection number at the receiving end; a new one per block in handshake mode.
    pub conn: u32,
    /// Connection number the sending end answers for.
    pub server_conn: u32,
    pub(super) syn_sent_at: Time,
    pub(super) syn_timeout: Time,
    pub(super) syn_deadline: Time,
    /// The sending end's TS.Recent (RFC 7323): the TSval of the last ACK or request it
    /// received, which its data echo (Linux's receiver RTT, `tcp::linux_rcv`).
    pub(super) peer_tsval: Time,
    /// The TSval of the receiving end's latest request (it is sent when the request is).
    pub(super) request_tsval: Time,
    /// Window the receiving end advertises on this flow's next connection.
    pub window: u64,
    /// The NICs of its sending and receiving hosts.
    pub nics: (PortId, PortId),
    /// Its sending and receiving hosts.
    pub hosts: (HostId, HostId),
    /// Counted in the run's totals (bytes, timeouts, the drain at the end of a blocks run);
    /// false for a background flow, which its application counts (`app::bulk`).
    pub measured: bool,
    /// The application whose flow it is: its index in the world's list (`app::Apps`).
    pub app: u8,
    /// A receiver-driven transport's ends; `None`: TCP (`sender` and `receiver`).
    pub pull: Option<Box<PullFlow>>,
}

impl Conn {
    /// Everything written has been acknowledged (TCP), or the receiver has it all and said
    /// so (NDP, credit).
    pub fn all_acked(&self) -> bool {
        match &self.pull {
            None => self.sender.all_acked(),
            Some(p) => p.sender.done || p.sender.flow_size() == 0,
        }
    }
}
