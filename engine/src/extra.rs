//! Further engine functions of MuranoPL expressions (`base64encode`,
//! `randomName`, `bind`, `patch`, legacy `substr`, ...), after
//! `murano/engine/system/yaql_functions.py` and the legacy `type()` of
//! `murano/dsl/yaql_functions.py`.

use runtime::ErrorKind;
use std::sync::Arc;

use runtime::registry::{p, ArgIn, Args, Cx, Form, Registry, Ty};
use runtime::{Error, Result, Value};

use crate::executor::ExecutorOf;

fn is_object(v: &Value) -> bool {
    matches!(v, Value::Object(_))
}

fn never(_: &Cx, _: Args) -> Result<Value> {
    Ok(Value::Null)
}

/// True when `r` runs in yaql 0.2 legacy mode (every function callable as
/// a method): probed through the public registry API with a hidden name.
fn is_legacy(r: &mut Registry) -> bool {
    const PROBE: &str = "#murano.extra.legacyProbe";
    if r.get(PROBE).is_none() {
        r.function(PROBE, vec![], never).no_kw();
    }
    r.all_no_kw(PROBE, Form::Method)
}

// ---------------------------------------------------------------- base64

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

pub fn b64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        out.push(B64[(n >> 18) as usize & 63] as char);
        out.push(B64[(n >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 {
            B64[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        out.push(if chunk.len() > 2 {
            B64[n as usize & 63] as char
        } else {
            '='
        });
    }
    out
}

/// Python's non-strict `base64.b64decode`: characters outside the
/// alphabet are discarded, the padding must be right.
fn b64_decode(s: &str) -> Result<Vec<u8>> {
    if !s.is_ascii() {
        return Err(Error::value(
            "string argument should contain only ASCII characters",
        ));
    }
    let mut vals = Vec::new();
    let mut pads = 0usize;
    for c in s.bytes() {
        if c == b'=' {
            // Python stops at padding once the quad is complete.
            pads += 1;
            if (vals.len() + pads).is_multiple_of(4) {
                break;
            }
            continue;
        }
        if let Some(i) = B64.iter().position(|&x| x == c) {
            if pads > 0 {
                // data after a partial padding: Python treats the padding
                // as discarded and continues
                pads = 0;
            }
            vals.push(i as u32);
        }
    }
    match vals.len() % 4 {
        0 => {}
        1 => {
            return Err(Error::new(
                "Error",
                format!(
                    "Invalid base64-encoded string: number of data characters ({}) cannot be 1 more than a multiple of 4",
                    vals.len()
                ),
            ))
        }
        r => {
            if r + pads < 4 {
                return Err(Error::new("Error", "Incorrect padding"));
            }
        }
    }
    let mut out = Vec::with_capacity(vals.len() * 3 / 4);
    for chunk in vals.chunks(4) {
        let mut n = 0u32;
        for (i, v) in chunk.iter().enumerate() {
            n |= v << (18 - 6 * i);
        }
        out.push((n >> 16) as u8);
        if chunk.len() > 2 {
            out.push((n >> 8) as u8);
        }
        if chunk.len() > 3 {
            out.push(n as u8);
        }
    }
    Ok(out)
}

/// `base64encode(value)`.
fn base64encode(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::str(b64_encode(a.str(0).as_bytes())))
}

/// `base64decode(value)`.
fn base64decode(_: &Cx, a: Args) -> Result<Value> {
    let bytes = b64_decode(a.str(0))?;
    String::from_utf8(bytes).map(Value::str).map_err(|e| {
        Error::new(
            ErrorKind::UnicodeDecodeError,
            format!("'utf-8' codec can't decode: {e}"),
        )
    })
}

// ------------------------------------------------------------------ bind

/// Python `str()` of a value.
fn py_str(v: &Value) -> String {
    match v {
        Value::Str(s) => s.to_string(),
        other => runtime::pyrepr::repr(other),
    }
}

fn is_word(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// `_convert_macro_parameter`: `{key}` placeholders replaced, or the whole
/// macro looked up.
fn convert_macro(macro_: &str, mappings: &runtime::Dict) -> Result<Value> {
    let chars: Vec<char> = macro_.chars().collect();
    let mut out = String::new();
    let mut replaced = false;
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '{' {
            let mut j = i + 1;
            while j < chars.len() && is_word(chars[j]) {
                j += 1;
            }
            if j > i + 1 && j < chars.len() && chars[j] == '}' {
                let key: String = chars[i + 1..j].iter().collect();
                let v = mappings
                    .get(&Value::str(key))
                    .cloned()
                    .unwrap_or(Value::Null);
                out.push_str(&py_str(&v));
                replaced = true;
                i = j + 1;
                continue;
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    if replaced {
        return Ok(Value::str(out));
    }
    mappings.get(&Value::str(macro_)).cloned().ok_or_else(|| {
        Error::new(
            ErrorKind::KeyError,
            runtime::pyrepr::repr(&Value::str(macro_)),
        )
    })
}

fn bind_value(obj: &Value, mappings: &runtime::Dict) -> Result<Value> {
    match obj {
        Value::Str(s) if s.starts_with('$') => {
            let v = convert_macro(&s[1..], mappings)?;
            Ok(if v.is_null() { obj.clone() } else { v })
        }
        Value::List(l) => Ok(Value::list(
            l.iter()
                .map(|x| bind_value(x, mappings))
                .collect::<Result<_>>()?,
        )),
        Value::Dict(d) => {
            let mut out = runtime::Dict::default();
            for (k, v) in d.iter() {
                out.insert(bind_value(k, mappings)?, bind_value(v, mappings)?);
            }
            Ok(Value::dict(out))
        }
        other => Ok(other.clone()),
    }
}

/// `obj.bind(mappings)`.
fn bind(cx: &Cx, a: Args) -> Result<Value> {
    let obj = stdlib::finalize(cx.env, a.get(0).clone())?;
    let Value::Dict(ref m) = stdlib::finalize(cx.env, a.get(1).clone())? else {
        return Err(Error::type_("mappings must be a mapping"));
    };
    bind_value(&obj, m)
}

// ---------------------------------------------------------------- substr

/// Legacy `string.substr(start, length => -1)`: delegates to `substring`.
fn substr(cx: &Cx, a: Args) -> Result<Value> {
    let pos = [
        ArgIn::Val(a.get(0).clone()),
        ArgIn::Val(a.get(1).clone()),
        ArgIn::Val(a.get(2).clone()),
    ];
    cx.env
        .registry()
        .call(cx, "substring", None, Form::Method, &pos, &[])
}

/// Legacy `collection.firstOrDefault(default => null)`.
fn first_or_default(cx: &Cx, a: Args) -> Result<Value> {
    let mut it = cx.iter(a.get(0))?;
    match it.next() {
        Some(v) => v,
        None => Ok(a.get(1).clone()),
    }
}

// ------------------------------------------------------------ randomName

fn int2base(mut x: u128, base: u128) -> String {
    const DIGS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    if x == 0 {
        return "0".into();
    }
    let mut d = Vec::new();
    while x > 0 {
        d.push(DIGS[(x % base) as usize]);
        x /= base;
    }
    d.reverse();
    String::from_utf8(d).unwrap_or_default()
}

/// Where the time part of a replayable run's `randomName()` counts from
/// (2020-01-01T00:00:00Z, in milliseconds): with a seed, the name depends
/// on the seed and the run alone, not on the wall clock.
const SEEDED_EPOCH_MS: u128 = 1_577_836_800_000;

/// `randomName()`: 5 random lowercase letters, the time in milliseconds in
/// base 36 (first 8 digits) and a counter in base 36. The letters and the
/// counter are the execution's; the time is the wall clock's, or, when
/// the execution is seeded, a fixed epoch plus its virtual clock.
fn random_name(cx: &Cx, _: Args) -> Result<Value> {
    let ex = cx.executor().ok();
    let counter = ex.as_ref().map_or(1, |ex| ex.next_name_counter());
    let mut r = runtime::rand::draw(cx.env);
    let mut name = String::new();
    for _ in 0..5 {
        name.push((b'a' + (r % 26) as u8) as char);
        r /= 26;
    }
    let ms = match &ex {
        Some(ex) if ex.rng().seeded() => SEEDED_EPOCH_MS + (ex.scheduler().now() * 1000.0) as u128,
        _ => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0),
    };
    let ts = int2base(ms, 36);
    name.push_str(&ts[..ts.len().min(8)]);
    name.push_str(&int2base(u128::from(counter), 36));
    Ok(Value::str(name))
}

// ----------------------------------------------------------------- patch

enum PatchErr {
    /// `jsonpointer.JsonPointerException`: the patch stops, the document
    /// so far is the result.
    Pointer,
    /// Any other error propagates.
    Fail(Error),
}

impl From<Error> for PatchErr {
    fn from(e: Error) -> Self {
        PatchErr::Fail(e)
    }
}

type PResult<T> = std::result::Result<T, PatchErr>;

fn conflict(msg: &str) -> PatchErr {
    PatchErr::Fail(Error::new(ErrorKind::JsonPatchConflict, msg))
}

fn invalid(msg: &str) -> PatchErr {
    PatchErr::Fail(Error::new(ErrorKind::InvalidJsonPatch, msg))
}

fn parse_pointer(path: &str) -> PResult<Vec<String>> {
    if path.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = path.strip_prefix('/') else {
        return Err(PatchErr::Fail(Error::new(
            ErrorKind::JsonPointerException,
            "Location must start with /",
        )));
    };
    Ok(rest
        .split('/')
        .map(|p| p.replace("~1", "/").replace("~0", "~"))
        .collect())
}

/// A list index: `Some(None)` for `-`.
fn list_index(part: &str) -> PResult<Option<usize>> {
    if part == "-" {
        return Ok(None);
    }
    let ok = part == "0"
        || (!part.is_empty() && !part.starts_with('0') && part.bytes().all(|b| b.is_ascii_digit()));
    if !ok {
        return Err(PatchErr::Pointer);
    }
    part.parse::<usize>()
        .map(Some)
        .map_err(|_| PatchErr::Pointer)
}

fn walk_mut<'a>(doc: &'a mut Value, parts: &[String]) -> PResult<&'a mut Value> {
    let mut cur = doc;
    for part in parts {
        cur = match cur {
            Value::Dict(d) => Arc::make_mut(d)
                .get_mut(&Value::str(part.as_str()))
                .ok_or(PatchErr::Pointer)?,
            Value::List(l) => {
                let i = list_index(part)?.ok_or(PatchErr::Pointer)?;
                Arc::make_mut(l).get_mut(i).ok_or(PatchErr::Pointer)?
            }
            _ => return Err(PatchErr::Pointer),
        };
    }
    Ok(cur)
}

fn resolve(doc: &Value, parts: &[String]) -> PResult<Value> {
    let mut cur = doc.clone();
    for part in parts {
        cur = match &cur {
            Value::Dict(d) => d
                .get(&Value::str(part.as_str()))
                .cloned()
                .ok_or(PatchErr::Pointer)?,
            Value::List(l) => {
                let i = list_index(part)?.ok_or(PatchErr::Pointer)?;
                l.get(i).cloned().ok_or(PatchErr::Pointer)?
            }
            _ => return Err(PatchErr::Pointer),
        };
    }
    Ok(cur)
}

fn op_add(doc: &mut Value, parts: &[String], value: Value) -> PResult<()> {
    let Some((last, init)) = parts.split_last() else {
        *doc = value;
        return Ok(());
    };
    match walk_mut(doc, init)? {
        Value::Dict(d) => {
            Arc::make_mut(d).insert(Value::str(last.as_str()), value);
        }
        Value::List(l) => {
            let l = Arc::make_mut(l);
            match list_index(last)? {
                None => l.push(value),
                Some(i) if i > l.len() => return Err(conflict("can't insert outside of list")),
                Some(i) => l.insert(i, value),
            }
        }
        _ => return Err(PatchErr::Fail(Error::type_("invalid document type"))),
    }
    Ok(())
}

fn op_remove(doc: &mut Value, parts: &[String]) -> PResult<()> {
    let Some((last, init)) = parts.split_last() else {
        return Err(PatchErr::Fail(Error::type_(
            "can't remove the whole document",
        )));
    };
    match walk_mut(doc, init)? {
        Value::Dict(d) => {
            if Arc::make_mut(d)
                .shift_remove(&Value::str(last.as_str()))
                .is_none()
            {
                return Err(conflict(&format!(
                    "can't remove a non-existent object '{last}'"
                )));
            }
        }
        Value::List(l) => {
            let l = Arc::make_mut(l);
            match list_index(last)? {
                Some(i) if i < l.len() => {
                    l.remove(i);
                }
                Some(_) => {
                    return Err(conflict(&format!(
                        "can't remove a non-existent object '{last}'"
                    )))
                }
                None => return Err(PatchErr::Fail(Error::type_("invalid list index"))),
            }
        }
        _ => return Err(PatchErr::Fail(Error::type_("invalid document type"))),
    }
    Ok(())
}

fn op_replace(doc: &mut Value, parts: &[String], value: Value) -> PResult<()> {
    let Some((last, init)) = parts.split_last() else {
        *doc = value;
        return Ok(());
    };
    match walk_mut(doc, init)? {
        Value::Dict(d) => {
            let d = Arc::make_mut(d);
            let k = Value::str(last.as_str());
            match d.get_mut(&k) {
                Some(slot) => *slot = value,
                None => {
                    return Err(conflict(&format!(
                        "can't replace a non-existent object '{last}'"
                    )))
                }
            }
        }
        Value::List(l) => {
            let l = Arc::make_mut(l);
            match list_index(last)? {
                Some(i) if i < l.len() => l[i] = value,
                _ => return Err(conflict("can't replace outside of list")),
            }
        }
        _ => return Err(PatchErr::Fail(Error::type_("invalid document type"))),
    }
    Ok(())
}

fn member<'a>(op: &'a runtime::Dict, name: &str) -> Option<&'a Value> {
    op.get(&Value::str(name))
}

