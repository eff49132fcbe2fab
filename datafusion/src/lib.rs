//! YAQL and MuranoPL contract validation as Apache DataFusion functions,
//! distributed by Apache Ballista.
//!
//! | function | returns |
//! |---|---|
//! | `yaql(expr, json)` | the result as JSON text |
//! | `yaql_bool` / `yaql_int` / `yaql_float` / `yaql_str` `(expr, json)` | a typed result (filters, aggregates) |
//! | `murano_validate(class, json)` | the model's contract violations: `list<struct<path, property, message>>` |
//!
//! A NULL argument gives NULL. A YAQL error fails the query with the
//! error's kind, message and column in the expression; a model that
//! cannot be validated is a violation of its row (see [`validate_udf`]).
//!
//! ```no_run
//! # async fn f() -> datafusion::error::Result<()> {
//! use datafusion::prelude::SessionContext;
//! let catalogue = muranopl::Catalogue::load(&["examples/validate".into()], &[], true).unwrap();
//! let ctx = muranopl_datafusion::enable_model_files(SessionContext::new());
//! muranopl_datafusion::register(&ctx, Some(muranopl_datafusion::Catalog::new(catalogue)));
//! ctx.sql("SELECT yaql_str('$.name', json) AS name, murano_validate('com.example.Server', json) AS v
//!          FROM 'models/*.jsonl'").await?.show().await?;
//! # Ok(()) }
//! ```

use std::sync::Arc;

use datafusion::execution::{FunctionRegistry, SessionState};
use datafusion::logical_expr::ScalarUDF;
use datafusion::prelude::SessionContext;
use muranopl::{Engine, Options};

pub mod artifact;
pub mod batch;
mod catalog;
pub mod cluster;
mod strings;
pub mod tables;
pub mod validate_udf;
pub mod yaql_udf;

pub use tables::{enable_model_files, lines_table};

pub use catalog::Catalog;
pub use validate_udf::Validate;
pub use yaql_udf::{Output, Yaql};

/// Our functions: the `yaql` family and `murano_validate` (an error that
/// says so when there is no catalogue to validate against).
pub fn udfs(catalog: Option<Catalog>) -> Vec<ScalarUDF> {
    let engine = Arc::new(Engine::new(Options::default()));
    let mut out: Vec<ScalarUDF> = Output::ALL
        .into_iter()
        .map(|o| Yaql::udf(o, engine.clone()))
        .collect();
    out.push(Validate::udf(catalog));
    out
}

/// Registers our functions with `ctx` (a local context, or a Ballista
/// client's: register after the client context is made, since making it
/// resets the function list).
pub fn register(ctx: &SessionContext, catalog: Option<Catalog>) {
    for f in udfs(catalog) {
        ctx.register_udf(f);
    }
}

/// Registers our functions with a session state (a Ballista scheduler's
/// or executor's).
pub fn register_state(
    state: &mut SessionState,
    catalog: Option<Catalog>,
) -> datafusion::common::Result<()> {
    for f in udfs(catalog) {
        state.register_udf(Arc::new(f))?;
    }
    Ok(())
}
