//! Bindings for the monitor's native sampler: start a polling thread, drain its intervals
//! once a second (GIL released while draining), read /proc/net files in other namespaces.

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use incast_monitor::source::SysfsCounters;

/// Polls `/sys/class/net/IFACE/statistics/{rx,tx}_{bytes,packets}` every `interval_ns`.
#[pyclass(module = "incastlab._native")]
pub struct Sampler {
    inner: incast_monitor::Sampler,
}

#[pymethods]
impl Sampler {
    /// Open the interface's counters (ValueError naming --iface if it does not exist,
    /// OSError if they cannot be read) and start polling.
    #[new]
    #[pyo3(signature = (iface, interval_ns, spin_ns = 0))]
    fn new(iface: &str, interval_ns: u64, spin_ns: u64) -> PyResult<Self> {
        let counters = SysfsCounters::open(iface).map_err(|e| match e {
            incast_monitor::source::SourceError::NoSuchInterface(_) => PyValueError::new_err(e.to_string()),
            other => PyOSError::new_err(other.to_string()),
        })?;
        Ok(Sampler { inner: incast_monitor::Sampler::start(counters, interval_ns, spin_ns) })
    }

    /// Intervals since the last call, as a dict of equal-length lists (`t_end_ns`, `dt_ns`,
    /// `rx_bytes`, `tx_bytes`, `rx_packets`, `tx_packets`) plus counts `wraps`, `resets`,
    /// `missed`, `uncertain` (readings dropped as mistimed) and `realtime` (the thread got SCHED_FIFO priority). OSError once the source failed (e.g. the interface disappeared).
    fn drain<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let inner = &mut self.inner;
        let got = py.detach(|| inner.drain()).map_err(|e| PyOSError::new_err(e.to_string()))?;
        intervals_dict(py, got)
    }

    /// Stop the polling thread (also done when the object is dropped).
    fn stop(&mut self, py: Python<'_>) {
        let inner = &mut self.inner;
        py.detach(|| inner.stop());
    }
}

/// Counts bytes, packets and ECN CE marks in the kernel (eBPF on the interface's TCX
/// ingress/egress hooks) into `bucket_ns`-wide buckets; detached when stopped or dropped.
#[pyclass(module = "incastlab._native")]
pub struct KernelSampler {
    inner: Option<incast_monitor::ebpf::KernelBins>,
}

#[pymethods]
impl KernelSampler {
    /// Attach to `iface` (OSError with the reason if the kernel or privileges refuse).
    #[new]
    #[pyo3(signature = (iface, bucket_ns = 100_000))]
    fn new(iface: &str, bucket_ns: u64) -> PyResult<Self> {
        let bins = incast_monitor::ebpf::KernelBins::attach(iface, bucket_ns).map_err(PyOSError::new_err)?;
        Ok(KernelSampler { inner: Some(bins) })
    }

    /// Finished buckets since the last call, in the same dict shape as `Sampler.drain`,
    /// plus `rx_ce` and `tx_ce` (ECN CE-marked packets per bucket).
    fn drain<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let Some(inner) = self.inner.as_mut() else {
            return Err(PyOSError::new_err("the kernel sampler was stopped"));
        };
        let (got, rx_ce, tx_ce) = py.detach(|| inner.drain()).map_err(PyOSError::new_err)?;
        // kernel buckets never wrap, reset or get mistimed (the fields stay 0 / false)
        let d = intervals_dict(py, got)?;
        d.set_item("rx_ce", rx_ce)?;
        d.set_item("tx_ce", tx_ce)?;
        Ok(d)
    }

    /// Detach the programs.
    fn stop(&mut self) {
        self.inner = None;
    }
}

/// The increase from `prev` to `cur` of a counter that may wrap (32/64 bit) or reset:
/// `(delta, event)` with event one of "none", "wrap32", "wrap64", "reset" (delta 0).
#[pyfunction]
pub fn counter_delta(prev: u64, cur: u64) -> (u64, &'static str) {
    use incast_monitor::CounterEvent::*;
    let d = incast_monitor::delta(prev, cur);
    let event = match d.event {
        None => "none",
        Wrap32 => "wrap32",
        Wrap64 => "wrap64",
        Reset => "reset",
    };
    (d.value, event)
}

