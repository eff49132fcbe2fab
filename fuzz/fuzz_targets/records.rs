//! The bounded readers of untrusted input (`yaql --jsonl`/`--seq`, the
//! harness loops, `validate -`): any bytes, split into records by each
//! separator and as a whole input, under a small cap. No record may pass
//! the cap, a cut record must not parse as JSON, nothing may panic, and
//! the harness's request lines must match the records they came from.
#![no_main]

use libfuzzer_sys::fuzz_target;
use muranopl_cli::records::{Records, Stop};

/// A cap small enough for inputs to pass it.
const MAX: usize = 64;

fuzz_target!(|data: &[u8]| {
    for sep in [Some(b'\n'), Some(0x1e), None] {
        let mut count = 0;
        for r in Records::new(data, sep, Some(MAX)) {
            match r {
                Ok(rec) => {
                    assert!(rec.bytes.len() <= MAX, "a record past the cap");
                    if rec.cut {
                        let parsed = std::str::from_utf8(&rec.bytes)
                            .ok()
                            .and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok());
                        assert!(parsed.is_none(), "a cut record parsed");
                    }
                }
                Err(Stop::TooLong(max)) => assert_eq!(max, MAX),
                Err(Stop::Io(e)) => panic!("reading a slice failed: {e}"),
            }
            count += 1;
            assert!(count <= data.len() + 1, "more records than bytes");
        }
    }
    let mut requests = muranopl_cli::harness::requests(data, Some(MAX));
    for r in requests.by_ref() {
        if let Ok(line) = r {
            assert!(line.len() <= MAX && !line.trim().is_empty());
        }
    }
    let _ = requests.stopped();
});
