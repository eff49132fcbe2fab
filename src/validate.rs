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
}

fn validate_one(catalog: &Arc<Catalog>, file: &Path) -> Report {
    let mut rep = match std::fs::read_to_string(file) {
        Ok(text) => validate_text(catalog, &text),
        Err(e) => Report {
            file: PathBuf::new(),
            objects: 0,
            violations: Vec::new(),
            error: Some(format!("cannot read: {e}")),
        },
    };
    rep.file = file.to_path_buf();
    rep
}

/// Validates one object model (JSON text: `{"Objects": ...}` or a bare
/// object) against the classes of `catalog`, in an execution of its own.
/// The report's `file` is empty.
pub fn validate_text(catalog: &Arc<Catalog>, text: &str) -> Report {
    let mut rep = Report {
        file: PathBuf::new(),
        objects: 0,
        violations: Vec::new(),
        error: None,
    };
    let data = match runtime::json::from_tagged_str(text) {
        Ok(d) => d,
        Err(e) => {
            rep.error = Some(e.message().to_string());
            return rep;
        }
    };
    let v = model::validate(catalog, &data);
    rep.error = v.error.map(|e| format!("{}: {}", e.kind(), e.message()));
    rep.objects = v.objects;
    rep.violations = v
        .violations
        .into_iter()
        .map(|(path, prop, e)| format!("{path}.{prop}: {}", e.message()))
        .collect();
    rep
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
}

/// Validates `models` against the classes of `packages`; prints a report
/// and returns the exit status (1 when anything is invalid).
pub fn run(o: Options) -> i32 {
    let Options {
        packages,
        models,
        jobs,
        libs,
        stats,
    } = o;
    let start = Instant::now();
    // The packages, with what they require from the search path, are
    // parsed once; every model gets its own execution.
    let catalogue = match Catalogue::load(&packages, &libs, true) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let catalog = catalogue.catalog();
    let loaded = start.elapsed().as_secs_f64();
    let n = models.len();
    let jobs = jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1)
        .min(n.max(1));
    let next = AtomicUsize::new(0);
    let done = Arc::new(AtomicUsize::new(0));
    let bar = indicatif::ProgressBar::new(n as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} models")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    // Only shown on work longer than a second.
    bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    let mut reports: Vec<Option<Report>> = (0..n).map(|_| None).collect();
    let results = std::sync::Mutex::new(&mut reports);
    let finished = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        // The bar appears once the work has taken a second, and keeps
        // ticking while one large model loads.
        s.spawn(|| {
            let t0 = Instant::now();
            while !finished.load(Ordering::Relaxed) {
                if t0.elapsed().as_secs_f64() > 1.0 && bar.is_hidden() {
                    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                    bar.enable_steady_tick(std::time::Duration::from_millis(200));
                }
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
                    let r = validate_big_stack(catalog, &models[i]);
                    results.lock().unwrap()[i] = Some(r);
                    done.fetch_add(1, Ordering::Relaxed);
                    bar.set_position(done.load(Ordering::Relaxed) as u64);
                })
            })
            .collect();
        for w in workers {
            let _ = w.join();
        }
        finished.store(true, Ordering::Relaxed);
    });
    bar.finish_and_clear();
    let mut bad = 0usize;
    let mut objects = 0usize;
    let mut nviol = 0usize;
    for r in reports.into_iter().flatten() {
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
    let secs = start.elapsed().as_secs_f64();
    if stats {
        eprintln!(
            "stats: packages {} loaded in {loaded:.3}s; classes compiled {} in {:.3}s; \
             models {n}, objects {objects} validated in {:.3}s",
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
    on_big_stack(|| validate_one(catalog, file)).unwrap_or_else(|_| Report {
        file: file.to_path_buf(),
        objects: 0,
        violations: Vec::new(),
        error: Some("internal error (panic)".into()),
    })
}
