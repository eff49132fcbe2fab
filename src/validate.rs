//! `muranopl validate`: batch contract validation of object models.
//!
//! Every model is loaded in its own MuranoPL execution in validation mode:
//! contract violations are collected (with the JSON path of the property
//! in the model and the YAML position of the contract) instead of stopping
//! the load. Models are spread over all cores.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use engine::{model, Catalog};

use crate::session::Catalogue;

/// The outcome of one model.
pub struct Report {
    /// The model file.
    pub file: PathBuf,
    /// Objects loaded.
    pub objects: usize,
    /// `path.property: message` lines.
    pub violations: Vec<String>,
    /// A load error that stopped validation.
    pub error: Option<String>,
    /// A streamed model's phases.
    pub phases: engine::stream::Phases,
}

impl Report {
    /// The report of a model that could not be validated.
    fn failed(file: &Path, error: String) -> Report {
        Report {
            file: file.to_path_buf(),
            objects: 0,
            violations: Vec::new(),
            error: Some(error),
            phases: Vec::new(),
        }
    }
}

fn validate_one(catalog: &Arc<Catalog>, file: &Path) -> Report {
    let mut rep = match std::fs::read_to_string(file) {
        Ok(text) => validate_text(catalog, &text),
        Err(e) => Report::failed(file, format!("cannot read: {e}")),
    };
    rep.file = file.to_path_buf();
    rep
}

/// Validates one object model (JSON text: `{"Objects": ...}` or a bare
/// object) against the classes of `catalog`, in an execution of its own.
/// The report's `file` is empty.
pub fn validate_text(catalog: &Arc<Catalog>, text: &str) -> Report {
    match runtime::json::from_tagged_str(text) {
        Ok(data) => report_of(model::validate(catalog, &data)),
        Err(e) => Report::failed(Path::new(""), e.message().to_string()),
    }
}

fn report_of(v: model::Validation) -> Report {
    Report {
        file: PathBuf::new(),
        objects: v.objects,
        violations: v
            .violations
            .into_iter()
            .map(|(path, prop, e)| format!("{path}.{prop}: {}", e.message()))
            .collect(),
        error: v.error.map(|e| format!("{}: {}", e.kind(), e.message())),
        phases: Vec::new(),
    }
}

/// The options of `muranopl validate`.
pub struct Options {
    /// Package directories or .zip files.
    pub packages: Vec<PathBuf>,
    /// Object model files.
    pub models: Vec<PathBuf>,
    /// Worker threads (default: all cores).
    pub jobs: Option<usize>,
    /// Package search path.
    pub libs: Vec<PathBuf>,
    /// Print counts and phase times to stderr.
    pub stats: bool,
    /// When contracts are compiled to machine code.
    pub jit: compiler::jit::Mode,
    /// The class configuration directory (see `read_class_configs`).
    pub class_configs: Option<PathBuf>,
}

/// Models at least this large are streamed: read once, checked on every
/// worker thread, never held whole (see [`engine::stream`]).
pub const STREAM_MIN_BYTES: u64 = 4 << 20;

