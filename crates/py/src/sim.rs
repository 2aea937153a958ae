//! Bindings for the simulator core: JSON in, JSON out, GIL released while running.

use std::sync::Arc;

use incast_sim::progress::RunProgress;
use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

pyo3::create_exception!(
    _native,
    ScenarioError,
    PyValueError,
    "A scenario the core refuses: args are (param, value, allowed, related), param and related in the core's names."
);

/// The core's refusal as a [`ScenarioError`] whose fields a front can re-label.
fn scenario_error(e: incast_sim::ScenarioError) -> PyErr {
    ScenarioError::new_err((e.param, e.value, e.allowed, e.related.to_vec()))
}

/// A scenario's JSON as a spec, the keys it lacks from its preset (`incast_sim::preset`).
fn parse_spec(scenario_json: &str) -> PyResult<incast_sim::ScenarioSpec> {
    let value = serde_json::from_str(scenario_json).map_err(|e| PyValueError::new_err(format!("scenario: {e}")))?;
    incast_sim::ScenarioSpec::from_json(value).map_err(|e| PyValueError::new_err(format!("scenario: {e}")))
}

/// The scenario schema: every field's name, public name, unit, range, default and doc
/// (`incast_sim::schema`), as JSON.
#[pyfunction]
pub fn scenario_schema() -> String {
    incast_sim::schema::schema_json()
}

/// Validate a scenario without running it: `{"spec": the spec with its unset fields
/// resolved, "derived": what validation computed}` as JSON, or a `ScenarioError`.
#[pyfunction]
pub fn validate_scenario(scenario_json: &str) -> PyResult<String> {
    let sc = parse_spec(scenario_json)?.validate().map_err(scenario_error)?;
    Ok(serde_json::json!({ "spec": sc.spec, "derived": sc.derived_json() }).to_string())
}

/// How far a running simulation has got (`incast_sim::progress`): pass one to `simulate`
/// or `simulate_recording` and read it from another thread while the run goes on.
#[pyclass(frozen)]
#[derive(Default)]
pub struct Progress(Arc<RunProgress>);

#[pymethods]
impl Progress {
    #[new]
    fn new() -> Self {
        Progress::default()
    }

    /// Simulated time reached, in seconds.
    #[getter]
    fn sim_seconds(&self) -> f64 {
        self.0.sim_ps() as f64 / incast_sim::time::PS_PER_S as f64
    }

    /// Blocks completed.
    #[getter]
    fn blocks(&self) -> u64 {
        self.0.blocks()
    }
}

