//! Criterion benchmarks for the YAQL workloads of `../shared/bench/workloads.json`
//! (W1 filter+map, W2 aggregate, W5 many small evaluations, W6 parsing and
//! compiling distinct expressions, W7 the contract-validation expression
//! per object). Parse, compile and evaluation are timed apart; each
//! evaluation group also times a hand-written Rust loop over the same
//! `Value`s (`baseline`), so results read as ratios measured in the same
//! run. W6 times each front-end phase apart (lex, parse, lower, emit) over
//! the same 1000 expressions. `load_people_100k` times loading the input
//! JSON text: straight to `Value`, through a `serde_json::Value`, and
//! serde_json's own `Value` alone as the floor.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use muranopl::{Engine, Options, Value};

#[path = "data/mod.rs"]
mod data;
use data::{contracts, Rng, NAMES};

const CITIES: [&str; 4] = ["paris", "oslo", "rome", "lima"];

fn people(n: usize) -> Value {
    let mut r = Rng(1);
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let mut d = muranopl::runtime_dict();
        d.insert(Value::str("id"), Value::Int(i as i64));
        d.insert(Value::str("name"), Value::str(NAMES[r.below(8) as usize]));
        d.insert(Value::str("age"), Value::Int(18 + r.below(63) as i64));
        d.insert(Value::str("city"), Value::str(CITIES[r.below(4) as usize]));
        d.insert(
            Value::str("price"),
            Value::Float((50 + r.below(49951)) as f64 / 100.0),
        );
        d.insert(Value::str("qty"), Value::Int(1 + r.below(20) as i64));
        out.push(Value::dict(d));
    }
    Value::list(out)
}

fn small(n: usize) -> Vec<Value> {
    let mut r = Rng(2);
    (0..n)
        .map(|_| {
            let mut d = muranopl::runtime_dict();
            d.insert(Value::str("x"), Value::Int(r.below(10) as i64));
            d.insert(Value::str("y"), Value::Int(r.below(10) as i64));
            d.insert(
                Value::str("name"),
                Value::str(["a", "b", "c", "d", "e", "f"][r.below(6) as usize]),
            );
            Value::dict(d)
        })
        .collect()
}

/// W7 by hand over the same values (the same checks, strict types).
fn w7_by_hand(v: &Value) -> bool {
    let Value::Dict(d) = v else { return false };
    let f = |k: &str| d.get(&Value::str(k));
    let port_ok = |p: Option<&Value>| matches!(p, Some(Value::Int(p)) if *p > 0 && *p < 65536);
    let s = |v: Option<&Value>, allowed: &[&str]| match v {
        Some(Value::Str(s)) => allowed.contains(&s.as_str()),
        _ => false,
    };
    port_ok(f("port"))
        && s(f("scope"), &["public", "cloud", "host", "internal"])
        && s(f("protocol"), &["TCP", "UDP"])
        && matches!(f("name"), Some(Value::Str(_)))
        && match f("settings") {
            Some(Value::Dict(st)) => {
                let g = |k: &str| st.get(&Value::str(k));
                matches!(g("timeout"), Some(Value::Int(t)) if *t >= 0)
                    && matches!(g("retries"), None | Some(Value::Int(_)))
                    && matches!(g("label"), None | Some(Value::Str(_)))
            }
            _ => false,
        }
        && match f("ports") {
            Some(Value::List(l)) => {
                (1..=8).contains(&l.len()) && l.iter().all(|p| port_ok(Some(p)))
            }
            _ => false,
        }
}

