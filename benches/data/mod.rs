//! Data shared by the benchmarks: a deterministic generator and W7's
//! records.

#![allow(dead_code)]

use muranopl::Value;

pub const NAMES: [&str; 8] = [
    "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi",
];

pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// W7's records: mostly valid, some with one field broken (as the
/// `contracts` dataset has).
pub fn contracts(n: usize) -> Vec<Value> {
    let mut r = Rng(7);
    let scopes = ["public", "cloud", "host", "internal"];
    (0..n)
        .map(|i| {
            let mut d = muranopl::runtime_dict();
            let port = 1 + r.below(65535) as i64;
            d.insert(
                Value::str("port"),
                if i % 17 == 0 {
                    Value::str("8080")
                } else {
                    Value::Int(port)
                },
            );
            d.insert(Value::str("scope"), Value::str(scopes[r.below(4) as usize]));
            d.insert(
                Value::str("protocol"),
                Value::str(if i % 23 == 0 { "ICMP" } else { "TCP" }),
            );
            d.insert(Value::str("name"), Value::str(NAMES[r.below(8) as usize]));
            let mut st = muranopl::runtime_dict();
            st.insert(Value::str("timeout"), Value::Int(r.below(100) as i64));
            st.insert(Value::str("retries"), Value::Int(r.below(5) as i64));
            st.insert(Value::str("label"), Value::str("x"));
            d.insert(Value::str("settings"), Value::dict(st));
            let ports = (0..1 + r.below(4))
                .map(|_| Value::Int(1 + r.below(65535) as i64))
                .collect();
            d.insert(Value::str("ports"), Value::list(ports));
            Value::dict(d)
        })
        .collect()
}
