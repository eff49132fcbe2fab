//! Object models as tables.
//!
//! - JSON Lines (`.jsonl`, `.ndjson`): one model per line, read as a
//!   table with one `Utf8` column, `json`, the line's text. The models are
//!   handed to our functions whole, not flattened into Arrow columns by
//!   schema inference (which would need one schema for every class).
//! - Parquet with a JSON column: DataFusion's own reader; pass the column
//!   to the functions.
//!
//! A JSON Lines file is read with DataFusion's CSV reader told that the
//! field delimiter is the byte 0x1F and the quote 0x1E: bytes that valid
//! JSON text never contains unescaped, so every line is one field, read in
//! parallel by byte ranges, and the scan is a plain CSV scan that
//! Ballista's codec ships to executors without an extension of ours.
//!
//! With [`enable_model_files`], SQL may name files directly: `FROM
//! 'models/*.jsonl'` or `FROM 'data.parquet'`.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::{DynamicFileCatalog, TableProvider, UrlTableFactory};
use datafusion::common::{plan_err, Result};
use datafusion::datasource::file_format::csv::CsvFormat;
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableConfigExt, ListingTableUrl,
};
use datafusion::execution::context::SessionState;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::SessionContext;

/// The column of a JSON Lines table.
pub const JSON_COLUMN: &str = "json";

/// The file extensions read as JSON Lines models.
pub const LINE_EXTENSIONS: [&str; 2] = [".jsonl", ".ndjson"];

/// The schema of a JSON Lines table: `json Utf8`.
pub fn lines_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![Field::new(
        JSON_COLUMN,
        DataType::Utf8,
        true,
    )]))
}

/// The JSON Lines extension `path` ends with (a file, or a glob such as
/// `models/*.jsonl`).
pub fn lines_extension(path: &str) -> Option<&'static str> {
    LINE_EXTENSIONS.into_iter().find(|e| path.ends_with(e))
}

/// A table over JSON Lines files: `path` is a file, a directory (its
/// files ending with `extension`) or a glob.
pub fn lines_table(path: &str, extension: &str) -> Result<Arc<dyn TableProvider>> {
    check_local(path)?;
    let format = CsvFormat::default()
        .with_has_header(false)
        .with_delimiter(0x1f)
        .with_quote(0x1e)
        .with_escape(None)
        .with_comment(None)
        .with_newlines_in_values(false);
    let options = ListingOptions::new(Arc::new(format)).with_file_extension(extension);
    let config = ListingTableConfig::new(ListingTableUrl::parse(path)?)
        .with_listing_options(options)
        .with_schema(lines_schema());
    Ok(Arc::new(ListingTable::try_new(config)?))
}

/// A local path that names nothing is an error, not an empty table: the
/// file, or for a glob the directory its fixed part is in, must exist.
fn check_local(path: &str) -> Result<()> {
    if path.contains("://") {
        return Ok(());
    }
    let there = match path.find(['*', '?', '[']) {
        None => Path::new(path).exists(),
        Some(i) => {
            let fixed = &path[..i];
            let dir = match fixed.ends_with('/') {
                true => Path::new(fixed),
                false => Path::new(fixed).parent().unwrap_or(Path::new(".")),
            };
            dir.as_os_str().is_empty() || dir.is_dir()
        }
    };
    match there {
        true => Ok(()),
        false => plan_err!("{path}: no such file or directory"),
    }
}

/// Resolves a quoted path in `FROM`: JSON Lines as [`lines_table`], other
/// files as DataFusion infers them from their extension.
#[derive(Debug)]
struct ModelFiles {
    /// A session for inferring other formats' schemas (local files).
    infer: SessionState,
}

#[async_trait]
impl UrlTableFactory for ModelFiles {
    async fn try_new(&self, url: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        if let Some(ext) = lines_extension(url) {
            return lines_table(url, ext).map(Some);
        }
        // A name that looks like a path must name something.
        if url.contains(['/', '.']) {
            check_local(url)?;
        }
        let Ok(table_url) = ListingTableUrl::parse(url) else {
            return Ok(None);
        };
        // As DataFusion's own url tables: a name that is no readable file
        // is no table (the planner's "table not found").
        let Ok(config) = ListingTableConfig::new(table_url)
            .infer_options(&self.infer)
            .await
        else {
            return Ok(None);
        };
        let config = config.infer_schema(&self.infer).await?;
        Ok(Some(Arc::new(ListingTable::try_new(config)?)))
    }
}

/// `ctx` with file paths usable as tables in SQL (see the module docs).
pub fn enable_model_files(ctx: SessionContext) -> SessionContext {
    let state = ctx.state();
    let catalogs = Arc::new(DynamicFileCatalog::new(
        state.catalog_list().clone(),
        Arc::new(ModelFiles {
            infer: SessionStateBuilder::new().with_default_features().build(),
        }),
    ));
    SessionStateBuilder::new_from_existing(state)
        .with_catalog_list(catalogs)
        .build()
        .into()
}
