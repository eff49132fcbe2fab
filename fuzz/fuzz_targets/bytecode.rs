//! Bytecode: any bytes decoded as instructions; every instruction that
//! decodes encodes back to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vm::bc::ops::{decode_all, Op};

fuzz_target!(|data: &[u8]| {
    let mut pc = 0;
    while let Some((op, next)) = Op::decode(data, pc) {
        let mut out = Vec::new();
        op.encode(&mut out);
        assert_eq!(out, data[pc..next], "{op:?} round trip");
        pc = next;
    }
    let _ = decode_all(data);
});
