//! Python records read in place for a contract plan
//! ([`engine::contracts::plan::View`]), by the thread holding the GIL
//! ([`Gil`]) or, while that thread waits for them, by others
//! ([`Shared`]).
//!
//! # Reading on other threads
//! `validate_many` and `validate_objects` walk a block of records on
//! every core ([`share_out`]). The thread that holds the GIL starts the
//! others and walks its own share; until they are done it runs no Python
//! code, so no Python code runs anywhere and nothing in the records is
//! changed or freed (the block holds each record). Every thread only
//! reads, with C API functions that read and never write: `PyDict_Next`,
//! `PyDict_Size`, `PyList_Size`, `PyList_GetItem` of an index below the
//! size, `PyLong_AsLongLongAndOverflow` and `PyFloat_AsDouble` of exact
//! ints and floats, and, for strings, `PyUnicode_GetLength` and
//! `PyUnicode_AsUCS4` into a buffer of ours, all on objects of the exact
//! types they take, where none of them raises, takes a reference or uses
//! the thread's state. An ASCII string's text is read where CPython keeps
//! it, in the versions whose layout is known ([`Layout`]).
//!
//! What a [`Shared`] reader avoids, and why:
//! - `PyUnicode_AsUTF8AndSize` (the [`Gil`] reader's): for a string
//!   that is not ASCII it allocates and caches the UTF-8 in the object;
//! - dict lookups: with a key of a type other than `str` they compare by
//!   calling code, and in a dict of general keys they take and drop
//!   references to the entry's key; keys are found by walking the
//!   entries instead.
//!
//! One case is left: under CPython 3.11 and earlier, a string made by
//! the deprecated `Py_UNICODE` C API and never made ready is made ready
//! (allocated) when its length is first asked for. Neither Python code
//! nor `json` makes such strings; the API is gone from 3.12.

use std::cell::Cell;
use std::os::raw::c_char;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bumpalo::Bump;
use engine::contracts::plan::{scalar, View};
use engine::contracts::Borrowed;
use muranopl::jit::Native;
use pyo3::ffi;

/// A Python object, borrowed.
pub type Obj = *mut ffi::PyObject;

extern "C" {
    // In the stable ABI from 3.10 only, but exported by every CPython 3
    // (the abi3-py39 bindings do not declare it).
    fn PyUnicode_AsUTF8AndSize(unicode: Obj, size: *mut ffi::Py_ssize_t) -> *const c_char;
}

/// How a view reads what differs between the thread holding the GIL and
/// the others: a string's text and a key's entry.
pub trait Access<'a>: Copy {
    /// The UTF-8 text of exact `str` `o`; `None` when it has none (lone
    /// surrogates) or cannot be read here.
    ///
    /// # Safety
    /// `o` is a live exact `str` for `'a` (see the module's notes).
    unsafe fn text(self, o: Obj) -> Option<&'a str>;

    /// Of exact dict `d`: the value of key `key` (whose text is `text`),
    /// `Some(None)` when it has none; `None` when it cannot be told
    /// without running Python code (a key other than an exact `str`).
    ///
    /// # Safety
    /// `d` is a live exact dict and `key` a live exact `str` whose hash
    /// is known (interned, or a dict's key).
    unsafe fn lookup(self, d: Obj, key: Obj, text: &str) -> Option<Option<Obj>>;
}

/// The thread holding the GIL.
#[derive(Clone, Copy)]
pub struct Gil;

impl<'a> Access<'a> for Gil {
    unsafe fn text(self, o: Obj) -> Option<&'a str> {
        // SAFETY: per the contract.
        unsafe { utf8_of(o) }
    }

    unsafe fn lookup(self, d: Obj, key: Obj, _: &str) -> Option<Option<Obj>> {
        // SAFETY: per the contract; the lookup runs no Python code when
        // every key is an exact `str`, and the value is borrowed from `d`.
        unsafe {
            if !str_keys(d) {
                return None;
            }
            let v = ffi::PyDict_GetItemWithError(d, key);
            if v.is_null() {
                if !ffi::PyErr_Occurred().is_null() {
                    ffi::PyErr_Clear();
                    return None;
                }
                return Some(None);
            }
            Some(Some(v))
        }
    }
}

/// A thread reading while the GIL's holder waits for it (see the
/// module's notes): strings' text is read where CPython keeps it when
/// it is ASCII and the layout is known ([`Layout`]), else copied into
/// the arena.
#[derive(Clone, Copy)]
pub struct Shared<'a> {
    pub bump: &'a Bump,
    pub layout: Option<Layout>,
}