/// Median, p99, max and jitter (mean absolute deviation from the median) of intervals in
/// nanoseconds, as a dict; None for an empty list.
#[pyfunction]
pub fn interval_stats<'py>(py: Python<'py>, dt_ns: Vec<u64>) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some(s) = incast_monitor::IntervalStats::of(&dt_ns) else { return Ok(None) };
    let d = PyDict::new(py);
    d.set_item("count", s.count)?;
    d.set_item("median_ns", s.median_ns)?;
    d.set_item("p99_ns", s.p99_ns)?;
    d.set_item("max_ns", s.max_ns)?;
    d.set_item("jitter_ns", s.jitter_ns)?;
    Ok(Some(d))
}

/// Contents of /proc/net/FILE inside the named network namespace (needs root).
#[pyfunction]
pub fn read_proc_net_in(py: Python<'_>, netns: &str, file: &str) -> PyResult<String> {
    py.detach(|| incast_monitor::netns::read_proc_net_in(netns, file)).map_err(PyOSError::new_err)
}

/// The TCP connections of this network namespace, for the fan-in count: collects sockets
/// the kernel frees from construction on, and reads the live ones on each `read`.
#[pyclass(module = "incastlab._native")]
pub struct TcpWatch {
    inner: incast_monitor::tcp_sockets::TcpWatch,
}

#[pymethods]
impl TcpWatch {
    #[new]
    fn new() -> Self {
        TcpWatch { inner: incast_monitor::tcp_sockets::TcpWatch::start() }
    }

    /// The live connected sockets, then those freed since the last call, as a dict:
    /// `sockets`, a list of `(cookie, local_ip, local_port, remote_ip, remote_port,
    /// bytes_received, data_segs_in, closed, total_retrans)`; `overruns` (destroy messages the kernel
    /// dropped so far) and `closed_unavailable` (why freed sockets are not collected, or
    /// None). OSError when the kernel refuses the dump.
    fn read<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let inner = &self.inner;
        let got = py.detach(|| inner.read()).map_err(|e| PyOSError::new_err(e.to_string()))?;
        let sockets: Vec<_> = got
            .sockets
            .iter()
            .map(|s| {
                (s.cookie, s.local.ip().to_string(), s.local.port(), s.remote.ip().to_string(), s.remote.port(),
                 s.bytes_received, s.data_segs_in, s.closed, s.total_retrans)
            })
            .collect();
        let d = PyDict::new(py);
        d.set_item("sockets", sockets)?;
        d.set_item("overruns", got.overruns)?;
        d.set_item("closed_unavailable", got.closed_unavailable)?;
        Ok(d)
    }
}

/// The index of the interface this namespace routes `ip` through (`ip route get`); None
/// when the route names no interface; OSError when there is no route or `ip` is invalid.
#[pyfunction]
pub fn route_ifindex(py: Python<'_>, ip: &str) -> PyResult<Option<u32>> {
    let addr: std::net::IpAddr = ip.parse().map_err(|e| PyValueError::new_err(format!("{ip:?}: {e}")))?;
    py.detach(|| incast_monitor::route::output_ifindex(addr)).map_err(|e| PyOSError::new_err(e.to_string()))
}

/// The dict both samplers' `drain` return: equal-length lists per interval and the counts.
fn intervals_dict(py: Python<'_>, got: incast_monitor::sampler::Intervals) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("t_end_ns", got.t_end_ns)?;
    d.set_item("dt_ns", got.dt_ns)?;
    d.set_item("rx_bytes", got.rx_bytes)?;
    d.set_item("tx_bytes", got.tx_bytes)?;
    d.set_item("rx_packets", got.rx_packets)?;
    d.set_item("tx_packets", got.tx_packets)?;
    d.set_item("wraps", got.wraps)?;
    d.set_item("resets", got.resets)?;
    d.set_item("missed", got.missed)?;
    d.set_item("realtime", got.realtime)?;
    d.set_item("uncertain", got.uncertain)?;
    Ok(d)
}
