//! Network elements: output ports (a FIFO with a buffer feeding a link).

pub mod port;

pub use port::{Admission, Offer, OutputPort};
