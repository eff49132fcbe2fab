//! Contract validation throughput (issue 4): objects of a class with five
//! contracted properties loaded in validation mode, against a hand-written
//! Rust check of the same five rules over the same values (`baseline`).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use engine::{model, Catalog, Executor, Package};
use muranopl::{json, Value};

const FLEET: &str = include_str!("../examples/validate/Classes/Fleet.yaml");
const SERVER: &str = include_str!("../examples/validate/Classes/Server.yaml");

fn model_json(n: usize) -> String {
    let mut servers = Vec::with_capacity(n);
    for i in 0..n {
        servers.push(format!(
            r#"{{"?": {{"id": "srv{i:08}", "type": "com.example.Server"}}, "name": "server-{i}", "port": {}, "tags": ["t{}"], "enabled": {}, "settings": {{"timeout": {}, "label": "L{}"}}}}"#,
            1024 + i % 60000,
            i % 7,
            i % 2 == 0,
            i % 90,
            i % 3
        ));
    }
    format!(
        r#"{{"Objects": {{"?": {{"id": "fleet", "type": "com.example.Fleet"}}, "servers": [{}]}}}}"#,
        servers.join(", ")
    )
}

fn packages() -> Vec<Package> {
    vec![Package::new(
        "com.example.validate",
        "1.0.0",
        "1.4",
        &[
            ("Fleet.yaml".into(), FLEET.into()),
            ("Server.yaml".into(), SERVER.into()),
        ],
    )
    .unwrap()]
}

fn get<'a>(v: &'a Value, k: &str) -> Option<&'a Value> {
    match v {
        Value::Dict(d) => d.get(&Value::str(k)),
        _ => None,
    }
}

fn baseline_valid(s: &Value) -> bool {
    let name_ok = matches!(get(s, "name"), Some(Value::Str(_)));
    let port_ok = matches!(get(s, "port"), Some(Value::Int(p)) if *p > 0 && *p < 65536);
    let tags_ok = match get(s, "tags") {
        Some(Value::List(l)) => l.iter().all(|t| matches!(t, Value::Str(_))),
        _ => false,
    };
    let enabled_ok = matches!(get(s, "enabled"), Some(Value::Bool(_)) | None);
    let settings_ok = match get(s, "settings") {
        Some(st) => matches!(get(st, "timeout"), Some(Value::Int(_))),
        None => false,
    };
    name_ok && port_ok && tags_ok && enabled_ok && settings_ok
}

fn validate(c: &mut Criterion) {
    let n = 10_000;
    let data = json::from_tagged_str(&model_json(n)).unwrap();
    let mut g = c.benchmark_group("W7_contracts_10k_objects");
    g.throughput(Throughput::Elements(n as u64));
    g.sample_size(10);
    // Compiled once, as `validate` does; each iteration is one execution.
    let catalog = Catalog::new(packages());
    g.bench_function("load_and_validate", |b| {
        b.iter(|| {
            let ex = Executor::with_catalog(catalog.clone());
            ex.collect_violations();
            model::load_model(&ex, &data).unwrap();
            assert!(ex.take_violations().is_empty());
        })
    });
    let servers = get(get(&data, "Objects").unwrap(), "servers")
        .unwrap()
        .clone();
    g.bench_function("baseline", |b| {
        b.iter(|| match &servers {
            Value::List(l) => l.iter().filter(|s| baseline_valid(s)).count(),
            _ => 0,
        })
    });
    g.finish();
}

criterion_group!(benches, validate);
criterion_main!(benches);
