//! `muranopl batch` (the `muranopl-batch` binary): SQL over object models
//! with our functions, on a local DataFusion context (every core) or on a
//! Ballista cluster; and the cluster's processes and artifact.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Instant;

use ballista::prelude::SessionContextExt;
use clap::{Args, Parser, Subcommand, ValueEnum};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::execution::SendableRecordBatchStream;
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::prelude::{SessionConfig, SessionContext};
use futures::StreamExt;
use muranopl::Catalogue;

use crate::cluster::{run_executor, run_scheduler, ExecutorOptions};
use crate::Catalog;

/// SQL over object models with YAQL and contract validation.
#[derive(Parser)]
#[command(
    name = "muranopl batch",
    bin_name = "muranopl batch",
    version,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    cmd: Option<Cmd>,
    #[command(flatten)]
    query: Query,
}

#[derive(Subcommand)]
enum Cmd {
    /// Pack packages (and what they require) into a catalogue artifact
    /// (.mcat) for a cluster's processes.
    Pack {
        /// Package directories or .zip files.
        #[arg(short = 'p', long = "package", required = true)]
        packages: Vec<PathBuf>,
        /// Package search path (repeatable).
        #[arg(short = 'L', long = "library")]
        libs: Vec<PathBuf>,
        /// The artifact to write.
        #[arg(short, long)]
        out: PathBuf,
    },
    /// Run a Ballista scheduler that knows our functions.
    Scheduler {
        /// The address to listen on.
        #[arg(long, default_value = "127.0.0.1:50050")]
        bind: SocketAddr,
        #[command(flatten)]
        catalog: CatalogArgs,
    },
    /// Run a Ballista executor that knows our functions.
    Executor {
        /// The scheduler to join.
        #[arg(long, default_value = "127.0.0.1:50050")]
        scheduler: SocketAddr,
        /// The host to bind and advertise.
        #[arg(long, default_value = "127.0.0.1")]
        host: String,
        /// The Arrow Flight port (shuffles, results).
        #[arg(long, default_value_t = 50051)]
        port: u16,
        /// The port the scheduler pushes tasks to.
        #[arg(long, default_value_t = 50052)]
        grpc_port: u16,
        /// Tasks at once (default: one per core).
        #[arg(long, default_value_t = 0)]
        tasks: usize,
        /// Shuffle files and unpacked catalogues (default: a new temporary
        /// directory).
        #[arg(long)]
        work_dir: Option<PathBuf>,
        #[command(flatten)]
        catalog: CatalogArgs,
    },
}

/// The catalogue `murano_validate` checks against.
#[derive(Args, Clone, Default)]
pub struct CatalogArgs {
    /// A catalogue artifact (.mcat), package directory or .zip; repeatable.
    #[arg(long = "catalog")]
    pub catalog: Vec<PathBuf>,
    /// Package search path for the packages' `Require` (repeatable).
    #[arg(short = 'L', long = "library")]
    pub libs: Vec<PathBuf>,
}

impl CatalogArgs {
    /// The catalogue, if any was named; artifacts unpack under `cache`.
    pub fn load(&self, cache: &Path) -> Result<Option<Catalog>, String> {
        match self.catalog.as_slice() {
            [] => Ok(None),
            [one] if one.extension().is_some_and(|e| e == "mcat") => {
                Catalog::from_artifact(one, &cache.join("catalogs")).map(Some)
            }
            paths
                if paths
                    .iter()
                    .any(|p| p.extension().is_some_and(|e| e == "mcat")) =>
            {
                Err("a catalogue artifact (.mcat) is the only --catalog".into())
            }
            paths => Ok(Some(Catalog::new(Catalogue::load(
                paths, &self.libs, true,
            )?))),
        }
    }
}

