//! Shared by the tests: the catalogue of `examples/validate` and models
//! of its classes as JSON Lines (what `scripts/gen-validate-model N DIR
//! --jsonl FILES` writes).

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};

use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::SessionContext;
use muranopl::Catalogue;

pub fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/validate")
}

pub fn catalog() -> muranopl_datafusion::Catalog {
    muranopl_datafusion::Catalog::new(
        Catalogue::load(&[example()], &[], true).expect("examples/validate loads"),
    )
}

/// A local context with our functions and file tables.
pub fn context(partitions: usize) -> SessionContext {
    let cfg = datafusion::prelude::SessionConfig::new().with_target_partitions(partitions);
    let ctx = muranopl_datafusion::enable_model_files(SessionContext::new_with_config(cfg));
    muranopl_datafusion::register(&ctx, Some(catalog()));
    ctx
}

/// The rows of `sql` as a table, or the error's text.
pub async fn table(ctx: &SessionContext, sql: &str) -> Result<String, String> {
    let df = ctx.sql(sql).await.map_err(|e| e.to_string())?;
    let batches = df.collect().await.map_err(|e| e.to_string())?;
    Ok(pretty_format_batches(&batches)
        .map_err(|e| e.to_string())?
        .to_string())
}

/// The planted violations of [`write_models`]: (index, property).
pub fn planted(n: usize) -> Vec<(usize, &'static str)> {
    let mut p = vec![
        (n / 5, "port"),
        (2 * n / 5, "name"),
        (3 * n / 5, "settings"),
        (4 * n / 5, "port"),
        (n - 1, "tags"),
    ];
    p.sort();
    p
}

/// Writes `n` Server models, one per line, over `files` files in `dir`.
pub fn write_models(dir: &Path, n: usize, files: usize) {
    std::fs::create_dir_all(dir).unwrap();
    let planted = planted(n);
    let per = n.div_ceil(files);
    for k in 0..files {
        let f = std::fs::File::create(dir.join(format!("part-{k:03}.jsonl"))).unwrap();
        let mut w = std::io::BufWriter::new(f);
        for i in (k * per)..((k + 1) * per).min(n) {
            let bad = planted.iter().find(|p| p.0 == i).map(|p| p.1);
            let port = match (bad, i) {
                (Some("port"), i) if i == n / 5 => "70000".to_string(),
                (Some("port"), _) => "\"http\"".to_string(),
                _ => (1024 + i % 60000).to_string(),
            };
            let name = if bad == Some("name") {
                "null".to_string()
            } else {
                format!("\"server-{i}\"")
            };
            let tags = if bad == Some("tags") {
                "[null]".to_string()
            } else {
                format!("[\"t{}\"]", i % 7)
            };
            let settings = if bad == Some("settings") {
                "{\"timeout\":\"soon\"}".to_string()
            } else {
                format!("{{\"timeout\":{},\"label\":\"L{}\"}}", i % 90, i % 3)
            };
            writeln!(
                w,
                "{{\"?\":{{\"id\":\"srv{i:08}\",\"type\":\"com.example.Server\"}},\"name\":{name},\"port\":{port},\"tags\":{tags},\"enabled\":{},\"settings\":{settings}}}",
                i % 2 == 0
            )
            .unwrap();
        }
    }
}
