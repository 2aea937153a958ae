//! Replays every input the fuzzer kept (fuzz/corpus/request_stream, minimized) and every
//! hand-written seed (fuzz/seeds/request_stream) through the request parser on stable
//! Rust, with the fuzz target's own check: CI keeps what the nightly fuzzer found.

mod support;

use std::path::Path;
use support::stream_script::{check, script_from_fuzz_bytes, SCRIPT_TIMEOUTS};

fn replay(dir: &str) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut n = 0;
    for entry in entries {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let script = script_from_fuzz_bytes(&data);
        if let Err(e) = std::panic::catch_unwind(|| check(&script, SCRIPT_TIMEOUTS)) {
            panic!("{}: {:?}", path.display(), e.downcast_ref::<String>());
        }
        n += 1;
    }
    n
}

#[test]
fn every_corpus_input_parses_as_the_oracle_says() {
    // 100 files after `cargo fuzz cmin` (and one regression input); far fewer would mean
    // the corpus went missing.
    let n = replay("fuzz/corpus/request_stream");
    assert!(n >= 90, "only {n} corpus files");
}

#[test]
fn every_seed_parses_as_the_oracle_says() {
    let n = replay("fuzz/seeds/request_stream");
    assert!(n >= 100, "only {n} seed files");
}
