//! One TCP connection between two hosts (a flow): the sender at its sending end, the
//! receiver at its receiving end, the receiving end's view of the handshake, and the NICs
//! of both ends. Every flow of a world is one `Conn`, the incast's and a background bulk
//! flow's alike.

use crate::event::PortId;
use crate::net::HostId;
use crate::tcp::{TcpReceiver, TcpSender};
use crate::time::Time;

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
}
