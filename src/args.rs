//! What several commands share: exit statuses and the limits given on
//! the command line.

use muranopl::Options;

/// Exit statuses, the same for every command.
pub mod exit {
    /// Success.
    pub const OK: i32 = 0;
    /// An evaluation error, a failed validation or test.
    pub const FAILED: i32 = 1;
    /// A usage error, or input that cannot be read or parsed.
    pub const USAGE: i32 = 2;
    /// The expression does not compile (a grammar error).
    pub const COMPILE: i32 = 3;
    /// An internal error (a bug: please report it).
    pub const INTERNAL: i32 = 4;
}

/// `secs` as a duration; `None` for 0 (a limit turned off) and for what
/// is not a positive number of seconds.
pub fn seconds(secs: f64) -> Option<std::time::Duration> {
    (secs > 0.0 && secs.is_finite() && secs < 1e9).then(|| std::time::Duration::from_secs_f64(secs))
}

/// Limits of a MuranoPL execution (`run`, each test of `test`).
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct ExecLimits {
    /// Wall-clock time the execution may take, in seconds (TimeoutError
    /// past it); 0: unlimited
    #[arg(long, value_name = "SECS", default_value_t = 600.0)]
    timeout: f64,
    /// Statements the execution may run (ExecutionLimitExceeded past
    /// it); 0: unlimited
    #[arg(long, value_name = "N", default_value_t = engine::STEP_BUDGET)]
    max_steps: u64,
    /// Bytes the execution's strings and collections may take in all
    /// (allocated, not live; MemoryQuotaExceededException past it); 0:
    /// unlimited
    #[arg(long, value_name = "BYTES", default_value_t = runtime::DEFAULT_MAX_MEMORY)]
    max_memory: usize,
}

impl From<ExecLimits> for muranopl::session::Limits {
    fn from(l: ExecLimits) -> Self {
        muranopl::session::Limits {
            timeout: seconds(l.timeout),
            max_steps: (l.max_steps > 0).then_some(l.max_steps),
            max_memory: (l.max_memory > 0).then_some(l.max_memory),
            seed: None,
        }
    }
}

/// Resource limits of an evaluation (on by default; 0 turns one off).
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct Limits {
    /// Longest collection an evaluation may build or walk lazily, in
    /// elements (CollectionTooLargeException past it) [default: 10000000;
    /// 0: unlimited]
    #[arg(long, value_name = "N")]
    limit_iterators: Option<usize>,
    /// Largest string or list one operation may build, in bytes
    /// (MemoryQuotaExceededException past it) [default: 268435456 (256
    /// MiB); 0: unlimited]
    #[arg(long, value_name = "BYTES")]
    memory_quota: Option<usize>,
    /// Bytes the strings and collections of one evaluation may take in all
    /// (allocated, not live; MemoryQuotaExceededException past it)
    /// [default: 805306368 (768 MiB); 0: unlimited]
    #[arg(long, value_name = "BYTES")]
    max_memory: Option<usize>,
    /// Wall-clock time one evaluation may take, in seconds (TimeoutError
    /// past it) [default: 60; 0: unlimited]
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
}

impl Limits {
    /// `opts` with these limits where given.
    pub fn apply(self, mut opts: Options) -> Options {
        let on = |n: usize| (n > 0).then_some(n);
        if let Some(n) = self.limit_iterators {
            opts.limit_iterators = on(n);
        }
        if let Some(n) = self.memory_quota {
            opts.memory_quota = on(n);
        }
        if let Some(n) = self.max_memory {
            opts.max_memory = on(n);
        }
        if let Some(t) = self.timeout {
            opts.time_budget = seconds(t);
        }
        opts
    }
}

/// The least severe MuranoPL log line (`io.murano.system.Logger`) `run`
/// and `test` print on stderr.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum LogLevel {
    /// Everything, `trace` included.
    Trace,
    /// `debug` and above.
    Debug,
    /// `info` and above.
    #[default]
    Info,
    /// `warning` and above.
    Warning,
    /// `error` (and `exception`) and `critical`.
    Error,
    /// `critical` only.
    Critical,
    /// Nothing.
    Off,
}

impl LogLevel {
    /// The level of a line logged by the Logger method `level`.
    fn of(level: &str) -> LogLevel {
        match level {
            "trace" => LogLevel::Trace,
            "debug" => LogLevel::Debug,
            "warning" => LogLevel::Warning,
            "error" | "exception" => LogLevel::Error,
            "critical" => LogLevel::Critical,
            _ => LogLevel::Info,
        }
    }

    /// What prints the log lines at this level and above on stderr, as
    /// they are recorded: `LEVEL logger: text`, murano's level names
    /// (`muranopl --record` keeps every line whatever the level). With
    /// `reports_shown`, the lines the environment's reporter logs are
    /// left out: they repeat the reports printed beside them.
    pub fn sink(self, reports_shown: bool) -> Option<engine::LogSink> {
        if self == LogLevel::Off {
            return None;
        }
        let print = move |level: &str, logger: &str, text: &str| {
            if LogLevel::of(level) < self || (reports_shown && logger == "reporter") {
                return;
            }
            let logger = if logger.is_empty() { "murano" } else { logger };
            eprintln!("{} {logger}: {text}", level.to_uppercase());
        };
        Some(std::sync::Arc::new(print))
    }
}