/// Characters a [`Shared`] reader copies at most of one string (a longer
/// one is "ask": the thread holding the GIL converts it for the checker).
const SHARED_TEXT: usize = 1 << 20;

/// Where the running CPython keeps a compact ASCII string's length, flags
/// and text (`PyASCIIObject`, not part of the stable ABI): known for
/// CPython 3.9 to 3.13 on 64-bit machines, and checked on two strings
/// each time it is taken ([`Layout::of`]). Elsewhere strings are copied out
/// (`PyUnicode_AsUCS4`), which is slower and reads the same text.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layout {
    /// The offset of the text.
    text: usize,
    /// The flag that says a string is ready, if the version has one.
    ready: u8,
}

impl Layout {
    const LENGTH: usize = 16;
    const STATE: usize = 32;
    const COMPACT: u8 = 1 << 5;
    const ASCII: u8 = 1 << 6;

    /// The layout of the running CPython, if known and as expected.
    pub fn of(py: pyo3::Python<'_>) -> Option<Layout> {
        use pyo3::types::PyString;
        if cfg!(not(target_pointer_width = "64")) {
            return None;
        }
        let v = py.version_info();
        let layout = match (v.major, v.minor) {
            (3, 9..=11) => Layout {
                text: 48,
                ready: 1 << 7,
            },
            (3, 12..=13) => Layout { text: 40, ready: 0 },
            _ => return None,
        };
        let (ascii, other) = (
            PyString::new(py, "muranopl"),
            PyString::new(py, "murano\u{e9}"),
        );
        // SAFETY: both are live exact strs, at least as large as the
        // header read (the text only once the length read is checked).
        let seen = unsafe {
            let len = *ascii
                .as_ptr()
                .cast::<u8>()
                .add(Self::LENGTH)
                .cast::<isize>();
            (len == 8).then(|| (layout.ascii(ascii.as_ptr()), layout.ascii(other.as_ptr())))
        };
        (seen == Some((Some("muranopl"), None))).then_some(layout)
    }

    /// The text of `o` if it is a compact ASCII string.
    ///
    /// # Safety
    /// `o` is a live exact `str` for `'a`, of the CPython this layout is
    /// of; nothing changes it meanwhile.
    #[inline(always)]
    unsafe fn ascii<'a>(self, o: Obj) -> Option<&'a str> {
        let base = o.cast::<u8>().cast_const();
        let want = Self::COMPACT | Self::ASCII | self.ready;
        // SAFETY: per the contract: the flags and the length are in the
        // header every string has; a compact ASCII string's text, of that
        // length, follows the header, and is ASCII.
        unsafe {
            if *base.add(Self::STATE) & want != want {
                return None;
            }
            let len = usize::try_from(*base.add(Self::LENGTH).cast::<isize>()).ok()?;
            let bytes = std::slice::from_raw_parts(base.add(self.text), len);
            Some(std::str::from_utf8_unchecked(bytes))
        }
    }
}

impl<'a> Access<'a> for Shared<'a> {
    unsafe fn text(self, o: Obj) -> Option<&'a str> {
        /// Characters copied on the stack (more go into the arena).
        const STACK: usize = 128;
        // SAFETY: per the contract and the module's notes: `o` is an
        // exact, ready `str` (neither call then raises), and the buffer
        // has room for its `n` characters, which `PyUnicode_AsUCS4`
        // writes before they are read.
        unsafe {
            if let Some(text) = self.layout.and_then(|l| l.ascii(o)) {
                return Some(text);
            }
            let n = usize::try_from(ffi::PyUnicode_GetLength(o)).ok()?;
            if n == 0 {
                return Some("");
            }
            if n > SHARED_TEXT {
                return None;
            }
            let mut stack = [std::mem::MaybeUninit::<u32>::uninit(); STACK];
            let buf: *mut u32 = if n <= STACK {
                stack.as_mut_ptr().cast()
            } else {
                self.bump.alloc_slice_fill_copy(n, 0u32).as_mut_ptr()
            };
            let len = ffi::Py_ssize_t::try_from(n).ok()?;
            if ffi::PyUnicode_AsUCS4(o, buf, len, 0).is_null() {
                return None;
            }
            let chars = std::slice::from_raw_parts(buf.cast_const(), n);
            let mut s = bumpalo::collections::String::with_capacity_in(4 * n, self.bump);
            for &c in chars {
                // A lone surrogate has no UTF-8: "ask", as `utf8_of` says.
                s.push(char::from_u32(c)?);
            }
            Some(s.into_bump_str())
        }
    }

    unsafe fn lookup(self, d: Obj, key: Obj, text: &str) -> Option<Option<Obj>> {
        // SAFETY: per the contract; `PyDict_Next` reads, and the keys
        // and values it yields are borrowed from `d`.
        unsafe {
            // Every key an exact `str`, the key object itself among them
            // (most often: models share their key objects)...
            let (mut pos, mut k, mut v) = (0, std::ptr::null_mut(), std::ptr::null_mut());
            let mut found = None;
            while ffi::PyDict_Next(d, &mut pos, &mut k, &mut v) != 0 {
                if ffi::Py_TYPE(k) != &raw mut ffi::PyUnicode_Type {
                    return None;
                }
                if k == key {
                    found = Some(v);
                }
            }
            if found.is_some() {
                return Some(found);
            }
            // ...else one of the same text.
            let chars = ffi::Py_ssize_t::try_from(text.chars().count()).ok()?;
            pos = 0;
            while ffi::PyDict_Next(d, &mut pos, &mut k, &mut v) != 0 {
                if ffi::PyUnicode_GetLength(k) == chars && self.text(k)? == text {
                    return Some(Some(v));
                }
            }
            Some(None)
        }
    }
}

