//! Network elements: output ports (a FIFO with a buffer feeding a link) and the topology
//! that joins them.

pub mod port;
pub mod topology;

pub use port::{Admission, Offer, OutputPort};
pub use topology::{HostId, Node, Topology, TopologyKind};