/// Run one simulation described by `scenario_json`; return the result as JSON.
#[pyfunction]
#[pyo3(signature = (scenario_json, progress=None))]
pub fn simulate(py: Python<'_>, scenario_json: &str, progress: Option<&Progress>) -> PyResult<String> {
    let scenario = parse_spec(scenario_json)?.validate().map_err(scenario_error)?;
    let opts = incast_sim::trace::RecordOptions { progress: progress.map(|p| p.0.clone()), ..Default::default() };
    let result = py.detach(|| incast_sim::simulate_recording(&scenario, &opts).0);
    check_not_cancelled()?;
    serde_json::to_string(&result).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// A run cut short by [`cancel`] has an incomplete result: raise instead of returning it.
fn check_not_cancelled() -> PyResult<()> {
    if incast_sim::cancel_requested() {
        return Err(PyKeyboardInterrupt::new_err("simulation cancelled"));
    }
    Ok(())
}

/// Ask every simulation running in this process to stop within a few thousand events
/// (Ctrl-C); each raises KeyboardInterrupt.
#[pyfunction]
pub fn cancel() {
    incast_sim::request_cancel();
}

/// Let simulations run again after `cancel`.
#[pyfunction]
pub fn clear_cancel() {
    incast_sim::clear_cancel();
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

/// A port's end as text: `host 3` or `switch 0`.
fn node_name(n: incast_sim::net::Node) -> String {
    match n {
        incast_sim::net::Node::Host(h) => format!("host {h}"),
        incast_sim::net::Node::Switch(s) => format!("switch {s}"),
    }
}

/// The per-port series as `{"meta": JSON text, column name: little-endian bytes}`:
/// `tx_bytes`, `drop_bytes` (u64), `tx_packets`, `drop_packets`, `timeouts`, `ce_packets`,
/// `retrans_packets` (u32), each ports x intervals, row-major; `flows_<window_ps>` (u32)
/// ports x windows of that length (distinct data flows), for every window in the meta's
/// `flow_windows_ps`; `senders` (u32) ports x seconds (the 1 s one).
fn port_util_columns<'py>(py: Python<'py>, u: &incast_sim::port_util::PortUtil) -> PyResult<Bound<'py, PyDict>> {
    use incast_sim::port_util::Cell;
    let d = PyDict::new(py);
    let n = u.cells.iter().map(Vec::len).sum::<usize>();
    // one pass per column into a buffer of its final size (millions of cells)
    let u64s = |f: fn(&Cell) -> u64| {
        let mut out = Vec::with_capacity(8 * n);
        u.cells.iter().flatten().for_each(|c| out.extend_from_slice(&f(c).to_le_bytes()));
        out
    };
    let u32s = |f: fn(&Cell) -> u32| {
        let mut out = Vec::with_capacity(4 * n);
        u.cells.iter().flatten().for_each(|c| out.extend_from_slice(&f(c).to_le_bytes()));
        out
    };
    d.set_item("tx_bytes", PyBytes::new(py, &u64s(|c: &Cell| c.tx_bytes)))?;
    d.set_item("drop_bytes", PyBytes::new(py, &u64s(|c| c.drop_bytes)))?;
    d.set_item("tx_packets", PyBytes::new(py, &u32s(|c| c.tx_packets)))?;
    d.set_item("drop_packets", PyBytes::new(py, &u32s(|c| c.drop_packets)))?;
    d.set_item("timeouts", PyBytes::new(py, &u32s(|c| c.timeouts)))?;
    d.set_item("ce_packets", PyBytes::new(py, &u32s(|c| c.ce_packets)))?;
    d.set_item("retrans_packets", PyBytes::new(py, &u32s(|c| c.retrans_packets)))?;
    for (w, windows) in u.windows.iter().zip(&u.flows) {
        let bytes: Vec<u8> = windows.iter().flat_map(|d| d.counts.iter().flat_map(|n| n.to_le_bytes())).collect();
        d.set_item(format!("flows_{}", w.0), PyBytes::new(py, &bytes))?;
    }
    let senders: Vec<u8> = u.senders().into_iter().flatten().flat_map(|n| n.to_le_bytes()).collect();
    d.set_item("senders", PyBytes::new(py, &senders))?;
    let ports: Vec<_> = u
        .ports
        .iter()
        .map(|p| serde_json::json!({"port": p.port, "from": node_name(p.from), "to": node_name(p.to), "rate_bps": p.rate_bps}))
        .collect();
    let meta = serde_json::json!({
        "interval_ps": u.interval.0,
        "intervals": u.intervals(),
        "seconds": u.senders().first().map_or(0, |s| s.len()),
        "flow_windows_ps": u.windows.iter().map(|w| w.0).collect::<Vec<_>>(),
        "truncated": u.truncated,
        "ports": ports,
    });
    d.set_item("meta", meta.to_string())?;
    Ok(d)
}

/// The ground truth of losses and timeouts as `{column: little-endian bytes}`: per loss
/// `loss_time_ps` (u64), `loss_port`, `loss_flow`, `loss_len`, `loss_queued_senders` (u32),
/// `loss_seq` (u64); per timeout `timeout_time_ps` (u64), `timeout_flow`,
/// `timeout_receiver` (u32), `timeout_loss` (i64, the loss's row or -1); and `flow_ends`
/// (u32 pairs: each flow's sender and receiver host).
fn truth_columns<'py>(
    py: Python<'py>,
    losses: &[incast_sim::trace::LossRow],
    timeouts: &[incast_sim::trace::TimeoutRow],
    ends: &[(u32, u32)],
) -> PyResult<Bound<'py, PyDict>> {
    fn col<T, const N: usize>(rows: &[T], f: impl Fn(&T) -> [u8; N]) -> Vec<u8> {
        rows.iter().flat_map(f).collect()
    }
    let d = PyDict::new(py);
    d.set_item("loss_time_ps", PyBytes::new(py, &col(losses, |r| r.time.0.to_le_bytes())))?;
    d.set_item("loss_port", PyBytes::new(py, &col(losses, |r| r.port.to_le_bytes())))?;
    d.set_item("loss_flow", PyBytes::new(py, &col(losses, |r| r.flow.to_le_bytes())))?;
    d.set_item("loss_seq", PyBytes::new(py, &col(losses, |r| r.seq.to_le_bytes())))?;
    d.set_item("loss_len", PyBytes::new(py, &col(losses, |r| r.len.to_le_bytes())))?;
    d.set_item("loss_queued_senders", PyBytes::new(py, &col(losses, |r| r.queued_senders.to_le_bytes())))?;
    d.set_item("timeout_time_ps", PyBytes::new(py, &col(timeouts, |r| r.time.0.to_le_bytes())))?;
    d.set_item("timeout_flow", PyBytes::new(py, &col(timeouts, |r| r.flow.to_le_bytes())))?;
    d.set_item("timeout_receiver", PyBytes::new(py, &col(timeouts, |r| r.receiver.to_le_bytes())))?;
    d.set_item("timeout_loss", PyBytes::new(py, &col(timeouts, |r| r.loss.map_or(-1i64, i64::from).to_le_bytes())))?;
    let ends: Vec<u8> = ends.iter().flat_map(|&(a, b)| a.to_le_bytes().into_iter().chain(b.to_le_bytes())).collect();
    d.set_item("flow_ends", PyBytes::new(py, &ends))?;
    Ok(d)
}

