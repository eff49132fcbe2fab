//! The package errors by kind (the bottom layer of the crate).

use runtime::{Error, ErrorKind};

pub(crate) fn format_error(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::PackageFormatError, msg)
}

pub(crate) fn load_error(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::PackageLoadError, msg)
}

pub(crate) fn class_error(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::PackageClassLoadError, msg)
}