/// The keys a plan reads records with: its key objects and their text.
#[derive(Clone, Copy)]
pub struct Keys<'a> {
    pub objects: &'a [Obj],
    pub texts: &'a [Arc<str>],
}

/// What every view of a record shares: the plan's keys and how values
/// are read.
pub struct Reader<'a, A> {
    pub keys: Keys<'a>,
    pub access: A,
}

/// A Python value a plan reads: a borrowed pointer, valid while the
/// record it was read from is (the caller holds the record).
///
/// No Python code runs while a record is walked, so nothing in it is
/// changed or freed meanwhile: values are read by type (exact built-in
/// types only, by functions that run no Python code), a dict's entries
/// by `PyDict_Next`, a key not met in order through [`Access::lookup`].
///
/// Small (three words), as views are made for each value read and
/// returned through memory.
pub struct PyView<'r, 'a, A> {
    o: Obj,
    /// Of a dict: where its next entry is ([`ffi::PyDict_Next`]'s
    /// position). The plan asks for its keys in the order records most
    /// often give them, so the next entry is most often the one asked
    /// for (its key the plan's own key object, adopted): read in order,
    /// with no lookup.
    next: Cell<ffi::Py_ssize_t>,
    r: &'r Reader<'a, A>,
}

impl<'r, 'a, A: Access<'a>> PyView<'r, 'a, A> {
    /// The view of record `o`.
    ///
    /// # Safety
    /// `o` is live for `'a`, read as the module's notes say.
    pub unsafe fn top(o: Obj, r: &'r Reader<'a, A>) -> Self {
        PyView {
            o,
            next: Cell::new(0),
            r,
        }
    }

    /// Of a dict: the position after the last entry read in order (as
    /// `PyDict_Next` takes it).
    pub fn position(&self) -> ffi::Py_ssize_t {
        self.next.get()
    }

    /// The view of `o`, borrowed from this one's object (non-null).
    #[inline(always)]
    fn child(&self, o: Obj) -> Self {
        PyView {
            o,
            next: Cell::new(0),
            r: self.r,
        }
    }
}