/// W6's expressions: the templates of `gen_data.py`'s `exprs`, filled in
/// from the same kind of generator (distinct expressions).
fn exprs(n: usize) -> Vec<String> {
    const FIELDS: [&str; 8] = [
        "age", "qty", "price", "id", "size", "port", "count", "level",
    ];
    const OPS: [&str; 6] = [">", "<", ">=", "<=", "=", "!="];
    const STRS: [&str; 5] = ["alpha", "beta", "gamma", "delta", "omega"];
    let mut r = Rng(3);
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(n);
    let mut i = 0;
    while out.len() < n {
        let f = FIELDS[r.below(8) as usize];
        let g = FIELDS[r.below(8) as usize];
        let op = OPS[r.below(6) as usize];
        let k = r.below(100_000);
        let m = 1 + r.below(50);
        let s = STRS[r.below(5) as usize];
        let e = match i % 10 {
            0 => format!("$.items.where($.{f} {op} {k}).select($.{g})"),
            1 => format!(
                "$.items.where($.{f} {op} {k} and $.name != '{s}{k}').select([$.id, $.{g} * {m}]).take({m})"
            ),
            2 => format!("$.{f} + $.{g} * {m} > {k} and $.name in list({s}, b{k}, c{m})"),
            3 => format!("$.items.select($.{f} * {m} + {k}).sum()"),
            4 => format!("$.items.groupBy($.{f}, $.{g}, $.len()).orderBy($[0]).take({m})"),
            5 => format!(
                "let(x => {k}, y => '{s}') -> $.items.where($.{f} > $x).select(concat($y, str($.{g})))"
            ),
            6 => format!(
                "$.items.select($.name.toUpper() + '-{s}-' + str($.{f} + {k})).where($.startsWith('A'))"
            ),
            7 => format!("switch($.{f} > {k} => '{s}', $.{g} < {m} => 'low', true => 'mid')"),
            8 => format!(
                "$.items.orderBy($.{f}).thenByDescending($.{g}).select($.id).first({k})"
            ),
            _ => format!("[$.{f}, $.{g}, {k}, '{s}'].where($ != null).len() + max($.{f}, {m})"),
        };
        i += 1;
        if seen.insert(e.clone()) {
            out.push(e);
        }
    }
    out
}

fn get<'a>(v: &'a Value, k: &str) -> &'a Value {
    match v {
        Value::Dict(d) => d.get(&Value::str(k)).unwrap(),
        _ => unreachable!(),
    }
}

/// W1 (filter and map), W2 (aggregate) and W5 (many small evaluations).
fn workloads(c: &mut Criterion) {
    let engine = Engine::new(Options::default());
    let data = people(10_000);
    let list = match &data {
        Value::List(l) => l.clone(),
        _ => unreachable!(),
    };

    let w1 = "$.where($.age > 30).select($.name)";
    let mut g = c.benchmark_group("W1_filter_map_10k");
    g.bench_function("parse", |b| {
        b.iter(|| compiler::yaql::parse(black_box(w1), Default::default()).unwrap())
    });
    g.bench_function("parse+compile", |b| {
        b.iter(|| engine.compile(black_box(w1)).unwrap())
    });
    let p1 = engine.compile(w1).unwrap();
    g.bench_function("eval", |b| {
        b.iter(|| engine.eval(&p1, data.clone()).unwrap())
    });
    g.bench_function("baseline", |b| {
        b.iter(|| {
            let out: Vec<Value> = list
                .iter()
                .filter(|p| matches!(get(p, "age"), Value::Int(a) if *a > 30))
                .map(|p| get(p, "name").clone())
                .collect();
            Value::list(out)
        })
    });
    g.finish();

    let w2 = "$.select($.price * $.qty).sum()";
    let mut g = c.benchmark_group("W2_aggregate_10k");
    let p2 = engine.compile(w2).unwrap();
    g.bench_function("eval", |b| {
        b.iter(|| engine.eval(&p2, data.clone()).unwrap())
    });
    g.bench_function("baseline", |b| {
        b.iter(|| {
            let mut s = 0.0;
            for p in list.iter() {
                if let (Value::Float(x), Value::Int(q)) = (get(p, "price"), get(p, "qty")) {
                    s += x * *q as f64;
                }
            }
            Value::Float(s)
        })
    });
    g.finish();

    let w5 = "$.x + $.y * 2 > 10 and $.name in list(a, b, c)";
    let items = small(10_000);
    let mut g = c.benchmark_group("W5_small_evals_10k");
    g.bench_function("parse", |b| {
        b.iter(|| compiler::yaql::parse(black_box(w5), Default::default()).unwrap())
    });
    g.bench_function("parse+compile", |b| {
        b.iter(|| engine.compile(black_box(w5)).unwrap())
    });
    let p5 = engine.compile(w5).unwrap();
    g.bench_function("eval", |b| {
        b.iter(|| {
            let mut n = 0;
            for it in &items {
                if engine.eval(&p5, it.clone()).unwrap().truthy() {
                    n += 1;
                }
            }
            n
        })
    });
    g.bench_function("baseline", |b| {
        b.iter(|| {
            let mut n = 0;
            for it in &items {
                if let (Value::Int(x), Value::Int(y), Value::Str(s)) =
                    (get(it, "x"), get(it, "y"), get(it, "name"))
                {
                    if x + y * 2 > 10 && ["a", "b", "c"].contains(&s.as_str()) {
                        n += 1;
                    }
                }
            }
            n
        })
    });
    g.finish();
}

