//! Bindings for Osada et al.'s connection-serialization model
//! (`incast_sim::app::serialization_model`): numbers in, JSON out.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use incast_sim::app::serialization_model as model;

/// The model for one point as JSON: the fields of the Python `SerializationModel` that do
/// not need servers or a buffer, exact values as `[numerator, denominator]` (times in ps,
/// sizes in bytes or packets), and `scheduler_thresholds` (what NCCS, OCS and CCS run
/// with). ValueError naming the parameter for inputs outside the model.
#[pyfunction]
pub fn serialization_model(
    rate_bps: u64,
    base_rtt_ps: u64,
    mss_bytes: u32,
    sru_bytes: u64,
    header_bytes: u32,
) -> PyResult<String> {
    let m = model::serialization_model(rate_bps, base_rtt_ps, mss_bytes, sru_bytes, header_bytes)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let mut json = serde_json::to_value(m).map_err(|e| PyValueError::new_err(e.to_string()))?;
    json["scheduler_thresholds"] =
        serde_json::to_value(m.scheduler_thresholds()).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(json.to_string())
}
