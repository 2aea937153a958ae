//! The server's request parser over a fuzzed peer: the input is a control byte (how the
//! bytes are cut into reads, EINTR, how the stream ends) and the bytes the peer sends
//! (support/stream_script.rs, `script_from_fuzz_bytes`). Fails on a panic, or where the
//! parser and the 24-byte-frame oracle disagree, a read makes no progress, or a wait
//! inside a header exceeds the header timeout.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/support/stream_script.rs"]
mod stream_script;

fuzz_target!(|data: &[u8]| {
    stream_script::check(&stream_script::script_from_fuzz_bytes(data), stream_script::SCRIPT_TIMEOUTS);
});
