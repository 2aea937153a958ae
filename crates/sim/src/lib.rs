//! incastlab's simulator core: a deterministic, packet-level discrete-event simulation
//! of TCP incast (synchronized reads through one output-queued switch).
//!
//! Pure library: no files, no Python, no command line. Give it a [`ScenarioSpec`], get a
//! [`SimResult`]. Same scenario and seed, same result, byte for byte (apart from the
//! wall-clock field).

pub mod result;
pub mod scenario;
pub mod time;

pub use result::SimResult;
pub use scenario::{Scenario, ScenarioError, ScenarioSpec, TcpVariant};

/// The core's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Validate `spec` and simulate it.
pub fn run(spec: &ScenarioSpec) -> Result<SimResult, ScenarioError> {
    let _scenario = spec.validate()?;
    Err(ScenarioError { param: "simulator", value: "-".into(), allowed: "the simulator core (not built yet)".into() })
}