/// W6 (parsing and lowering) and W7 (a contract as one expression).
fn parse_and_contracts(c: &mut Criterion) {
    let engine = Engine::new(Options::default());
    let w6 = exprs(1000);
    let reg = engine.env().registry();
    let lex = compiler::yaql::LexOptions::default();
    let asts: Vec<_> = w6
        .iter()
        .map(|e| compiler::yaql::parse(e, lex).unwrap())
        .collect();
    let irs: Vec<_> = asts
        .iter()
        .map(|a| std::sync::Arc::new(compiler::lower::Lowerer::new(reg).lower(a).unwrap()))
        .collect();
    let mut g = c.benchmark_group("W6_parse_1k_exprs");
    g.throughput(criterion::Throughput::Elements(w6.len() as u64));
    g.bench_function("lex", |b| {
        b.iter(|| {
            for e in &w6 {
                black_box(compiler::yaql::lexer::tokenize(e, lex).unwrap());
            }
        })
    });
    g.bench_function("parse", |b| {
        b.iter(|| {
            for e in &w6 {
                black_box(compiler::yaql::parse(e, lex).unwrap());
            }
        })
    });
    g.bench_function("lower", |b| {
        b.iter(|| {
            for a in &asts {
                black_box(compiler::lower::Lowerer::new(reg).lower(a).unwrap());
            }
        })
    });
    g.bench_function("emit", |b| {
        b.iter(|| {
            for ir in &irs {
                black_box(compiler::emit::Emitter::chunk(ir));
            }
        })
    });
    g.bench_function("parse+compile", |b| {
        b.iter(|| {
            for e in &w6 {
                black_box(engine.compile(e).unwrap());
            }
        })
    });
    g.finish();

    let w7 = "isInteger($.get(port)) and $.port > 0 and $.port < 65536 and \
              $.get(scope) in list(public, cloud, host, internal) and \
              $.get(protocol) in list(TCP, UDP) and isString($.get(name)) and \
              isDict($.get(settings)) and isInteger($.settings.get(timeout)) and \
              $.settings.timeout >= 0 and isInteger($.settings.get(retries, 0)) and \
              isString($.settings.get(label, '')) and isList($.get(ports)) and \
              len($.ports) >= 1 and len($.ports) <= 8 and \
              $.ports.all(isInteger($) and $ > 0 and $ < 65536)";
    let records = contracts(10_000);
    let p7 = engine.compile(w7).unwrap();
    let valid_by_hand = records.iter().filter(|r| w7_by_hand(r)).count();
    let valid = records
        .iter()
        .filter(|r| engine.eval(&p7, (*r).clone()).unwrap().truthy())
        .count();
    assert_eq!(valid, valid_by_hand, "W7 and its baseline disagree");
    let mut g = c.benchmark_group("W7_contract_10k");
    g.bench_function("eval", |b| {
        b.iter(|| {
            records
                .iter()
                .filter(|r| engine.eval(&p7, (*r).clone()).unwrap().truthy())
                .count()
        })
    });
    g.bench_function("baseline", |b| {
        b.iter(|| records.iter().filter(|r| w7_by_hand(r)).count())
    });
    g.finish();
}

/// Loading W1's input at 100k records (7 MB of JSON text).
fn load(c: &mut Criterion) {
    let text = runtime::json::to_tagged_string(&people(100_000));
    let mut g = c.benchmark_group("load_people_100k");
    g.sample_size(10);
    g.bench_function("tagged", |b| {
        b.iter(|| runtime::json::from_tagged_str(black_box(&text)).unwrap())
    });
    g.bench_function("via_serde_value", |b| {
        b.iter(|| {
            let j: serde_json::Value = serde_json::from_str(black_box(&text)).unwrap();
            runtime::json::from_tagged(&j).unwrap()
        })
    });
    g.bench_function("serde_value", |b| {
        b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(&text)).unwrap())
    });
    g.finish();
}

criterion_group!(benches, workloads, parse_and_contracts, load);
criterion_main!(benches);
