//! Network elements: output ports (a FIFO with a buffer feeding a link), and the buffers a
//! switch may have beyond a port's own: a shared pool with dynamic thresholds, QoS classes.

pub mod buffer;
pub mod port;
pub mod qos;

pub use buffer::{PoolRef, PortBuffer, SharedPool};
pub use port::{Admission, Offer, OutputPort};
pub use qos::{ClassScheduler, Classes};
