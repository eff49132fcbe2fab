//! `yaql(expr, json)` and its typed variants: a YAQL expression evaluated
//! over each row's JSON document.
//!
//! The expression is compiled once per distinct text and kept in a small
//! cache shared by the partitions of the process (compiled programs are
//! frozen and shared across threads), so a literal expression costs one
//! compilation however many batches it sees.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use datafusion::arrow::array::{
    Array, ArrayRef, BooleanBuilder, Float64Builder, Int64Builder, StringBuilder,
};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use muranopl::{Engine, Program, Value};

use crate::strings::{strings, StrColumn};

/// The most distinct expression texts a function keeps compiled.
const CACHE_CAPACITY: usize = 256;

/// What a `yaql` function returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Output {
    /// `yaql`: the result as JSON text (tagged JSON for values JSON cannot
    /// spell: `{"$datetime": ...}`).
    Json,
    /// `yaql_bool`: a boolean result (a filter).
    Bool,
    /// `yaql_int`: an integer result that fits 64 bits.
    Int,
    /// `yaql_float`: a number.
    Float,
    /// `yaql_str`: a string.
    Str,
}

impl Output {
    /// Every variant, in the order the functions are registered.
    pub const ALL: [Output; 5] = [
        Output::Json,
        Output::Bool,
        Output::Int,
        Output::Float,
        Output::Str,
    ];

    fn name(self) -> &'static str {
        match self {
            Output::Json => "yaql",
            Output::Bool => "yaql_bool",
            Output::Int => "yaql_int",
            Output::Float => "yaql_float",
            Output::Str => "yaql_str",
        }
    }

    fn data_type(self) -> DataType {
        match self {
            Output::Json | Output::Str => DataType::Utf8,
            Output::Bool => DataType::Boolean,
            Output::Int => DataType::Int64,
            Output::Float => DataType::Float64,
        }
    }
}

/// One of the `yaql` functions.
pub struct Yaql {
    output: Output,
    signature: Signature,
    engine: Arc<Engine>,
    cache: Mutex<HashMap<String, Arc<Program>>>,
}

impl std::fmt::Debug for Yaql {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Yaql")
            .field("output", &self.output)
            .finish()
    }
}

// Two instances are the same function when they return the same thing:
// the engine and the cache are not part of its identity.
impl PartialEq for Yaql {
    fn eq(&self, other: &Yaql) -> bool {
        self.output == other.output
    }
}
impl Eq for Yaql {}
impl std::hash::Hash for Yaql {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.output.hash(h)
    }
}