fn apply_op(doc: &mut Value, op: &Value) -> PResult<()> {
    let Value::Dict(op) = op else {
        return Err(invalid("Operation must be a dictionary"));
    };
    let Some(kind) = member(op, "op") else {
        return Err(invalid("Operation does not contain 'op' member"));
    };
    let kind = kind.as_str().unwrap_or("").to_string();
    let path = match member(op, "path") {
        Some(Value::Str(s)) => parse_pointer(s)?,
        _ => return Err(invalid("Operation does not contain 'path' member")),
    };
    let value = || {
        member(op, "value")
            .cloned()
            .ok_or_else(|| invalid("The operation does not contain a 'value' member"))
    };
    let from = || match member(op, "from") {
        Some(Value::Str(s)) => parse_pointer(s),
        _ => Err(invalid("The operation does not contain a 'from' member")),
    };
    match kind.as_str() {
        "add" => op_add(doc, &path, value()?),
        "remove" => op_remove(doc, &path),
        "replace" => op_replace(doc, &path, value()?),
        "move" => {
            let from = from()?;
            let v = resolve(doc, &from)?;
            if from == path {
                return Ok(());
            }
            if path.len() > from.len() && path[..from.len()] == from[..] {
                return Err(conflict("Cannot move values into their own children"));
            }
            op_remove(doc, &from)?;
            op_add(doc, &path, v)
        }
        "copy" => {
            let from = from()?;
            let v = resolve(doc, &from)?;
            op_add(doc, &path, v)
        }
        "test" => {
            let expected = value()?;
            match resolve(doc, &path) {
                Ok(v) if v == expected => Ok(()),
                Ok(v) => Err(PatchErr::Fail(Error::new(
                    ErrorKind::JsonPatchTestFailed,
                    format!(
                        "{} ({}) is not equal to tested value {} ({})",
                        runtime::pyrepr::repr(&v),
                        v.type_name(),
                        runtime::pyrepr::repr(&expected),
                        expected.type_name()
                    ),
                ))),
                Err(PatchErr::Pointer) => Err(PatchErr::Fail(Error::new(
                    ErrorKind::JsonPatchTestFailed,
                    "member not found",
                ))),
                Err(e) => Err(e),
            }
        }
        other => Err(invalid(&format!(
            "Unknown operation {}",
            runtime::pyrepr::repr(&Value::str(other))
        ))),
    }
}

