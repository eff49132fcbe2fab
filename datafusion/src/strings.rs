//! The string arguments of our functions, read in place: a column of any
//! of Arrow's string types, or one scalar for every row (a literal
//! expression or class name is not copied per row).

use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::ColumnarValue;

/// One string argument.
pub enum StrColumn {
    /// The same value (or NULL) on every row.
    Scalar(Option<String>),
    /// A column of `Utf8`, `LargeUtf8` or `Utf8View`.
    Array(ArrayRef),
}

impl StrColumn {
    /// Row `i`, `None` for NULL.
    pub fn get(&self, i: usize) -> Option<&str> {
        match self {
            StrColumn::Scalar(s) => s.as_deref(),
            StrColumn::Array(a) if a.is_null(i) => None,
            StrColumn::Array(a) => Some(match a.data_type() {
                DataType::LargeUtf8 => a.as_string::<i64>().value(i),
                DataType::Utf8View => a.as_string_view().value(i),
                _ => a.as_string::<i32>().value(i),
            }),
        }
    }
}

/// The arguments of `function` as strings; anything but strings and NULL
/// is an error (the signature coerces, so this is a planner bug).
pub fn strings(function: &str, args: &[ColumnarValue], rows: usize) -> Result<Vec<StrColumn>> {
    args.iter()
        .map(|a| match a {
            ColumnarValue::Scalar(
                ScalarValue::Utf8(s) | ScalarValue::LargeUtf8(s) | ScalarValue::Utf8View(s),
            ) => Ok(StrColumn::Scalar(s.clone())),
            ColumnarValue::Scalar(s) if s.is_null() => Ok(StrColumn::Scalar(None)),
            ColumnarValue::Array(a)
                if matches!(
                    a.data_type(),
                    DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
                ) && a.len() == rows =>
            {
                Ok(StrColumn::Array(a.clone()))
            }
            other => exec_err!(
                "{function}: expected string arguments, got {}",
                other.data_type()
            ),
        })
        .collect()
}
