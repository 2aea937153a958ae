//! Network elements: output ports (a FIFO with a byte buffer feeding a link).

pub mod port;

pub use port::{Enqueue, OutputPort};