/// Run one simulation and write its capture (`pcap_path`, pcap), sender trace
/// (`trace_path`, CSV) and per-event trace (`events_path`, the ns-3 peer's CSV format)
/// as asked; return the result as JSON, with `capture_packets` (frames in the pcap,
/// handshakes included) and `capture_truncated` when a capture was asked for,
/// `trace_rows` when a trace was and `event_rows` when an event trace was. Each file
/// appears whole or not at all. With `port_util_interval_ps`, every port is also sampled
/// at that interval (`incast_sim::port_util`); with `losses`, the ground truth of every loss
/// and timeout is recorded. Returns `(result JSON, port series or None, truth or None)`
/// (as `port_util_columns` and `truth_columns` give them).
#[pyfunction]
#[pyo3(signature = (scenario_json, pcap_path=None, trace_path=None, capture_limit=incast_simio::run::DEFAULT_CAPTURE_LIMIT, trace_flows=vec![], pcap_include_dropped=true, events_path=None, progress=None, port_util_interval_ps=None, losses=false))]
#[allow(clippy::too_many_arguments)]
pub fn simulate_recording<'py>(
    py: Python<'py>,
    scenario_json: &str,
    pcap_path: Option<std::path::PathBuf>,
    trace_path: Option<std::path::PathBuf>,
    capture_limit: usize,
    trace_flows: Vec<u32>,
    pcap_include_dropped: bool,
    events_path: Option<std::path::PathBuf>,
    progress: Option<&Progress>,
    port_util_interval_ps: Option<u64>,
    losses: bool,
) -> PyResult<(String, Option<Bound<'py, PyDict>>, Option<Bound<'py, PyDict>>)> {
    let scenario = parse_spec(scenario_json)?.validate().map_err(scenario_error)?;
    let req = incast_simio::FileRequest {
        pcap: pcap_path,
        pcap_options: incast_simio::PcapOptions { include_dropped: pcap_include_dropped, ..Default::default() },
        capture_limit,
        trace: trace_path,
        trace_flows,
        events: events_path,
        port_util_interval: port_util_interval_ps.map(incast_sim::time::Time),
        losses,
        progress: progress.map(|p| p.0.clone()),
    };
    let (result, written) = py.detach(|| incast_simio::simulate_to_files(&scenario, &req)).map_err(|e| {
        if incast_sim::cancel_requested() {
            PyKeyboardInterrupt::new_err("simulation cancelled")
        } else if e.is::<std::io::Error>() {
            pyo3::exceptions::PyOSError::new_err(e.to_string())
        } else if let Some(refused) = e.downcast_ref::<incast_sim::ScenarioError>() {
            scenario_error(refused.clone()) // the sampling's interval or memory cap
        } else {
            PyValueError::new_err(e.to_string())
        }
    })?;
    let mut json = serde_json::to_value(&result).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let obj = json.as_object_mut().expect("a result is a JSON object");
    if let Some(p) = written.pcap {
        obj.insert("capture_packets".into(), p.frames.into());
        obj.insert("capture_truncated".into(), written.capture_truncated.into());
    }
    if let Some(rows) = written.trace_rows {
        obj.insert("trace_rows".into(), rows.into());
    }
    if let Some(rows) = written.event_rows {
        obj.insert("event_rows".into(), rows.into());
    }
    let columns = written.port_util.as_ref().map(|u| port_util_columns(py, u)).transpose()?;
    let truth = written.truth.as_ref().map(|(l, t)| truth_columns(py, l, t, &written.ends)).transpose()?;
    let text = serde_json::to_string(&json).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((text, columns, truth))
}
