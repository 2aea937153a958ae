//! What every part of a world shares: the clock, the event queue, the packets, the run's
//! random stream and the recorder. The fabric, the connections and the applications each
//! own their state and take this as an argument, as htsim's components share its
//! `EventList` and ns-3's its `Simulator`.

use rand_pcg::Pcg64;

use crate::event::EventQueue;
use crate::packet::PacketPool;
use crate::time::Time;
use crate::trace::Recorder;

/// The shared context of one simulation.
pub(crate) struct Ctx {
    /// The instant of the event being processed.
    pub now: Time,
    pub queue: EventQueue,
    pub pool: PacketPool,
    /// The run's one random stream, drawn in event order by every part that draws (a server's
    /// think time, a block's active servers, a host's send jitter, a Riak get): one stream,
    /// so a run's draws, and so its result, depend on the seed alone.
    pub rng: Pcg64,
    pub recorder: Recorder,
    /// Events run so far: popped by the loop, or run at once where they were made
    /// (`net::fabric`'s same-instant link-free events).
    pub events: u64,
}