impl Yaql {
    /// The function returning `output`, evaluating with `engine` (its
    /// options are the limits every evaluation runs within).
    pub fn new(output: Output, engine: Arc<Engine>) -> Yaql {
        Yaql {
            output,
            signature: Signature::exact(
                vec![DataType::Utf8, DataType::Utf8],
                Volatility::Immutable,
            ),
            engine,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The function as DataFusion registers it.
    pub fn udf(output: Output, engine: Arc<Engine>) -> ScalarUDF {
        ScalarUDF::new_from_impl(Yaql::new(output, engine))
    }

    /// The compiled program of `expr`, from the cache or compiled now. A
    /// grammar error names the position in the expression.
    fn program(&self, expr: &str) -> Result<Arc<Program>> {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = cache.get(expr) {
            return Ok(p.clone());
        }
        let prog = match self.engine.compile(expr) {
            Ok(p) => Arc::new(p),
            Err(e) => return exec_err!("{}: {}", self.output.name(), describe(&e, expr)),
        };
        if cache.len() >= CACHE_CAPACITY {
            cache.clear();
        }
        cache.insert(expr.to_string(), prog.clone());
        Ok(prog)
    }

    /// Evaluates `prog` (the program of `expr`) over the JSON text `doc`.
    fn eval(&self, prog: &Program, expr: &str, doc: &str) -> Result<Value> {
        let data = match runtime::json::from_tagged_str(doc) {
            Ok(v) => v,
            Err(e) => {
                return exec_err!(
                    "{}: the document is not JSON: {}",
                    self.output.name(),
                    e.message()
                )
            }
        };
        match self.engine.eval(prog, data) {
            Ok(v) => Ok(v),
            Err(e) => exec_err!("{}: {}", self.output.name(), describe(&e, expr)),
        }
    }

    fn column(&self, exprs: &StrColumn, docs: &StrColumn, rows: usize) -> Result<ArrayRef> {
        let mut out = Builder::new(self.output, rows);
        // The program of the previous row's expression: a literal (or a
        // column repeating one text) is looked up once per batch.
        let mut last: Option<(&str, Arc<Program>)> = None;
        for i in 0..rows {
            let (Some(e), Some(d)) = (exprs.get(i), docs.get(i)) else {
                out.push_null();
                continue;
            };
            let prog = match &last {
                Some((text, p)) if *text == e => p.clone(),
                _ => {
                    let p = self.program(e)?;
                    last = Some((e, p.clone()));
                    p
                }
            };
            let v = self.eval(&prog, e, d)?;
            out.push(self.output, v)?;
        }
        Ok(out.finish())
    }
}

/// An engine error as one line: kind, message, and the 1-based column of
/// its span in the expression when it has one.
pub(crate) fn describe(e: &runtime::Error, expr: &str) -> String {
    match e.span() {
        Some(s) => {
            let col = expr
                .get(..s.start as usize)
                .map_or(s.start as usize, |p| p.chars().count())
                + 1;
            format!(
                "{}: {} (at column {col} of {expr:?})",
                e.kind(),
                e.message()
            )
        }
        None => format!("{}: {} (in {expr:?})", e.kind(), e.message()),
    }
}

/// The output column of one batch, typed by [`Output`].
enum Builder {
    Str(StringBuilder),
    Bool(BooleanBuilder),
    Int(Int64Builder),
    Float(Float64Builder),
}

impl Builder {
    fn new(output: Output, rows: usize) -> Builder {
        match output {
            Output::Json | Output::Str => {
                Builder::Str(StringBuilder::with_capacity(rows, rows * 16))
            }
            Output::Bool => Builder::Bool(BooleanBuilder::with_capacity(rows)),
            Output::Int => Builder::Int(Int64Builder::with_capacity(rows)),
            Output::Float => Builder::Float(Float64Builder::with_capacity(rows)),
        }
    }

    fn push_null(&mut self) {
        match self {
            Builder::Str(b) => b.append_null(),
            Builder::Bool(b) => b.append_null(),
            Builder::Int(b) => b.append_null(),
            Builder::Float(b) => b.append_null(),
        }
    }

    /// Appends a result; `null` is SQL NULL, and a result of another type
    /// than the variant's is an error naming both.
    fn push(&mut self, output: Output, v: Value) -> Result<()> {
        match (self, &v) {
            (Builder::Str(b), _) if output == Output::Json => {
                b.append_value(runtime::json::to_compact_string(&v))
            }
            (b, Value::Null) => b.push_null(),
            (Builder::Str(b), Value::Str(s)) => b.append_value(s.as_str()),
            (Builder::Bool(b), Value::Bool(x)) => b.append_value(*x),
            (Builder::Int(b), Value::Int(x)) => b.append_value(*x),
            (Builder::Float(b), Value::Int(x)) => b.append_value(*x as f64),
            (Builder::Float(b), Value::Float(x)) => b.append_value(*x),
            _ => {
                return exec_err!(
                    "{}: the result is {} {}, not {}",
                    output.name(),
                    article(v.type_name()),
                    v.type_name(),
                    match output {
                        Output::Bool => "a boolean",
                        Output::Int => "an integer that fits 64 bits",
                        Output::Float => "a number",
                        _ => "a string",
                    }
                )
            }
        }
        Ok(())
    }

    fn finish(self) -> ArrayRef {
        match self {
            Builder::Str(mut b) => Arc::new(b.finish()),
            Builder::Bool(mut b) => Arc::new(b.finish()),
            Builder::Int(mut b) => Arc::new(b.finish()),
            Builder::Float(mut b) => Arc::new(b.finish()),
        }
    }
}

fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

impl ScalarUDFImpl for Yaql {
    fn name(&self) -> &str {
        self.output.name()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(self.output.data_type())
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let cols = strings(self.output.name(), &args.args, rows)?;
        // Deeply nested documents and results recurse: the batch runs on
        // the engine's big stack, not the worker thread's.
        let out = vm::coro::on_big_stack(|| self.column(&cols[0], &cols[1], rows))?;
        debug_assert_eq!(out.len(), rows);
        Ok(ColumnarValue::Array(out))
    }
}
