//! PyO3 bindings for incastlab. Thin by design: each submodule converts arguments and
//! results and calls into a core crate; no model logic lives here (DESIGN.md).

use pyo3::prelude::*;

mod model;
mod sim;
mod wire;
mod monitor;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sim::simulate, m)?)?;
    m.add_function(wrap_pyfunction!(sim::version, m)?)?;
    m.add_function(wrap_pyfunction!(sim::cancel, m)?)?;
    m.add_function(wrap_pyfunction!(sim::clear_cancel, m)?)?;
    m.add_function(wrap_pyfunction!(sim::default_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(sim::scenario_schema, m)?)?;
    m.add_function(wrap_pyfunction!(sim::validate_scenario, m)?)?;
    m.add("ScenarioError", m.py().get_type::<sim::ScenarioError>())?;
    m.add_class::<sim::Progress>()?;
    m.add_function(wrap_pyfunction!(wire::wire_read, m)?)?;
    m.add_class::<wire::WireServer>()?;
    m.add_class::<wire::WireProgress>()?;
    m.add_class::<monitor::Sampler>()?;
    m.add_class::<monitor::KernelSampler>()?;
    m.add_function(wrap_pyfunction!(monitor::counter_delta, m)?)?;
    m.add_function(wrap_pyfunction!(monitor::interval_stats, m)?)?;
    m.add_function(wrap_pyfunction!(monitor::read_proc_net_in, m)?)?;
    m.add_class::<monitor::TcpWatch>()?;
    m.add_function(wrap_pyfunction!(monitor::route_ifindex, m)?)?;
    m.add_function(wrap_pyfunction!(sim::simulate_recording, m)?)?;
    m.add_function(wrap_pyfunction!(model::serialization_model, m)?)?;
    Ok(())
}
