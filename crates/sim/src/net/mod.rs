//! Network elements: output ports (a FIFO with a buffer feeding a link), the buffers a
//! switch may have beyond a port's own (a shared pool with dynamic thresholds, QoS classes),
//! the topology that joins them, and 802.3x PAUSE between them.

pub mod buffer;
pub mod fabric;
pub mod pause;
pub mod port;
pub mod qos;
pub mod topology;

pub use buffer::{PoolRef, PortBuffer, SharedPool};
pub use fabric::Fabric;
pub use port::{Admission, Offer, OutputPort};
pub use qos::{ClassScheduler, Classes};
pub use topology::{HostId, Node, Topology, TopologyKind};
