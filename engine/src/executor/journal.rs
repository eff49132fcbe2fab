//! What a run records besides its objects: contract violations
//! (validation mode), the log, traces, engine configuration, fresh ids.

use runtime::value::ObjRef;
use runtime::{Error, Result, Value};

use super::state::{Executor, LogSink};

impl Executor {
    /// Switches validation mode on: loading records contract violations
    /// instead of stopping at the first one.
    pub fn collect_violations(&self) {
        self.lock().violations = Some(Vec::new());
    }

    /// True in validation mode.
    pub fn collecting(&self) -> bool {
        self.lock().violations.is_some()
    }

    /// Records a violation (validation mode).
    pub fn record_violation(&self, r: &ObjRef, prop: &str, e: Error) {
        let mut st = self.lock();
        let path = st
            .paths
            .get(&r.slot)
            .cloned()
            .unwrap_or_else(|| format!("<{}>", r.id));
        if let Some(v) = st.violations.as_mut() {
            v.push((r.slot, path, prop.to_string(), e));
        }
    }

    /// Records the JSON path of a loaded object (validation mode).
    pub fn set_path(&self, r: &ObjRef, path: String) {
        let mut st = self.lock();
        if st.violations.is_some() {
            st.paths.insert(r.slot, path);
        }
    }

    /// The recorded violations (JSON path, property, error), in the order
    /// of the objects in the model (the order they were created in), then
    /// of the properties in each.
    pub fn take_violations(&self) -> Vec<(String, String, Error)> {
        let mut v = self.lock().violations.take().unwrap_or_default();
        v.sort_by_key(|x| x.0);
        v.into_iter().map(|(_, p, n, e)| (p, n, e)).collect()
    }

    /// Records a log line (`io.murano.system.Logger`), and shows it to
    /// the sink ([`Executor::on_log`]) if there is one.
    pub fn log(&self, level: &str, logger: &str, text: &str) {
        let sink = {
            let mut st = self.lock();
            (st.log).push(format!("{} {}: {}", level.to_uppercase(), logger, text));
            st.log_sink.clone()
        };
        if let Some(sink) = sink {
            sink(level, logger, text);
        }
    }

    /// Calls `f` with every log line from now on, as it is recorded
    /// (level as the Logger method names it, logger name, text); the
    /// lines are recorded as before.
    pub fn on_log(&self, f: LogSink) {
        self.lock().log_sink = Some(f);
    }

    /// The results of green threads in order, or the first error (in
    /// branch order, as murano's `helpers.parallel_select` reraises it);
    /// every other branch's error is logged rather than dropped.
    pub fn first_error<T>(&self, results: Vec<Result<T>>, what: &str) -> Result<Vec<T>> {
        let mut out = Vec::with_capacity(results.len());
        let mut first = None;
        for (i, r) in results.into_iter().enumerate() {
            match r {
                Ok(v) => out.push(v),
                Err(e) if first.is_none() => first = Some(e),
                Err(e) => self.log(
                    "warning",
                    "murano.dsl",
                    &format!(
                        "{what} branch {i} also failed: {}: {}",
                        e.kind(),
                        e.message()
                    ),
                ),
            }
        }
        match first {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    /// Takes the log lines recorded so far.
    pub fn take_log(&self) -> Vec<String> {
        std::mem::take(&mut self.lock().log)
    }

    /// Sets an engine configuration value (`config(group, setting)`).
    pub fn set_engine_config(&self, group: &str, setting: &str, v: Value) {
        self.lock()
            .engine_config
            .insert(format!("{group}.{setting}"), v);
    }

    /// An engine configuration value (null when unset).
    pub fn engine_config(&self, group: &str, setting: &str) -> Value {
        self.lock()
            .engine_config
            .get(&format!("{group}.{setting}"))
            .cloned()
            .unwrap_or(Value::Null)
    }

    /// Takes the traces recorded so far.
    pub fn take_traces(&self) -> Vec<Value> {
        std::mem::take(&mut self.lock().traces)
    }

    /// Records a trace.
    pub fn trace(&self, v: Value) {
        self.lock().traces.push(v);
    }

    /// A fresh object id (32 hex digits, deterministic per execution).
    pub fn new_id(&self) -> String {
        let mut st = self.lock();
        let n = st.next_id;
        st.next_id += 1;
        format!("{:032x}", 0x5eed_0000_0000_0000_0000_0000u128 + n as u128)
    }
}
