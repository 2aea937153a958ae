//! Bindings for the real-TCP data path (crates/wire): JSON in, JSON out, GIL released
//! while the client runs; the server runs on its own threads behind a handle.

use pyo3::exceptions::{PyOSError, PyTimeoutError, PyValueError};
use pyo3::prelude::*;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

fn to_py(e: io::Error) -> PyErr {
    match e.kind() {
        io::ErrorKind::InvalidInput => PyValueError::new_err(e.to_string()),
        io::ErrorKind::TimedOut => PyTimeoutError::new_err(e.to_string()),
        _ => PyOSError::new_err(e.to_string()),
    }
}

/// How far a running `wire_read` has got, read from another thread.
#[pyclass]
#[derive(Default)]
pub struct WireProgress(Arc<AtomicU64>);

#[pymethods]
impl WireProgress {
    #[new]
    fn new() -> Self {
        WireProgress::default()
    }

    /// Blocks completed.
    #[getter]
    fn blocks(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Run the synchronized-read client described by `config_json`; return the result as JSON.
/// `progress` counts the blocks completed while it runs.
#[pyfunction]
#[pyo3(signature = (config_json, progress=None))]
pub fn wire_read(py: Python<'_>, config_json: &str, progress: Option<&WireProgress>) -> PyResult<String> {
    let mut cfg: incast_wire::ClientConfig =
        serde_json::from_str(config_json).map_err(|e| PyValueError::new_err(format!("client config: {e}")))?;
    cfg.blocks_done = progress.map(|p| p.0.clone());
    let result = py.detach(|| incast_wire::read_blocks(cfg)).map_err(to_py)?;
    serde_json::to_string(&result).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// A running incastlab server (listening socket plus connection threads).
#[pyclass]
pub struct WireServer {
    inner: Mutex<Option<incast_wire::Server>>,
    addr: String,
}

#[pymethods]
impl WireServer {
    /// Bind and start serving in the background, as described by `config_json`.
    #[new]
    fn new(py: Python<'_>, config_json: &str) -> PyResult<Self> {
        let cfg: incast_wire::ServerConfig =
            serde_json::from_str(config_json).map_err(|e| PyValueError::new_err(format!("server config: {e}")))?;
        let server = py.detach(|| incast_wire::Server::start(cfg)).map_err(to_py)?;
        let addr = server.local_addr().to_string();
        Ok(WireServer { inner: Mutex::new(Some(server)), addr })
    }

    /// The bound address, `ip:port`.
    #[getter]
    fn local_addr(&self) -> String {
        self.addr.clone()
    }

    /// The server's counters as JSON (null fields where the kernel cannot tell).
    fn stats(&self, py: Python<'_>) -> PyResult<String> {
        let st = py.detach(|| self.inner.lock().unwrap().as_ref().map(|s| s.stats()).unwrap_or_default());
        serde_json::to_string(&st).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Stop accepting and close every connection (idempotent).
    fn stop(&self, py: Python<'_>) {
        py.detach(|| {
            if let Some(mut s) = self.inner.lock().unwrap().take() {
                s.stop();
            }
        });
    }
}
