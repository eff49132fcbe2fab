//! Evaluation of UI expressions: the compiled templates (`Tpl`),
//! deterministic ids, the YAQL host holding the templates, and the
//! dashboard's functions (`repeat`, `generateHostname`, `name`, `ref`,
//! `encryptData`) the templates compile against.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use compiler::murano::{LoadOptions, Node, NodeKind, Pos, Template, TemplateKind};
use compiler::Program;
use runtime::ctx::Frame;
use runtime::host::Host;
use runtime::registry::{p, ArgIn, Args, Cx, Registry, Ty};
use runtime::{Dict, Env, Error, ErrorKind, Options, Result, Value};

use super::common::{ui_error, COMPILE, MARK, MAX_DEPTH, MAX_REPEAT};

/// A compiled piece of UI YAML: constants and YAQL expressions.
#[derive(Clone)]
pub enum Tpl {
    /// A constant.
    Const(Value),
    /// A YAQL expression.
    Expr {
        /// Compiled program.
        prog: Arc<Program>,
        /// Its text.
        src: Arc<str>,
        /// Where it is.
        pos: Pos,
    },
    /// A sequence.
    List(Vec<Tpl>),
    /// A mapping (keys may be expressions).
    Dict(Vec<(Tpl, Tpl)>),
}

impl Tpl {
    pub(super) fn compile(t: &Template) -> Result<Tpl> {
        Ok(match &t.kind {
            TemplateKind::Value(v) => Tpl::Const(v.clone()),
            TemplateKind::Expr { src, .. } => Tpl::Expr {
                prog: Arc::new(compile_yaql(src, &t.pos)?),
                src: src.clone(),
                pos: t.pos.clone(),
            },
            TemplateKind::List(items) => {
                Tpl::List(items.iter().map(Tpl::compile).collect::<Result<_>>()?)
            }
            TemplateKind::Dict(items) => Tpl::Dict(
                items
                    .iter()
                    .map(|(k, v)| Ok((Tpl::compile(k)?, Tpl::compile(v)?)))
                    .collect::<Result<_>>()?,
            ),
        })
    }

    pub(super) fn from_node(n: &Node) -> Result<Tpl> {
        check_yaql(n)?;
        Tpl::compile(&n.to_template(LoadOptions { legacy: true })?)
    }

    /// True when this is a constant.
    pub fn is_const(&self) -> bool {
        matches!(self, Tpl::Const(_))
    }
}

/// A plain scalar that looks like YAQL (`$...`, `func(...`) but does not
/// parse would silently become a string (as in the dashboard); it is an
/// error here, with the parser's message.
fn check_yaql(n: &Node) -> Result<()> {
    match &n.kind {
        NodeKind::Scalar {
            value,
            style: compiler::murano::ScalarStyle::Plain,
            tag: None,
        } => {
            let t = value.trim();
            let looks = t.starts_with('$')
                || t.find('(').is_some_and(|i| {
                    i > 0
                        && t[..i]
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_')
                        && t[..i].starts_with(|c: char| c.is_ascii_alphabetic())
                });
            if looks {
                if let Err(e) = compiler::yaql::parse(
                    t,
                    compiler::yaql::LexOptions {
                        legacy: true,
                        murano: false,
                    },
                ) {
                    return Err(n.pos.error(
                        ErrorKind::YaqlGrammarException,
                        format!("bad YAQL expression `{t}`: {}", e.message()),
                    ));
                }
            }
            Ok(())
        }
        NodeKind::Scalar { .. } => Ok(()),
        NodeKind::Seq(items) => items.iter().try_for_each(check_yaql),
        NodeKind::Map(entries) => entries
            .iter()
            .try_for_each(|(k, v)| check_yaql(k).and_then(|_| check_yaql(v))),
    }
}

fn compile_yaql(src: &str, pos: &Pos) -> Result<Program> {
    compiler::compile(src, &registry(), COMPILE).map_err(|e| {
        Error::new(
            e.kind().to_string(),
            format!("{pos}: {} in `{src}`", e.message()),
        )
    })
}

/// Deterministic ids and random names.
pub struct IdGen {
    state: u64,
    hostnames: u64,
}