/// True when every key of dict `d` is an exact `str`, so that a lookup
/// in it runs no Python code.
///
/// # Safety
/// `d` is a live exact dict, under the GIL.
unsafe fn str_keys(d: Obj) -> bool {
    let (mut pos, mut k, mut v) = (0, std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: per the contract; `PyDict_Next` runs no Python code, and
    // the keys it yields are live (borrowed from `d`).
    unsafe {
        while ffi::PyDict_Next(d, &mut pos, &mut k, &mut v) != 0 {
            if ffi::Py_TYPE(k) != &raw mut ffi::PyUnicode_Type {
                return false;
            }
        }
    }
    true
}

/// [`crate::plan::utf8`] of a raw pointer.
///
/// # Safety
/// `s` is a live object for `'a`, under the GIL.
pub unsafe fn utf8_of<'a>(s: Obj) -> Option<&'a str> {
    let mut len: ffi::Py_ssize_t = 0;
    // SAFETY: per the contract; the text CPython returns is cached in the
    // object and lives as long as it.
    unsafe {
        let p = PyUnicode_AsUTF8AndSize(s, &mut len);
        if p.is_null() {
            ffi::PyErr_Clear();
            return None;
        }
        let bytes = std::slice::from_raw_parts(p.cast::<u8>(), usize::try_from(len).ok()?);
        // CPython's UTF-8 of a str is valid UTF-8.
        Some(std::str::from_utf8_unchecked(bytes))
    }
}

/// Item `i` of `o`, borrowed, if `o` is an exact list that long.
///
/// # Safety
/// `o` is live, read as the module's notes say.
#[inline(always)]
pub unsafe fn item_at(o: Obj, i: usize) -> Option<Obj> {
    // SAFETY: per the contract; the index is below the size, so that
    // `PyList_GetItem` neither fails nor raises.
    unsafe {
        if ffi::Py_TYPE(o) != &raw mut ffi::PyList_Type {
            return None;
        }
        let i = ffi::Py_ssize_t::try_from(i).ok()?;
        if i >= ffi::PyList_Size(o) {
            return None;
        }
        Some(ffi::PyList_GetItem(o, i))
    }
}

/// The scalar a chain reads of `o`, as [`crate::convert::ToValue`] would
/// convert it, its text (if a string) by `text`; a container is its
/// length, anything but the exact built-in types is [`Borrowed::Other`];
/// `None` for a string without text.
///
/// # Safety
/// `o` is a live object for `'a`, read as the module's notes say.
///
/// Inlined: returned through memory, the value's tag and payload were
/// reloaded as one wider word, a store-forwarding stall costing about a
/// tenth of a valid record's walk.
#[inline(always)]
pub unsafe fn read_as<'a>(
    o: Obj,
    text: impl FnOnce(Obj) -> Option<&'a str>,
) -> Option<Borrowed<'a>> {
    // SAFETY: per the contract; each call below is made on an object of
    // the exact type it takes, and runs no Python code.
    unsafe {
        if o == ffi::Py_None() {
            return Some(Borrowed::Null);
        }
        let t = ffi::Py_TYPE(o);
        if t == &raw mut ffi::PyUnicode_Type {
            return text(o).map(Borrowed::Str);
        }
        if t == &raw mut ffi::PyLong_Type {
            let mut overflow = 0;
            let i = ffi::PyLong_AsLongLongAndOverflow(o, &mut overflow);
            return Some(if overflow != 0 {
                Borrowed::BigInt
            } else {
                Borrowed::Int(i)
            });
        }
        if t == &raw mut ffi::PyBool_Type {
            return Some(Borrowed::Bool(o == ffi::Py_True()));
        }
        if t == &raw mut ffi::PyFloat_Type {
            return Some(Borrowed::Float(ffi::PyFloat_AsDouble(o)));
        }
        if t == &raw mut ffi::PyDict_Type {
            return Some(Borrowed::Dict(usize::try_from(ffi::PyDict_Size(o)).ok()?));
        }
        if t == &raw mut ffi::PyList_Type {
            return Some(Borrowed::List(usize::try_from(ffi::PyList_Size(o)).ok()?));
        }
    }
    Some(Borrowed::Other)
}

/// [`read_as`] under the GIL.
///
/// # Safety
/// `o` is a live object for `'a`, under the GIL.
#[inline(always)]
pub unsafe fn read<'a>(o: Obj) -> Option<Borrowed<'a>> {
    // SAFETY: per the contract.
    unsafe { read_as(o, |o| utf8_of(o)) }
}

