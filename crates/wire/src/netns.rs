//! Create sockets inside a named network namespace.
//!
//! A socket belongs to the namespace it was created in, for its whole life, whichever
//! thread later uses it. So one process can serve N server namespaces and read from a
//! client namespace: each socket is created on a short-lived helper thread that first
//! moves itself (only itself: `setns` is per thread) into the namespace.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

/// Run `f` on a fresh thread that has joined the network namespace at `path`
/// (e.g. `/var/run/netns/iltb-s1`), or on a fresh thread in our own namespace if
/// `path` is `None`.
pub fn run_in<T: Send + 'static>(
    path: Option<&Path>,
    f: impl FnOnce() -> io::Result<T> + Send + 'static,
) -> io::Result<T> {
    let ns = match path {
        Some(p) => Some(File::open(p).map_err(|e| io::Error::new(e.kind(), format!("network namespace {}: {e}", p.display())))?),
        None => None,
    };
    std::thread::Builder::new()
        .name("netns".into())
        .spawn(move || {
            if let Some(ns) = ns {
                // SAFETY: a valid namespace fd; affects only this helper thread.
                if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                    let e = io::Error::last_os_error();
                    return Err(io::Error::new(e.kind(), format!("setns into a network namespace: {e} (needs root)")));
                }
            }
            f()
        })?
        .join()
        .map_err(|_| io::Error::other("namespace helper thread panicked"))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_namespace_the_closure_runs_and_returns() {
        assert_eq!(run_in(None, || Ok(41 + 1)).unwrap(), 42);
    }

    #[test]
    fn a_missing_namespace_is_an_error_naming_it() {
        let e = run_in(Some(Path::new("/nonexistent/ns")), || Ok(())).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/ns"), "{e}");
    }
}
