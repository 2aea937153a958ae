//! Files that appear whole or not at all: write a temporary file in the target's
//! directory, then rename it over the target (rename is atomic within a file system).

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Call `write` on a buffered temporary file next to `path`, then rename it to `path`.
/// On any error, or a panic in `write` (resumed once cleaned up), the temporary file is
/// removed and `path` is left as it was.
pub fn write_atomically<T>(path: &Path, write: impl FnOnce(&mut BufWriter<File>) -> io::Result<T>) -> io::Result<T> {
    let tmp = temp_path(path);
    let attempt = || {
        let file = File::create(&tmp)?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        let value = write(&mut w)?;
        w.flush()?;
        w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        fs::rename(&tmp, path)?;
        Ok(value)
    };
    // the writer holds nothing that a panic could leave half-changed: only the file removed
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(attempt)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => {
            let _ = fs::remove_file(&tmp);
            Err(e)
        }
        Err(panic) => {
            let _ = fs::remove_file(&tmp);
            std::panic::resume_unwind(panic)
        }
    }
}

/// A name no other writer uses: process id plus a per-process counter, so threads writing
/// the same target (a sweep listing one point twice) do not share a temporary file.
fn temp_path(path: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = format!(".{name}.incastlab-{}-{}.tmp", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(tmp),
        _ => PathBuf::from(tmp),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("incastlab-simio-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_failed_write_leaves_no_file_behind() {
        let d = scratch_dir("fail");
        let target = d.join("out.pcap");
        let r: io::Result<()> = write_atomically(&target, |w| {
            w.write_all(b"half")?;
            Err(io::Error::other("simulated failure"))
        });
        assert!(r.is_err());
        assert!(!target.exists());
        assert_eq!(fs::read_dir(&d).unwrap().count(), 0, "temporary file removed");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_panicking_write_leaves_no_file_behind() {
        let d = scratch_dir("panic");
        let target = d.join("out.pcap");
        let r = std::panic::catch_unwind(|| {
            let _ = write_atomically(&target, |w| -> io::Result<()> {
                w.write_all(b"half")?;
                panic!("simulated bug in a writer");
            });
        });
        assert!(r.is_err(), "the panic reaches the caller");
        assert_eq!(fs::read_dir(&d).unwrap().count(), 0, "temporary file removed");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn concurrent_writers_of_one_target_use_different_temporary_files() {
        let target = Path::new("/some/dir/out.pcap");
        let (a, b) = (temp_path(target), temp_path(target));
        assert_ne!(a, b);
        assert_eq!(a.parent(), target.parent(), "same directory, so the rename is atomic");
    }

    #[test]
    fn a_successful_write_replaces_the_target_whole() {
        let d = scratch_dir("ok");
        let target = d.join("out.csv");
        fs::write(&target, b"old").unwrap();
        write_atomically(&target, |w| w.write_all(b"new contents")).unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"new contents");
        assert_eq!(fs::read_dir(&d).unwrap().count(), 1);
        fs::remove_dir_all(&d).unwrap();
    }
}
