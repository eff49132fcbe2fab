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

use engine::Catalog;

use muranopl::report::report_of;
use muranopl::{on_big_stack, validate_text, Report};

use crate::records;
use muranopl::session::Catalogue;

fn validate_one(catalog: &Arc<Catalog>, file: &Path, max: Option<usize>) -> Report {
    let mut rep = match records::read_model(file, max) {
        Ok(text) => validate_text(catalog, &text),
        Err(e) => Report::failed(file, e),
    };
    rep.file = file.to_path_buf();
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
    /// Print no summary line.
    pub quiet: bool,
    /// When contracts are compiled to machine code.
    pub jit: compiler::jit::Mode,
    /// The class configuration directory (see `read_class_configs`).
    pub class_configs: Option<PathBuf>,
    /// Print one JSON document instead of lines.
    pub json: bool,
    /// The largest model read from standard input or another stream, in
    /// bytes (`--max-record`; regular files are read as their size says).
    pub max_record: Option<usize>,
}

/// Models at least this large are streamed: read once, checked on every
/// worker thread, never held whole (see [`engine::stream`]).
pub const STREAM_MIN_BYTES: u64 = 4 << 20;

/// Validates `models` against the classes of `packages`; prints a report
/// and returns the exit status: 1 when a model is invalid, 2 when one
/// cannot be read or is not JSON.
pub fn run(o: Options) -> i32 {
    let Options {
        packages,
        models,
        jobs,
        libs,
        stats,
        quiet,
        jit,
        class_configs,
        json,
        max_record,
    } = o;
    let start = Instant::now();
    // The packages, with what they require from the search path, are
    // parsed once; every model gets its own execution.
    let loaded = muranopl::session::load_formats(&packages, &libs)
        .and_then(|f| Catalogue::from_formats(f, true, Vec::new(), class_configs.as_deref()));
    let catalogue = match loaded {
        Ok(c) => c,
        Err(e) => {
            eprintln!(
                "error: {}",
                runtime::pyrepr::escape_controls(&e.to_string(), true)
            );
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
    let stdin = |m: &PathBuf| m.as_os_str() == "-";
    let (large, small): (Vec<usize>, Vec<usize>) = (0..models.len())
        .filter(|&i| !stdin(&models[i]))
        .partition(|&i| size(&models[i]) >= STREAM_MIN_BYTES);
    let mut reports: Vec<Option<Report>> = (0..models.len()).map(|_| None).collect();
    // Standard input (`-`), read once (see `--max-record`).
    if let Some(i) = models.iter().position(stdin) {
        reports[i] = Some(validate_stdin(catalog, max_record));
    }
    // Small models: one per worker at a time.
    let smalls: Vec<&PathBuf> = small.iter().map(|&i| &models[i]).collect();
    for (i, r) in small
        .iter()
        .zip(validate_many(catalog, &smalls, jobs, max_record))
    {
        reports[*i] = Some(r);
    }
    // Large models: one at a time, each on every worker.
    let mut streamed = 0;
    for &i in &large {
        let (r, was_streamed) = validate_large(catalog, &models[i], jobs);
        streamed += usize::from(was_streamed);
        reports[i] = Some(r);
    }
    let reports: Vec<Report> = reports.into_iter().flatten().collect();
    if stats {
        print_phases(&reports);
    }
    let objects: usize = reports.iter().map(|r| r.objects).sum();
    let nviol: usize = reports.iter().map(|r| r.violations.len()).sum();
    let unreadable = reports.iter().filter(|r| r.unreadable).count();
    let bad = reports
        .iter()
        .filter(|r| !r.unreadable && (r.error.is_some() || !r.violations.is_empty()))
        .count();
    if json {
        print_json(&reports);
    } else {
        print_lines(&reports);
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
    if !quiet {
        eprintln!(
            "validated {n} model(s), {objects} object(s) in {secs:.2}s ({:.0} objects/s, {jobs} thread(s)): {nviol} violation(s), {bad} invalid model(s){}",
            objects as f64 / secs.max(1e-9),
            match unreadable {
                0 => String::new(),
                k => format!(", {k} that cannot be read"),
            }
        );
    }
    if reports.iter().any(|r| r.unreadable) {
        crate::args::exit::USAGE
    } else if bad > 0 {
        crate::args::exit::FAILED
    } else {
        crate::args::exit::OK
    }
}

/// Standard input's model (`-`), validated on a large stack.
fn validate_stdin(catalog: &Arc<Catalog>, max: Option<usize>) -> Report {
    let file = Path::new("-");
    let text = match records::read_model(file, max) {
        Ok(text) => text,
        Err(e) => return Report::failed(file, e),
    };
    let mut rep =
        on_big_stack(|| validate_text(catalog, &text)).unwrap_or_else(|_| Report::panicked(file));
    rep.file = file.to_path_buf();
    rep
}

fn print_phases(reports: &[Report]) {
    for r in reports.iter().filter(|r| !r.phases.is_empty()) {
        let phases: Vec<String> = r
            .phases
            .iter()
            .map(|(name, t)| format!("{name} {:.3}s", t.as_secs_f64()))
            .collect();
        eprintln!(
            "stats: {} streamed: {}; {} of {} objects read in place",
            safe(&r.file.display().to_string()),
            phases.join(", "),
            r.in_place,
            r.objects
        );
    }
}

/// The largest model file read again to find where violations are.
const MAX_LOCATE: u64 = 64 << 20;

/// The line and column (1-based, in characters) of each violation's value
/// in its model file, when the file can be read again: a streamed model's
/// from where the stream says each object's text is, another's when it is
/// not huge.
fn positions(r: &Report) -> Vec<Option<(usize, usize)>> {
    let none = || vec![None; r.violations.len()];
    if r.violations.is_empty() || r.file.as_os_str() == "-" {
        return none();
    }
    if !r.places.is_empty() {
        return streamed_positions(r).unwrap_or_else(|_| none());
    }
    let small = std::fs::metadata(&r.file).is_ok_and(|m| m.len() <= MAX_LOCATE);
    let Some(text) = small
        .then(|| std::fs::read_to_string(&r.file).ok())
        .flatten()
    else {
        return none();
    };
    let paths: Vec<String> = r
        .violations
        .iter()
        .map(|v| format!("{}.{}", v.path, v.property))
        .collect();
    let wanted: Vec<&str> = paths.iter().map(String::as_str).collect();
    let found = crate::jsonpos::locate(&text, &wanted);
    paths
        .iter()
        .map(|p| found.get(p).map(|&at| crate::diag::line_col(&text, at)))
        .collect()
}

/// The most of a model read again to find a value in the piece of text
/// that holds its object (looked at from 4 KiB up, as far as needed), and the
/// most read again for all the violations of one model: past it, the rest
/// are reported without a position.
const MAX_PIECE: u64 = 4 << 20;
const MAX_REREAD: u64 = 256 << 20;

/// [`positions`] of a streamed model: the pieces that hold violating
/// objects are read again (in stretches of at least 1 MiB, so that pieces
/// close together cost one read; within a piece, as little as finds the
/// values), then lines are counted in one pass over the file.
fn streamed_positions(r: &Report) -> std::io::Result<Vec<Option<(usize, usize)>>> {
    use std::io::{Read, Seek};
    // The wanted path of each violation, under the piece that holds it.
    let mut by_piece: std::collections::BTreeMap<u64, Vec<(usize, String)>> = Default::default();
    for (i, v) in r.violations.iter().enumerate() {
        let key = (v.path.clone(), v.property.clone());
        let Some((at, piece)) = r.places.get(&key) else {
            continue;
        };
        if let Some(rest) = v.path.strip_prefix(piece.as_str()) {
            let want = format!("${rest}.{}", v.property);
            by_piece.entry(*at).or_default().push((i, want));
        }
    }
    let mut file = std::fs::File::open(&r.file)?;
    let mut offsets = vec![None; r.violations.len()];
    let mut budget = MAX_REREAD;
    // The last stretch read (its offset, its bytes, whether it reached the
    // end): pieces close together are found in one read.
    let mut read: (u64, Vec<u8>, bool) = (0, Vec::new(), false);
    for (at, wanted) in by_piece {
        let paths: Vec<&str> = wanted.iter().map(|(_, w)| w.as_str()).collect();
        let mut window: u64 = 4 << 10;
        loop {
            let (start, buf, end) = &read;
            let covered = at >= *start && (at + window <= start + buf.len() as u64 || *end);
            if !covered {
                if budget == 0 {
                    break;
                }
                let take = window.max(1 << 20).min(budget);
                file.seek(std::io::SeekFrom::Start(at))?;
                let mut buf = Vec::new();
                (&mut file).take(take).read_to_end(&mut buf)?;
                budget -= buf.len() as u64;
                let end = (buf.len() as u64) < take;
                read = (at, buf, end);
            }
            let (start, buf, end) = &read;
            let from = (at - start) as usize;
            let to = (from as u64 + window).min(buf.len() as u64) as usize;
            let text = String::from_utf8_lossy(&buf[from..to]);
            let found = crate::jsonpos::locate_in_first(&text, &paths);
            for (i, w) in &wanted {
                offsets[*i] = found.get(w).map(|&rel| at + rel as u64);
            }
            // Look further only when the window cut the piece short.
            if found.len() == paths.len() || (*end && to == buf.len()) || window >= MAX_PIECE {
                break;
            }
            window *= 16;
        }
    }
    file.seek(std::io::SeekFrom::Start(0))?;
    line_cols(file, &offsets)
}

/// The line and column (1-based; the column in characters) of each of
/// `offsets` in the text `input` reads, in one pass.
fn line_cols(
    input: impl std::io::Read,
    offsets: &[Option<u64>],
) -> std::io::Result<Vec<Option<(usize, usize)>>> {
    let mut order: Vec<usize> = (0..offsets.len())
        .filter(|&i| offsets[i].is_some())
        .collect();
    order.sort_by_key(|&i| offsets[i]);
    let mut out = vec![None; offsets.len()];
    let mut next = order.into_iter().peekable();
    let (mut line, mut col, mut pos) = (1usize, 1usize, 0u64);
    let mut input = std::io::BufReader::with_capacity(1 << 20, input);
    // Counts over a stretch of text: whole-buffer counts vectorize.
    let advance = |seg: &[u8], line: &mut usize, col: &mut usize| match memchr::memrchr(b'\n', seg)
    {
        Some(last) => {
            *line += memchr::memchr_iter(b'\n', seg).count();
            *col = 1 + chars(&seg[last + 1..]);
        }
        None => *col += chars(seg),
    };
    loop {
        let buf = std::io::BufRead::fill_buf(&mut input)?;
        if buf.is_empty() || next.peek().is_none() {
            break;
        }
        let len = buf.len();
        let mut from = 0;
        while let Some(&i) = next.peek() {
            let Some(at) = offsets[i].filter(|&o| o < pos + len as u64) else {
                break;
            };
            let to = (at - pos) as usize;
            advance(&buf[from..to], &mut line, &mut col);
            from = to;
            out[i] = Some((line, col));
            next.next();
        }
        advance(&buf[from..], &mut line, &mut col);
        pos += len as u64;
        std::io::BufRead::consume(&mut input, len);
    }
    Ok(out)
}

/// The characters UTF-8 text `s` holds: its bytes but the continuation
/// bytes (`10xxxxxx`), counted eight at a time.
fn chars(s: &[u8]) -> usize {
    const LOW: u64 = 0x0101_0101_0101_0101;
    let words = s.chunks_exact(8);
    let tail = words
        .remainder()
        .iter()
        .filter(|&&b| b & 0xC0 == 0x80)
        .count();
    let continuation: usize = words
        .map(|w| {
            let w = u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
            (((w >> 7) & !(w >> 6)) & LOW).count_ones() as usize
        })
        .sum();
    s.len() - continuation - tail
}

/// `s` safe to print on a terminal, on one line: control characters
/// (and line breaks) escaped as Python's `repr` escapes them. Model
/// values, ids, type names, file names and YAQL text are untrusted.
fn safe(s: &str) -> std::borrow::Cow<'_, str> {
    runtime::pyrepr::escape_controls(s, false)
}

/// `FILE:LINE:COL: path.property: message` (`FILE:` alone when the
/// position is unknown) and `FILE: error: ...` lines, their untrusted
/// text escaped (see [`safe`]).
fn print_lines(reports: &[Report]) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    for r in reports {
        let f = r.file.display().to_string();
        let f = safe(&f);
        if let Some(e) = &r.error {
            let _ = writeln!(out, "{f}: error: {}", safe(e));
        }
        for (v, at) in r.violations.iter().zip(positions(r)) {
            let v = safe(&v.to_string()).into_owned();
            let _ = match at {
                Some((line, col)) => writeln!(out, "{f}:{line}:{col}: {v}"),
                None => writeln!(out, "{f}: {v}"),
            };
        }
    }
}

/// One JSON document: `{"models": [{"file", "valid", "objects", "error",
/// "violations": [{"path", "property", "message", "line", "col"}]}],
/// "objects",
/// "violations", "invalid"}`; a violation's path is the property's
/// (`$.Objects.servers[9].port`).
fn print_json(reports: &[Report]) {
    let models: Vec<serde_json::Value> = reports
        .iter()
        .map(|r| {
            serde_json::json!({
                "file": r.file.display().to_string(),
                "valid": r.error.is_none() && r.violations.is_empty(),
                "objects": r.objects,
                "error": r.error,
                "violations": r.violations.iter().zip(positions(r)).map(|(v, at)| serde_json::json!({
                    "path": format!("{}.{}", v.path, v.property),
                    "property": v.property,
                    "message": v.message,
                    "line": at.map(|p| p.0),
                    "col": at.map(|p| p.1),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let doc = serde_json::json!({
        "models": models,
        "objects": reports.iter().map(|r| r.objects).sum::<usize>(),
        "violations": reports.iter().map(|r| r.violations.len()).sum::<usize>(),
        "invalid": reports.iter().filter(|r| r.error.is_some() || !r.violations.is_empty()).count(),
    });
    println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
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

/// `N objects (R/s)` since `t0`.
fn objects_rate(objects: u64, t0: Instant) -> String {
    let rate = objects as f64 / t0.elapsed().as_secs_f64().max(1e-3);
    format!("{objects} objects ({rate:.0}/s)")
}

fn show_after_a_second(bar: &indicatif::ProgressBar, t0: Instant) {
    if t0.elapsed().as_secs_f64() > 1.0 && bar.is_hidden() {
        bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
    }
}

/// Validates models on `jobs` threads, one model per thread at a time;
/// the reports come in the order of `models`.
fn validate_many(
    catalog: &Arc<Catalog>,
    models: &[&PathBuf],
    jobs: usize,
    max: Option<usize>,
) -> Vec<Report> {
    let n = models.len();
    let jobs = jobs.min(n.max(1));
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let objects = AtomicUsize::new(0);
    let bar = progress_bar(
        n as u64,
        "{elapsed_precise} [{bar:40}] {pos}/{len} models, {msg}",
    );
    let mut reports: Vec<Option<Report>> = (0..n).map(|_| None).collect();
    let results = std::sync::Mutex::new(&mut reports);
    let finished = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let t0 = Instant::now();
            while !finished.load(Ordering::Relaxed) {
                show_after_a_second(&bar, t0);
                bar.set_message(objects_rate(objects.load(Ordering::Relaxed) as u64, t0));
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
                    let r = validate_big_stack(catalog, models[i], max);
                    objects.fetch_add(r.objects, Ordering::Relaxed);
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
    if let Some(e) = records::not_json_from_the_start(file) {
        return (Report::failed(file, e), false);
    }
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
        bar.set_message(objects_rate(objects, t0));
    };
    let opts = engine::stream::Options {
        jobs,
        ..Default::default()
    };
    let input = std::io::BufReader::with_capacity(1 << 20, input);
    let outcome = engine::stream::validate(catalog, input, &opts, &progress);
    bar.finish_and_clear();
    match outcome {
        engine::stream::Outcome::Done(v, stats) => {
            let mut rep = report_of(v);
            rep.phases = stats.phases;
            rep.in_place = stats.in_place;
            rep.file = file.to_path_buf();
            (rep, true)
        }
        engine::stream::Outcome::Fallback(_) => (validate_big_stack(catalog, file, None), false),
    }
}

fn validate_big_stack(catalog: &Arc<Catalog>, file: &Path, max: Option<usize>) -> Report {
    on_big_stack(|| validate_one(catalog, file, max)).unwrap_or_else(|_| Report::panicked(file))
}