impl IdGen {
    /// A generator seeded by text (the package name).
    pub fn new(seed: &str) -> IdGen {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in seed.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        IdGen {
            state: h,
            hostnames: 0,
        }
    }
    pub(super) fn next(&mut self) -> u64 {
        // splitmix64
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// A uuid4-shaped id (`xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`).
    pub fn uuid(&mut self) -> String {
        let a = self.next();
        let b = self.next();
        let a = (a & 0xffff_ffff_ffff_0fff) | 0x4000;
        let b = (b & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000;
        format!(
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xffff,
            b >> 48,
            b & 0xffff_ffff_ffff
        )
    }
    /// A random-looking host name (`generateHostname` without a pattern).
    pub fn hostname(&mut self) -> String {
        self.hostnames += 1;
        let mut s = String::new();
        for _ in 0..8 {
            s.push((b'a' + (self.next() % 26) as u8) as char);
        }
        format!("{s}{}", self.hostnames)
    }
}

/// The YAQL host of one UI evaluation: templates, the application name and
/// the id generator, reached by the dashboard functions.
pub struct UiHost {
    pub(super) templates: HashMap<String, Tpl>,
    pub(super) app_name: String,
    pub(super) ids: Arc<Mutex<IdGen>>,
    pub(super) refs: Mutex<HashMap<String, Value>>,
    pub(super) depth: AtomicUsize,
}

impl Host for UiHost {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn as_any_arc(self: Arc<Self>) -> Arc<dyn std::any::Any + Send + Sync> {
        self
    }
    fn call_method(
        &self,
        _: &Cx,
        _: &Value,
        _: &str,
        _: &[ArgIn],
        _: &[(Arc<str>, ArgIn)],
    ) -> Option<Result<Value>> {
        None
    }
}

struct DepthGuard<'a>(&'a AtomicUsize);
impl Drop for DepthGuard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

fn mentions_pos(msg: &str, pos: &Pos) -> bool {
    msg.starts_with(&*pos.file)
}

impl UiHost {
    fn enter(&self) -> Result<DepthGuard<'_>> {
        let d = self.depth.fetch_add(1, Ordering::Relaxed);
        let g = DepthGuard(&self.depth);
        if d > MAX_DEPTH {
            return Err(ui_error(
                "templates nest too deeply (a template refers to itself?)",
            ));
        }
        Ok(g)
    }

    /// Evaluates a template in a context (templates referenced by the
    /// results are evaluated there too, as the dashboard does).
    pub fn eval(&self, env: &Env, t: &Tpl, ctx: &Arc<Frame>) -> Result<Value> {
        match t {
            Tpl::Const(v) => Ok(v.clone()),
            Tpl::Expr { prog, src, pos } => {
                let v = prog
                    .eval_in(env, ctx)
                    .and_then(|v| stdlib::finalize(env, v))
                    .map_err(|e| {
                        if mentions_pos(e.message(), pos) {
                            e
                        } else {
                            Error::new(
                                e.kind().to_string(),
                                format!("{pos}: {} in `{src}`", e.message()),
                            )
                        }
                    })?;
                self.resolve(env, v, ctx)
            }
            Tpl::List(items) => Ok(Value::list(
                items
                    .iter()
                    .map(|x| self.eval(env, x, ctx))
                    .collect::<Result<_>>()?,
            )),
            Tpl::Dict(items) => {
                let mut d = Dict::default();
                for (k, v) in items {
                    let k = self.eval(env, k, ctx)?;
                    let v = self.eval(env, v, ctx)?;
                    d.insert(k, v);
                }
                Ok(Value::dict(d))
            }
        }
    }

    /// Replaces template references inside a value by their evaluation.
    fn resolve(&self, env: &Env, v: Value, ctx: &Arc<Frame>) -> Result<Value> {
        if !has_marker(&v) {
            return Ok(v);
        }
        let _g = self.enter()?;
        match v {
            Value::Str(ref s) => {
                let name = &s[MARK.len()..];
                let t = self
                    .templates
                    .get(name)
                    .ok_or_else(|| ui_error(format!("unknown template {name}")))?;
                self.eval(env, t, ctx)
            }
            Value::List(ref l) => Ok(Value::list(
                l.iter()
                    .map(|x| self.resolve(env, x.clone(), ctx))
                    .collect::<Result<_>>()?,
            )),
            Value::Dict(ref d) => {
                let mut out = Dict::default();
                for (k, x) in d.iter() {
                    out.insert(
                        self.resolve(env, k.clone(), ctx)?,
                        self.resolve(env, x.clone(), ctx)?,
                    );
                }
                Ok(Value::dict(out))
            }
            other => Ok(other),
        }
    }
}

fn has_marker(v: &Value) -> bool {
    match v {
        Value::Str(s) => s.starts_with(MARK),
        Value::List(l) => l.iter().any(has_marker),
        Value::Dict(d) => d.iter().any(|(k, x)| has_marker(k) || has_marker(x)),
        _ => false,
    }
}

pub(super) fn host(cx: &Cx) -> Result<Arc<UiHost>> {
    cx.env
        .host()
        .and_then(|h| h.into_owned().as_any_arc().downcast::<UiHost>().ok())
        .ok_or_else(|| Error::new(ErrorKind::RuntimeError, "not in a Dynamic UI evaluation"))
}