#[derive(Args)]
struct Query {
    /// The query. Paths in single quotes are tables: `FROM
    /// 'models/*.jsonl'` (one model per line, column `json`) or `FROM
    /// 'data.parquet'`.
    #[arg(long, required = true)]
    sql: Option<String>,
    #[command(flatten)]
    catalog: CatalogArgs,
    /// Also name files as a table: `NAME=PATH` (repeatable).
    #[arg(long = "table", value_name = "NAME=PATH")]
    tables: Vec<String>,
    /// Run on a Ballista cluster (`df://HOST:PORT`, its scheduler) instead
    /// of this machine. Its processes must be `muranopl batch scheduler`
    /// and `executor`, over the same catalogue, and see the same files.
    #[arg(long, value_name = "URL")]
    ballista: Option<String>,
    /// How to print the result.
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    /// Write the result here instead of standard output (required for
    /// parquet).
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Partitions of a local run (default: one per core).
    #[arg(long)]
    jobs: Option<usize>,
    /// No progress or summary on stderr.
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Format {
    /// An ASCII table.
    Table,
    /// One JSON object per row.
    Jsonl,
    /// A Parquet file (`--out`).
    Parquet,
}

/// Runs the command line `args` (without the program name's own); returns
/// the exit status.
pub fn main(args: impl IntoIterator<Item = std::ffi::OsString>) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail(format!("cannot start the async runtime: {e}")),
    };
    match rt.block_on(run(cli)) {
        Ok(()) => 0,
        Err(e) => fail(e),
    }
}

fn fail(e: String) -> i32 {
    eprintln!("error: {e}");
    1
}

async fn run(cli: Cli) -> Result<(), String> {
    match cli.cmd {
        Some(Cmd::Pack {
            packages,
            libs,
            out,
        }) => {
            let c = crate::artifact::pack(&packages, &libs, &out)?;
            println!(
                "{} {} ({} package(s))",
                out.display(),
                c.digest,
                c.packages.len()
            );
            Ok(())
        }
        Some(Cmd::Scheduler { bind, catalog }) => {
            let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
            let cat = catalog.load(tmp.path())?;
            eprintln!("scheduler listening on {bind}");
            run_scheduler(bind, cat).await
        }
        Some(Cmd::Executor {
            scheduler,
            host,
            port,
            grpc_port,
            tasks,
            work_dir,
            catalog,
        }) => {
            let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
            let work_dir = work_dir.unwrap_or_else(|| tmp.path().to_path_buf());
            let cat = catalog.load(&work_dir)?;
            eprintln!(
                "executor on {host}:{port} (tasks on port {grpc_port}) joining the scheduler at {scheduler}"
            );
            let o = ExecutorOptions {
                host,
                port,
                grpc_port,
                scheduler,
                tasks,
                work_dir,
            };
            run_executor(o, cat).await
        }
        None => query(cli.query).await,
    }
}

/// A context with our functions and file tables: local, or a Ballista
/// client.
pub async fn context(
    ballista: Option<&str>,
    jobs: Option<usize>,
    catalog: Option<Catalog>,
) -> Result<SessionContext, String> {
    let ctx = match ballista {
        Some(url) => SessionContext::remote(url)
            .await
            .map_err(|e| e.to_string())?,
        None => {
            let mut cfg = SessionConfig::new();
            if let Some(n) = jobs {
                cfg = cfg.with_target_partitions(n.max(1));
            }
            SessionContext::new_with_config(cfg)
        }
    };
    let ctx = crate::enable_model_files(ctx);
    crate::register(&ctx, catalog);
    Ok(ctx)
}

async fn query(q: Query) -> Result<(), String> {
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let catalogue = q.catalog.load(tmp.path())?;
    let ctx = context(q.ballista.as_deref(), q.jobs, catalogue).await?;
    for t in &q.tables {
        let (name, path) = t
            .split_once('=')
            .ok_or_else(|| format!("--table {t}: expected NAME=PATH"))?;
        register_table(&ctx, name, path).await?;
    }
    let sql = q.sql.as_deref().unwrap_or_default();
    let start = Instant::now();
    let df = ctx.sql(sql).await.map_err(|e| e.to_string())?;
    let stream = df.execute_stream().await.map_err(|e| e.to_string())?;
    let rows = write(stream, q.format, q.out.as_deref(), q.quiet).await?;
    if !q.quiet {
        let secs = start.elapsed().as_secs_f64();
        eprintln!("{rows} row(s) in {secs:.2}s");
    }
    Ok(())
}

