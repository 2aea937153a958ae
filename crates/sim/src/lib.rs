//! incastlab's simulator core: a deterministic, packet-level discrete-event simulation
//! of TCP incast (synchronized reads through one output-queued switch).
//!
//! Pure library: no files, no Python, no command line. Give it a [`ScenarioSpec`], get a
//! [`SimResult`]. Same scenario and seed, same result, byte for byte (apart from the
//! wall-clock field).

pub mod app;
mod ctx;
pub mod event;
pub mod events;
pub mod fct;
pub mod host;
pub mod net;
pub mod packet;
pub mod port_util;
pub mod preset;
pub mod progress;
pub mod result;
pub mod scenario;
pub mod schema;
pub mod stats;
pub mod tcp;
pub mod time;
pub mod trace;
pub mod world;

pub use result::SimResult;
pub use scenario::{Scenario, ScenarioError, ScenarioSpec, TcpVariant};

/// The core's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Set when the process was asked to stop (Ctrl-C): every running world checks it every
/// [`world::CANCEL_CHECK_EVENTS`] events and stops early; its result is then incomplete
/// and the caller must discard it ([`cancel_requested`]).
static CANCEL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Ask every simulation running in this process to stop soon.
pub fn request_cancel() {
    CANCEL.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Allow simulations to run again after a cancellation.
pub fn clear_cancel() {
    CANCEL.store(false, std::sync::atomic::Ordering::Relaxed);
}

/// Has a stop been asked for since the last [`clear_cancel`]?
pub fn cancel_requested() -> bool {
    CANCEL.load(std::sync::atomic::Ordering::Relaxed)
}

/// Validate `spec` and simulate it.
pub fn run(spec: &ScenarioSpec) -> Result<SimResult, ScenarioError> {
    let scenario = spec.validate()?;
    Ok(simulate(&scenario))
}

/// Simulate a validated scenario.
pub fn simulate(sc: &Scenario) -> SimResult {
    simulate_recording(sc, &trace::RecordOptions::default()).0
}

/// Simulate, and also return the capture and trace `opts` ask for. Panics on a
/// utilization sampling [`record`] would refuse.
pub fn simulate_recording(sc: &Scenario, opts: &trace::RecordOptions) -> (SimResult, trace::Records) {
    record(sc, opts).unwrap_or_else(|e| panic!("{e}"))
}

/// Simulate, and also return the records `opts` ask for; refuses a utilization sampling
/// interval out of range or a series over its memory cap (`port_util::check`) before running.
pub fn record(sc: &Scenario, opts: &trace::RecordOptions) -> Result<(SimResult, trace::Records), ScenarioError> {
    let started = std::time::Instant::now();
    let mut w = world::World::with_records(sc, opts);
    if let Some(interval) = opts.port_util_interval {
        port_util::check(sc, w.port_count(), interval)?;
    }
    w.run();
    let wall = started.elapsed().as_secs_f64();
    let result = result::summarize(sc, &w, wall);
    Ok((result, w.take_records()))
}
