//! Reading an interface's counters from sysfs.
//!
//! `/sys/class/net/IF/statistics/*` shows the kernel's `rtnl_link_stats64`. The files are
//! opened once and re-read with `pread` at offset 0, which makes sysfs regenerate the value
//! (one ~1 us syscall per counter). How fresh the value is depends on the driver: veth and
//! loopback sum per-CPU counters at read time (exact per packet); many NIC drivers refresh
//! from hardware only every so often (e.g. once per second), which no poller can beat.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// The four counters read on every sample, in this order.
pub const COUNTERS: [&str; 4] = ["rx_bytes", "tx_bytes", "rx_packets", "tx_packets"];

/// Open counter files of one interface.
pub struct SysfsCounters {
    files: Vec<File>,
    iface: String,
    dir: PathBuf,
}

/// Why the counters of an interface cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceError {
    /// No such interface in this network namespace.
    NoSuchInterface(String),
    /// The file exists but cannot be opened or read.
    Unreadable { path: String, reason: String },
    /// The file does not hold a decimal counter.
    Garbled { path: String, text: String },
}

impl std::fmt::Display for SourceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SourceError::NoSuchInterface(i) => write!(
                f,
                "--iface: {i:?} is not allowed; expected an interface of this network namespace (see `ip link`)"
            ),
            SourceError::Unreadable { path, reason } => write!(f, "cannot read {path}: {reason}"),
            SourceError::Garbled { path, text } => write!(f, "{path} does not hold a counter: {text:?}"),
        }
    }
}

impl std::error::Error for SourceError {}

fn valid_iface_name(name: &str) -> bool {
    // IFNAMSIZ is 16 including the NUL; '/' or '..' would escape the sysfs directory
    !name.is_empty() && name.len() < 16 && !name.contains('/') && name != "." && name != ".."
        && !name.chars().any(|c| c.is_whitespace())
}

impl SysfsCounters {
    /// Open the counters of `iface` under `sysfs_root` (normally `/sys/class/net`).
    pub fn open_in(sysfs_root: &Path, iface: &str) -> Result<Self, SourceError> {
        if !valid_iface_name(iface) || !sysfs_root.join(iface).exists() {
            return Err(SourceError::NoSuchInterface(iface.to_string()));
        }
        let mut files = Vec::with_capacity(COUNTERS.len());
        for name in COUNTERS {
            let path: PathBuf = sysfs_root.join(iface).join("statistics").join(name);
            let file = File::open(&path).map_err(|e| SourceError::Unreadable {
                path: path.display().to_string(),
                reason: e.to_string(),
            })?;
            files.push(file);
        }
        let counters = SysfsCounters { files, iface: iface.to_string(), dir: sysfs_root.join(iface) };
        counters.read()?; // fail now, not in the polling thread
        Ok(counters)
    }

    /// Open the counters of `iface` in this network namespace.
    pub fn open(iface: &str) -> Result<Self, SourceError> {
        Self::open_in(Path::new("/sys/class/net"), iface)
    }

    /// Read all four counters (in the order of [`COUNTERS`]).
    pub fn read(&self) -> Result<[u64; 4], SourceError> {
        let mut out = [0u64; 4];
        let mut buf = [0u8; 32];
        for (i, file) in self.files.iter().enumerate() {
            let n = file.read_at(&mut buf, 0).map_err(|e| self.read_error(i, e))?;
            out[i] = parse_counter(&buf[..n]).ok_or_else(|| SourceError::Garbled {
                path: self.path(i),
                text: String::from_utf8_lossy(&buf[..n]).into_owned(),
            })?;
        }
        Ok(out)
    }

    fn path(&self, i: usize) -> String {
        format!("/sys/class/net/{}/statistics/{}", self.iface, COUNTERS[i])
    }

    fn read_error(&self, i: usize, e: io::Error) -> SourceError {
        // net-sysfs answers EINVAL for a device being unregistered (netstat_show checks
        // dev_isalive), ENODEV/ENOENT once it is gone
        let gone = matches!(e.raw_os_error(), Some(libc::ENODEV) | Some(libc::EINVAL) | Some(libc::ENOENT));
        if gone || !self.dir.exists() {
            SourceError::Unreadable { path: self.path(i), reason: "the interface disappeared".into() }
        } else {
            SourceError::Unreadable { path: self.path(i), reason: e.to_string() }
        }
    }
}

/// A decimal counter followed by an optional newline.
pub fn parse_counter(bytes: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(bytes).ok()?.trim_end();
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_counter_reads_decimal_with_newline() {
        assert_eq!(parse_counter(b"18446744073709551615\n"), Some(u64::MAX));
        assert_eq!(parse_counter(b"0\n"), Some(0));
    }

    #[test]
    fn parse_counter_refuses_garbage() {
        assert_eq!(parse_counter(b""), None);
        assert_eq!(parse_counter(b"-1\n"), None);
        assert_eq!(parse_counter(b"12 34"), None);
    }

    #[test]
    fn unknown_interface_is_reported_by_name() {
        let err = SysfsCounters::open("ilmon-nope0").err().unwrap();
        assert_eq!(err, SourceError::NoSuchInterface("ilmon-nope0".into()));
        assert!(err.to_string().contains("--iface"));
    }

    #[test]
    fn path_escapes_are_not_interfaces() {
        assert!(matches!(SysfsCounters::open("../../etc"), Err(SourceError::NoSuchInterface(_))));
    }

    #[test]
    fn counters_of_a_fake_sysfs_tree_are_read() {
        let root = std::env::temp_dir().join(format!("ilmon-sysfs-{}", std::process::id()));
        let stats = root.join("fake0").join("statistics");
        std::fs::create_dir_all(&stats).unwrap();
        for (i, name) in COUNTERS.iter().enumerate() {
            std::fs::write(stats.join(name), format!("{}\n", 10 + i)).unwrap();
        }
        let c = SysfsCounters::open_in(&root, "fake0").unwrap();
        assert_eq!(c.read().unwrap(), [10, 11, 12, 13]);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_missing_counter_file_is_reported_as_unreadable_with_its_path() {
        let root = std::env::temp_dir().join(format!("ilmon-sysfs-missing-{}", std::process::id()));
        let stats = root.join("fake1").join("statistics");
        std::fs::create_dir_all(&stats).unwrap();
        std::fs::write(stats.join("rx_bytes"), "1\n").unwrap();
        let err = SysfsCounters::open_in(&root, "fake1").err().unwrap();
        std::fs::remove_dir_all(&root).unwrap();
        match err {
            SourceError::Unreadable { path, .. } => assert!(path.ends_with("tx_bytes"), "{path}"),
            other => panic!("expected Unreadable, got {other:?}"),
        }
    }

    #[test]
    fn loopback_counters_are_readable() {
        // every Linux network namespace has lo
        let c = SysfsCounters::open("lo").unwrap();
        let a = c.read().unwrap();
        let b = c.read().unwrap();
        assert!(b[0] >= a[0]);
    }
}