fn f_repeat(cx: &Cx, a: Args) -> Result<Value> {
    let h = host(cx)?;
    let times = a.int(1)?;
    if times < 0 {
        return Err(Error::new(
            ErrorKind::ValueError,
            format!("repeat: negative count {times} (the dashboard would loop forever)"),
        ));
    }
    if times > MAX_REPEAT {
        return Err(Error::new(
            ErrorKind::ValueError,
            format!("repeat: count {times} is too large (at most {MAX_REPEAT})"),
        ));
    }
    let tmpl = a.get(0).clone();
    let mut out = Vec::with_capacity(times as usize);
    for i in 0..times {
        let mut f = Frame::child(cx.ctx, &[]);
        f.vars.push(("index".into(), Value::Int(i + 1)));
        let f = Arc::new(f);
        out.push(h.resolve(cx.env, tmpl.clone(), &f)?);
    }
    Ok(Value::list(out))
}

fn f_generate_hostname(cx: &Cx, a: Args) -> Result<Value> {
    let h = host(cx)?;
    let number = match a.get(1) {
        Value::Null => Value::Null,
        v => v.clone(),
    };
    match a.get(0) {
        Value::Str(p) if !p.is_empty() => Ok(Value::str(
            p.replace('#', &runtime::pyrepr::to_str(&number)),
        )),
        _ => {
            let mut ids = h.ids.lock().unwrap_or_else(|e| e.into_inner());
            Ok(Value::str(ids.hostname()))
        }
    }
}

fn f_name(cx: &Cx, _: Args) -> Result<Value> {
    Ok(Value::str(&host(cx)?.app_name))
}

fn f_ref(cx: &Cx, a: Args) -> Result<Value> {
    let h = host(cx)?;
    let template = a.str(0).to_string();
    let param = match a.get(1) {
        Value::Str(s) => s.to_string(),
        _ => template.clone(),
    };
    let id_only = a.get(2).truthy();
    let key = format!("#{param}");
    let cached = h
        .refs
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&key)
        .cloned();
    let data = match cached {
        Some(d) => d,
        None => {
            let Some(t) = h.templates.get(&template) else {
                return Ok(Value::Null);
            };
            let v = h.eval(cx.env, t, cx.ctx)?;
            let v = match v {
                Value::Dict(ref d) => {
                    let mut d = (**d).clone();
                    let mut q = match d.get(&Value::str("?")) {
                        Some(Value::Dict(q)) => (**q).clone(),
                        _ => Dict::default(),
                    };
                    if !q.contains_key(&Value::str("id")) {
                        let id = h.ids.lock().unwrap_or_else(|e| e.into_inner()).uuid();
                        q.insert(Value::str("id"), Value::str(id));
                    }
                    d.insert(Value::str("?"), Value::dict(q));
                    Value::dict(d)
                }
                other => other,
            };
            h.refs
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(key, v.clone());
            v
        }
    };
    let Value::Dict(d) = &data else {
        return Ok(Value::Null);
    };
    if id_only {
        return Ok(match d.get(&Value::str("?")) {
            Some(Value::Dict(q)) => q.get(&Value::str("id")).cloned().unwrap_or(Value::Null),
            _ => Value::Null,
        });
    }
    Ok(data)
}

fn f_encrypt(_: &Cx, a: Args) -> Result<Value> {
    // No key manager offline: the value passes through (decryptData in the
    // engine returns it unchanged too).
    Ok(a.get(0).clone())
}

/// The registry UI expressions compile against: the dashboard functions
/// in front of the YAQL standard library.
pub fn registry() -> Arc<Registry> {
    // Built once per process and immutable after: a cache, not state.
    static R: OnceLock<Arc<Registry>> = OnceLock::new();
    R.get_or_init(|| {
        let mut r = Registry::new();
        r.set_any_form(true);
        r.group("ui");
        r.function(
            "repeat",
            vec![p("template", Ty::Any).nullable(), p("times", Ty::Int)],
            f_repeat,
        );
        r.function(
            "generateHostname",
            vec![
                p("pattern", Ty::Any).nullable(),
                p("number", Ty::Any).nullable(),
            ],
            f_generate_hostname,
        );
        r.function("name", vec![], f_name);
        r.function(
            "ref",
            vec![
                p("templateName", Ty::Str),
                p("parameterName", Ty::Str).opt(),
                p("idOnly", Ty::Any).opt(),
            ],
            f_ref,
        );
        r.function(
            "encryptData",
            vec![p("data", Ty::Any).nullable()],
            f_encrypt,
        );
        r.merge_from(&stdlib::registry(true));
        Arc::new(r)
    })
    .clone()
}

/// The dashboard's yaql options, but for the iterator limit: the
/// dashboard has none, and an endless or huge `repeat($t, n)` would grow
/// one list until memory ran out (found by the `ui` fuzz target); here it
/// stops at [`runtime::DEFAULT_LIMIT_ITERATORS`] elements.
pub(super) fn options() -> Options {
    Options {
        limit_iterators: Some(runtime::DEFAULT_LIMIT_ITERATORS),
        memory_quota: None,
        convert_sets_to_lists: true,
        legacy: true,
        ..Options::default()
    }
}
