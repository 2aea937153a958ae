//! Network elements: output ports (a FIFO with a buffer feeding a link), the topology
//! that joins them, and 802.3x PAUSE between them.

pub mod pause;
pub mod port;
pub mod topology;

pub use port::{Admission, Offer, OutputPort};
pub use topology::{HostId, Node, Topology, TopologyKind};
