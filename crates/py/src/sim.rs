//! Bindings for the simulator core: JSON in, JSON out, GIL released while running.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Run one simulation described by `scenario_json`; return the result as JSON.
#[pyfunction]
pub fn simulate(py: Python<'_>, scenario_json: &str) -> PyResult<String> {
    let scenario: incast_sim::ScenarioSpec =
        serde_json::from_str(scenario_json).map_err(|e| PyValueError::new_err(format!("scenario: {e}")))?;
    let result = py
        .detach(|| incast_sim::run(&scenario))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    serde_json::to_string(&result).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The simulator core's version.
#[pyfunction]
pub fn version() -> &'static str {
    incast_sim::VERSION
}

/// The core's default scenario as JSON (the Python front checks its defaults against it).
#[pyfunction]
pub fn default_scenario() -> String {
    serde_json::to_string(&incast_sim::ScenarioSpec::default()).expect("defaults serialize")
}
