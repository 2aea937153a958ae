//! Read a file of `/proc/net` as seen from a named network namespace.
//!
//! TCP counters (`/proc/net/snmp`, `/proc/net/netstat`) are per network namespace. The
//! retransmission timeouts of an incast happen at the senders, which may live in another
//! namespace than the monitored interface; a short-lived thread enters the namespace
//! (`setns` affects only the calling thread) and reads `/proc/thread-self/net/FILE`.

use std::fs::File;
use std::os::fd::AsRawFd;

/// Contents of `/proc/thread-self/net/{file}` inside the namespace `/run/netns/{name}`.
pub fn read_proc_net_in(name: &str, file: &str) -> Result<String, String> {
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return Err(format!("--tcp-netns: {name:?} is not allowed; expected a name listed by `ip netns list`"));
    }
    if file.contains('/') {
        return Err(format!("{file:?} is not a /proc/net file"));
    }
    let ns_path = format!("/run/netns/{name}");
    let ns = File::open(&ns_path)
        .map_err(|e| format!("--tcp-netns: {name:?} is not allowed; expected a name listed by `ip netns list` ({e})"))?;
    let file = file.to_string();
    std::thread::spawn(move || {
        // SAFETY: a valid fd of a namespace file; CLONE_NEWNET checks its type.
        let rc = unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) };
        if rc != 0 {
            return Err(format!("cannot enter network namespace {ns_path}: {} (needs root)", std::io::Error::last_os_error()));
        }
        std::fs::read_to_string(format!("/proc/thread-self/net/{file}"))
            .map_err(|e| format!("cannot read /proc/net/{file} in {ns_path}: {e}"))
    })
    .join()
    .map_err(|_| "the namespace reader thread panicked".to_string())?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_namespace_names_the_option() {
        let e = read_proc_net_in("ilmon-no-such-ns", "snmp").unwrap_err();
        assert!(e.starts_with("--tcp-netns"), "{e}");
    }

    #[test]
    fn slashes_cannot_escape_the_netns_directory() {
        assert!(read_proc_net_in("../proc/1/ns/net", "snmp").is_err());
        assert!(read_proc_net_in("x", "../../etc/passwd").is_err());
    }
}