impl<'a, A: Access<'a>> View for PyView<'_, 'a, A> {
    #[inline(always)]
    fn read(&self) -> Option<Borrowed<'_>> {
        // SAFETY: `o` is live while this view is (see `PyView`).
        unsafe { read_as(self.o, |o| self.r.access.text(o)) }
    }

    fn items_pass(&self, n: usize, chain: &Native) -> bool {
        const BATCH: usize = 16;
        // SAFETY: `o` is live (see `PyView`).
        let list = unsafe {
            ffi::Py_TYPE(self.o) == &raw mut ffi::PyList_Type
                && usize::try_from(ffi::PyList_Size(self.o)).is_ok_and(|len| n <= len)
        };
        if !list {
            return false;
        }
        let mut buf = [Borrowed::Null; BATCH];
        let mut i = 0;
        while i < n {
            let k = (n - i).min(BATCH);
            for (j, b) in buf[..k].iter_mut().enumerate() {
                // SAFETY: `o` is a live list (see `PyView`) of `n` items
                // at least, which nothing changes while the batch is read
                // and checked: `PyList_GetItem` of an index below `n`
                // neither fails nor raises, and the item is borrowed.
                let x = unsafe {
                    let p = ffi::PyList_GetItem(self.o, (i + j) as ffi::Py_ssize_t);
                    read_as(p, |o| self.r.access.text(o))
                };
                match x {
                    Some(x) if scalar(x) => *b = x,
                    _ => return false,
                }
            }
            if chain.first_failing_borrowed(&buf[..k]) != k {
                return false;
            }
            i += k;
        }
        true
    }

    // Inlined, as `read` is: a view returned through memory was copied
    // by wider loads than the stores that wrote it (a store-forwarding
    // stall on every property read).
    #[inline(always)]
    fn field(&self, slot: usize) -> Option<Option<Self>> {
        let key = self.r.keys.objects[slot];
        // SAFETY: `o` is live (see `PyView`); the dict is read only if it
        // is an exact one, its next entry by `PyDict_Next` (which checks
        // the position against the entries the dict has), else through
        // `lookup` with a key the plan holds; the value either returns is
        // borrowed from the dict.
        unsafe {
            if ffi::Py_TYPE(self.o) != &raw mut ffi::PyDict_Type {
                return None;
            }
            // The next entry, if its key is the plan's key object: the
            // entry a lookup would find (a dict's keys are unique).
            let (mut pos, mut k, mut v) =
                (self.next.get(), std::ptr::null_mut(), std::ptr::null_mut());
            if ffi::PyDict_Next(self.o, &mut pos, &mut k, &mut v) != 0 && k == key {
                self.next.set(pos);
                return Some(Some(self.child(v)));
            }
            let found = self
                .r
                .access
                .lookup(self.o, key, &self.r.keys.texts[slot])?;
            Some(found.map(|v| self.child(v)))
        }
    }

    #[inline(always)]
    fn item(&self, i: usize) -> Option<Self> {
        // SAFETY: `o` is live (see `PyView`).
        unsafe { item_at(self.o, i).map(|v| self.child(v)) }
    }
}

/// Records at least for [`share_out`] to start other threads: a thread
/// costs about as much to start as a hundred records to read.
const SHARE_MIN: usize = 512;

/// Records a thread of [`share_out`] takes at once.
const SHARE_PART: usize = 256;

/// `f` of each of `records`, in order, on up to `threads` threads (the
/// caller's among them) when there are enough records: each thread takes
/// the next part left until none is, so that one that starts late or is
/// slowed takes fewer. `f` reads with a [`Shared`] reader of `layout`
/// whose arena is emptied after each record.
///
/// # Safety
/// The caller holds the GIL and every record, and runs no Python code
/// until this returns; `f` only reads the record it is given, as the
/// module's notes say.
pub unsafe fn share_out<R: Copy + Default + Send>(
    records: &[Obj],
    threads: usize,
    layout: Option<Layout>,
    f: impl Fn(Obj, Shared<'_>) -> R + Sync,
) -> Vec<R> {
    let parts: Vec<Records<'_>> = records.chunks(SHARE_PART).map(Records).collect();
    let threads = if records.len() < SHARE_MIN {
        1
    } else {
        threads.clamp(1, parts.len())
    };
    let next = AtomicUsize::new(0);
    let walk = || {
        let mut bump = Bump::new();
        let mut found = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(part) = parts.get(i) else {
                return found;
            };
            let part = part.get();
            let mut out = Vec::with_capacity(part.len());
            for &o in part {
                out.push(f(
                    o,
                    Shared {
                        bump: &bump,
                        layout,
                    },
                ));
                bump.reset();
            }
            found.push((i * SHARE_PART, out));
        }
    };
    let mut out = vec![R::default(); records.len()];
    std::thread::scope(|s| {
        // A thread the system refuses leaves its parts to the others.
        let others: Vec<_> = (1..threads)
            .map_while(|_| std::thread::Builder::new().spawn_scoped(s, walk).ok())
            .collect();
        let mine = walk();
        let theirs = others.into_iter().map(|h| match h.join() {
            Ok(found) => found,
            Err(panic) => std::panic::resume_unwind(panic),
        });
        for (at, part) in std::iter::once(mine).chain(theirs).flatten() {
            out[at..at + part.len()].copy_from_slice(&part);
        }
    });
    out
}

/// Records' addresses, shared with the threads that read them.
#[derive(Clone, Copy)]
struct Records<'a>(&'a [Obj]);

// SAFETY: the records are read as the module's notes say, while the
// thread holding the GIL (and the records) waits.
unsafe impl Send for Records<'_> {}
// SAFETY: as for `Send`.
unsafe impl Sync for Records<'_> {}

impl<'a> Records<'a> {
    fn get(self) -> &'a [Obj] {
        self.0
    }
}