/// Validates `models` against the classes of `packages`; prints a report
/// and returns the exit status (1 when anything is invalid).
pub fn run(o: Options) -> i32 {
    let Options {
        packages,
        models,
        jobs,
        libs,
        stats,
        jit,
        class_configs,
    } = o;
    let start = Instant::now();
    // The packages, with what they require from the search path, are
    // parsed once; every model gets its own execution.
    let loaded = crate::session::load_formats(&packages, &libs)
        .and_then(|f| Catalogue::from_formats(f, true, Vec::new(), class_configs.as_deref()));
    let catalogue = match loaded {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let catalog = catalogue.catalog();
    catalog.set_jit(jit);
    let loaded = start.elapsed().as_secs_f64();
    let jobs = jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let size = |m: &PathBuf| std::fs::metadata(m).map_or(0, |md| md.len());
    let (large, small): (Vec<usize>, Vec<usize>) =
        (0..models.len()).partition(|&i| size(&models[i]) >= STREAM_MIN_BYTES);
    let mut reports: Vec<Option<Report>> = (0..models.len()).map(|_| None).collect();
    // Small models: one per worker at a time.
    let smalls: Vec<&PathBuf> = small.iter().map(|&i| &models[i]).collect();
    for (i, r) in small.iter().zip(validate_many(catalog, &smalls, jobs)) {
        reports[*i] = Some(r);
    }
    // Large models: one at a time, each on every worker.
    let mut streamed = 0;
    for &i in &large {
        let (r, was_streamed) = validate_large(catalog, &models[i], jobs);
        streamed += usize::from(was_streamed);
        reports[i] = Some(r);
    }
    let (mut bad, mut objects, mut nviol) = (0usize, 0usize, 0usize);
    for r in reports.into_iter().flatten() {
        if stats && !r.phases.is_empty() {
            let phases: Vec<String> = r
                .phases
                .iter()
                .map(|(name, t)| format!("{name} {:.3}s", t.as_secs_f64()))
                .collect();
            eprintln!(
                "stats: {} streamed: {}",
                r.file.display(),
                phases.join(", ")
            );
        }
        objects += r.objects;
        let f = r.file.display();
        if let Some(e) = &r.error {
            println!("{f}: error: {e}");
            bad += 1;
        }
        for v in &r.violations {
            println!("{f}: {v}");
        }
        nviol += r.violations.len();
        if !r.violations.is_empty() && r.error.is_none() {
            bad += 1;
        }
    }
    let n = models.len();
    let secs = start.elapsed().as_secs_f64();
    if stats {
        eprintln!(
            "stats: packages {} loaded in {loaded:.3}s; classes compiled {} in {:.3}s; \
             models {n} ({streamed} streamed), objects {objects} validated in {:.3}s",
            catalogue.formats().len(),
            catalog.compiled(),
            catalog.compile_time().as_secs_f64(),
            secs - loaded,
        );
    }
    eprintln!(
        "validated {n} model(s), {objects} object(s) in {secs:.2}s ({:.0} objects/s, {jobs} thread(s)): {nviol} violation(s), {bad} invalid model(s)",
        objects as f64 / secs.max(1e-9)
    );
    i32::from(bad > 0)
}

/// A progress bar that shows itself once the work has taken a second.
fn progress_bar(len: u64, template: &str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(len),
        indicatif::ProgressDrawTarget::hidden(),
    );
    bar.set_style(
        indicatif::ProgressStyle::with_template(template)
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}

fn show_after_a_second(bar: &indicatif::ProgressBar, t0: Instant) {
    if t0.elapsed().as_secs_f64() > 1.0 && bar.is_hidden() {
        bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
    }
}

/// Validates models on `jobs` threads, one model per thread at a time;
/// the reports come in the order of `models`.
fn validate_many(catalog: &Arc<Catalog>, models: &[&PathBuf], jobs: usize) -> Vec<Report> {
    let n = models.len();
    let jobs = jobs.min(n.max(1));
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let bar = progress_bar(n as u64, "{elapsed_precise} [{bar:40}] {pos}/{len} models");
    let mut reports: Vec<Option<Report>> = (0..n).map(|_| None).collect();
    let results = std::sync::Mutex::new(&mut reports);
    let finished = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let t0 = Instant::now();
            while !finished.load(Ordering::Relaxed) {
                show_after_a_second(&bar, t0);
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        });
        let workers: Vec<_> = (0..jobs)
            .map(|_| {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let r = validate_big_stack(catalog, models[i]);
                    results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
                    bar.set_position(done.fetch_add(1, Ordering::Relaxed) as u64 + 1);
                })
            })
            .collect();
        for w in workers {
            let _ = w.join();
        }
        finished.store(true, Ordering::Relaxed);
    });
    bar.finish_and_clear();
    reports.into_iter().flatten().collect()
}

/// Validates one large model, streaming it when its classes allow (else
/// with the ordinary load); true when it was streamed.
fn validate_large(catalog: &Arc<Catalog>, file: &Path, jobs: usize) -> (Report, bool) {
    let failed = |e: std::io::Error| Report::failed(file, format!("cannot read: {e}"));
    let input = match std::fs::File::open(file) {
        Ok(f) => f,
        Err(e) => return (failed(e), false),
    };
    let len = input.metadata().map_or(0, |m| m.len());
    let bar = progress_bar(
        len,
        "{elapsed_precise} [{bar:40}] {bytes}/{total_bytes} {msg}",
    );
    let t0 = Instant::now();
    let progress = |bytes: u64, objects: u64| {
        show_after_a_second(&bar, t0);
        bar.set_position(bytes);
        bar.set_message(format!("{objects} objects"));
    };
    let opts = engine::stream::Options {
        jobs,
        ..Default::default()
    };
    let input = std::io::BufReader::with_capacity(1 << 20, input);
    let outcome = engine::stream::validate(catalog, input, &opts, &progress);
    bar.finish_and_clear();
    match outcome {
        engine::stream::Outcome::Done(v, phases) => {
            let mut rep = report_of(v);
            rep.phases = phases;
            rep.file = file.to_path_buf();
            (rep, true)
        }
        engine::stream::Outcome::Fallback(_) => (validate_big_stack(catalog, file), false),
    }
}

/// Runs `f` on a thread with a large stack (deeply nested models must not
/// overflow), or on this thread when no thread can be made; a panic in `f`
/// comes back as the error.
pub fn on_big_stack<T: Send>(f: impl Fn() -> T + Sync) -> std::thread::Result<T> {
    std::thread::scope(|s| {
        let spawned = std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn_scoped(s, &f);
        match spawned {
            Ok(h) => h.join(),
            Err(_) => Ok(f()),
        }
    })
}

fn validate_big_stack(catalog: &Arc<Catalog>, file: &Path) -> Report {
    on_big_stack(|| validate_one(catalog, file))
        .unwrap_or_else(|_| Report::failed(file, "internal error (panic)".into()))
}