async fn register_table(ctx: &SessionContext, name: &str, path: &str) -> Result<(), String> {
    let err = |e: datafusion::error::DataFusionError| format!("--table {name}={path}: {e}");
    // The file tables' own resolution (JSON Lines or by extension).
    let table = ctx
        .table_provider(datafusion::common::TableReference::bare(path))
        .await
        .map_err(err)?;
    ctx.register_table(name, table).map_err(err)?;
    Ok(())
}

/// Drains `stream` to the output; returns the rows written.
async fn write(
    mut stream: SendableRecordBatchStream,
    format: Format,
    out: Option<&Path>,
    quiet: bool,
) -> Result<u64, String> {
    let progress = match quiet {
        true => indicatif::ProgressBar::hidden(),
        false => indicatif::ProgressBar::new_spinner().with_style(
            indicatif::ProgressStyle::with_template("{spinner} {human_pos} rows [{elapsed}]")
                .expect("a valid template"),
        ),
    };
    let mut sink = Sink::new(format, out, stream.schema())?;
    let mut rows = 0u64;
    while let Some(batch) = stream.next().await {
        let batch = batch.map_err(|e| e.to_string())?;
        rows += batch.num_rows() as u64;
        progress.set_position(rows);
        sink.push(batch)?;
    }
    progress.finish_and_clear();
    sink.finish()?;
    Ok(rows)
}

/// Where result batches go.
enum Sink {
    /// Kept for one table at the end.
    Table(Vec<RecordBatch>, Box<dyn std::io::Write>),
    Jsonl(datafusion::arrow::json::LineDelimitedWriter<Box<dyn std::io::Write>>),
    Parquet(ArrowWriter<std::fs::File>),
}

impl Sink {
    fn new(
        format: Format,
        out: Option<&Path>,
        schema: datafusion::arrow::datatypes::SchemaRef,
    ) -> Result<Sink, String> {
        let open = |p: &Path| std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()));
        let writer = || -> Result<Box<dyn std::io::Write>, String> {
            Ok(match out {
                Some(p) => Box::new(std::io::BufWriter::new(open(p)?)),
                None => Box::new(std::io::BufWriter::new(std::io::stdout())),
            })
        };
        Ok(match format {
            Format::Table => Sink::Table(Vec::new(), writer()?),
            Format::Jsonl => {
                Sink::Jsonl(datafusion::arrow::json::LineDelimitedWriter::new(writer()?))
            }
            Format::Parquet => {
                let p = out.ok_or("--format parquet needs --out FILE")?;
                Sink::Parquet(
                    ArrowWriter::try_new(open(p)?, schema, None).map_err(|e| e.to_string())?,
                )
            }
        })
    }

    fn push(&mut self, b: RecordBatch) -> Result<(), String> {
        match self {
            Sink::Table(all, _) => {
                all.push(b);
                Ok(())
            }
            Sink::Jsonl(w) => w.write(&b).map_err(|e| e.to_string()),
            Sink::Parquet(w) => w.write(&b).map_err(|e| e.to_string()),
        }
    }

    fn finish(self) -> Result<(), String> {
        match self {
            Sink::Table(all, mut w) => {
                let t = pretty_format_batches(&all).map_err(|e| e.to_string())?;
                writeln!(w, "{t}")
                    .and_then(|_| w.flush())
                    .map_err(|e| e.to_string())
            }
            Sink::Jsonl(mut w) => {
                w.finish().map_err(|e| e.to_string())?;
                w.into_inner().flush().map_err(|e| e.to_string())
            }
            Sink::Parquet(w) => w.close().map(|_| ()).map_err(|e| e.to_string()),
        }
    }
}
