//! The network: output ports (a FIFO with a buffer feeding a link) and the queue
//! disciplines a port may have beyond it (`discipline`: a shared pool with dynamic
//! thresholds, QoS classes, packet trimming, a token-bucket shaper), the topology that joins them, 802.3x PAUSE and PFC between
//! them, and the fabric that puts them together (`fabric`).

pub mod balance;
pub mod buffer;
pub mod discipline;
pub mod fabric;
pub mod pause;
pub mod port;
pub mod qos;
pub mod shaper;
pub mod topology;
pub mod trim;

pub use buffer::{PoolRef, PortBuffer, SharedPool};
pub use fabric::Fabric;
pub use port::{Admission, Offer, OutputPort};
pub use qos::{ClassScheduler, Classes};
pub use topology::{HostId, Node, Topology, TopologyKind};
