//! The records of a `validate_many` or `validate_objects` call, read in
//! blocks that are walked on every core ([`crate::view::share_out`]).

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyIterator, PyList};

use crate::view::Obj;

/// The records of a call, read in blocks: a list's from a copy of it, made first (so that nothing run while a record is
/// judged can change or free the others), an iterator's held as taken.
pub struct Blocks<'py> {
    py: Python<'py>,
    /// The copy of a list, and where the next block starts.
    list: Option<(Bound<'py, PyList>, usize)>,
    iter: Option<Bound<'py, PyIterator>>,
    /// The iterator's models of this block.
    held: Vec<Bound<'py, PyAny>>,
    /// The addresses of this block's models.
    objects: Vec<Obj>,
    /// The iterator's failure, raised once the models before it are.
    failed: Option<PyErr>,
}

impl<'py> Blocks<'py> {
    /// Models in a block at most.
    const SIZE: usize = 1 << 16;

    /// The records of `models`: a list (copied) or any iterable.
    pub fn new(models: &Bound<'py, PyAny>) -> PyResult<Blocks<'py>> {
        let (list, iter) = match models.cast_exact::<PyList>() {
            Ok(l) => (Some((l.get_slice(0, l.len()), 0)), None),
            Err(_) => (None, Some(models.try_iter()?)),
        };
        Ok(Blocks {
            py: models.py(),
            list,
            iter,
            held: Vec::new(),
            objects: Vec::new(),
            failed: None,
        })
    }

    /// Reads the next block; false when no model is left (or raises the
    /// iterator's failure, in its turn).
    pub fn next(&mut self) -> PyResult<bool> {
        self.held.clear();
        self.objects.clear();
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        if let Some((list, next)) = &mut self.list {
            let end = list.len().min(*next + Self::SIZE);
            // SAFETY: `list` is our own copy, which nothing else can
            // change; its items are borrowed while it is held.
            self.objects.extend(
                (*next..end)
                    .map(|i| unsafe { ffi::PyList_GetItem(list.as_ptr(), i as ffi::Py_ssize_t) }),
            );
            *next = end;
        } else if let Some(iter) = &mut self.iter {
            while self.held.len() < Self::SIZE {
                match iter.next() {
                    Some(Ok(m)) => self.held.push(m),
                    Some(Err(e)) => {
                        self.failed = Some(e);
                        break;
                    }
                    None => break,
                }
            }
            self.objects.extend(self.held.iter().map(|m| m.as_ptr()));
        }
        Ok(!self.objects.is_empty() || self.failed.is_some())
    }

    /// The addresses of this block's models, held while it is.
    pub fn objects(&self) -> &[Obj] {
        &self.objects
    }

    /// Models in this block.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// Model `j` of this block.
    pub fn get(&self, j: usize) -> Bound<'py, PyAny> {
        match self.held.get(j) {
            Some(m) => m.clone(),
            // SAFETY: `objects[j]` is an item of the copy of the list,
            // which `self` holds, under the GIL.
            None => unsafe { Bound::from_borrowed_ptr(self.py, self.objects[j]) },
        }
    }
}