/// `obj.patch(jsonPatch)`: RFC 6902; a pointer that does not resolve stops
/// the patch and returns the document as patched so far.
fn patch(cx: &Cx, a: Args) -> Result<Value> {
    let mut doc = stdlib::finalize(cx.env, a.get(0).clone())?;
    let ops = match stdlib::finalize(cx.env, a.get(1).clone())? {
        Value::List(ref l) => l.to_vec(),
        other => vec![other],
    };
    for op in &ops {
        match apply_op(&mut doc, op) {
            Ok(()) => {}
            Err(PatchErr::Pointer) => return Ok(doc),
            Err(PatchErr::Fail(e)) => return Err(e),
        }
    }
    Ok(doc)
}

// ----------------------------------------------------------------- other

/// `logger(name)`: a new `io.murano.system.Logger`.
fn logger(cx: &Cx, a: Args) -> Result<Value> {
    let pos = [ArgIn::Val(Value::str("io.murano.system.Logger"))];
    let named = [(
        std::sync::Arc::from("loggerName"),
        ArgIn::Val(a.get(0).clone()),
    )];
    cx.env
        .registry()
        .call(cx, "new", None, Form::Function, &pos, &named)
}

/// Legacy (Format <= 1.3) `type(obj)`: the class name.
fn type_legacy(cx: &Cx, a: Args) -> Result<Value> {
    match a.get(0) {
        Value::Object(o) => Ok(Value::str(&*cx.executor()?.class(&o.class)?.name)),
        _ => Ok(Value::Null),
    }
}

/// Registers the functions.
pub fn register(r: &mut Registry) {
    let legacy = is_legacy(r);
    r.extension("base64encode", vec![p("value", Ty::Str)], base64encode);
    r.extension("base64decode", vec![p("value", Ty::Str)], base64decode);
    r.extension(
        "bind",
        vec![p("obj", Ty::Any).nullable(), p("mappings", Ty::Mapping)],
        bind,
    );
    r.extension(
        "patch",
        vec![p("obj", Ty::Any).nullable(), p("patch", Ty::Any).nullable()],
        patch,
    );
    r.function("randomName", vec![], random_name);
    r.function("logger", vec![p("loggerName", Ty::Str).nullable()], logger);
    if legacy {
        r.extension(
            "substr",
            vec![
                p("string", Ty::Str),
                p("start", Ty::Int),
                p("length", Ty::Int).default(-1i64),
            ],
            substr,
        );
        r.extension(
            "firstOrDefault",
            vec![
                p("collection", Ty::Iterable),
                p("default", Ty::Any).nullable().opt(),
            ],
            first_or_default,
        );
        r.function(
            "type",
            vec![p("object", Ty::Check(|v| is_object(v) || v.is_null())).nullable()],
            type_legacy,
        );
    }
}
