//! Method bodies: statements compiled from YAML and their execution.
//!
//! A body is a list of statements. Expressions in it are compiled once to
//! YAQL programs; control flow (`If`, `While`, `For`, `Repeat`, `Match`,
//! `Switch`, `Try`/`Catch`/`Else`/`Finally`, `Throw`, `Rethrow`, `Return`,
//! `Break`, `Continue`, `Parallel`) is interpreted here. `Parallel` runs its
//! branches one after another (coroutines are the next step, issue 5).

use std::sync::Arc;

use compiler::murano::{Node, NodeKind, Template, TemplateKind};
use compiler::yaql::ast::{Arg as AstArg, Expr, ExprKind, Lit};
use compiler::{CompileOptions, Program};
use runtime::ctx::Frame;
use runtime::{Dict, Env, Error, Registry, Result, Value};

use super::{Class, Executor, Method};

/// A template with its expressions compiled.
#[derive(Clone)]
pub enum CTemplate {
    /// A constant.
    Const(Value),
    /// An expression.
    Expr(Arc<Program>),
    /// A list of templates.
    List(Vec<CTemplate>),
    /// A dict of templates.
    Dict(Vec<(CTemplate, CTemplate)>),
}

fn compile_expr(src: &str, t: &Template, reg: &Registry, opts: CompileOptions) -> Result<Program> {
    compiler::compile(src, reg, opts).map_err(|e| {
        let msg = format!("{}: {} in `{}`", t.pos, e.message(), src);
        Error::new(e.kind().to_string(), msg)
    })
}

impl CTemplate {
    /// Compiles a template.
    pub fn compile(t: &Template, reg: &Registry, opts: CompileOptions) -> Result<CTemplate> {
        Ok(match &t.kind {
            TemplateKind::Value(v) => CTemplate::Const(v.clone()),
            TemplateKind::Expr { src, .. } => {
                CTemplate::Expr(Arc::new(compile_expr(src, t, reg, opts)?))
            }
            TemplateKind::List(items) => CTemplate::List(
                items
                    .iter()
                    .map(|x| CTemplate::compile(x, reg, opts))
                    .collect::<Result<_>>()?,
            ),
            TemplateKind::Dict(items) => CTemplate::Dict(
                items
                    .iter()
                    .map(|(k, v)| {
                        Ok((
                            CTemplate::compile(k, reg, opts)?,
                            CTemplate::compile(v, reg, opts)?,
                        ))
                    })
                    .collect::<Result<_>>()?,
            ),
        })
    }

    /// Evaluates the template (lazy results are materialised).
    pub fn eval(&self, env: &Env, ctx: &Arc<Frame>) -> Result<Value> {
        Ok(match self {
            CTemplate::Const(v) => v.clone(),
            CTemplate::Expr(p) => crate::finalize(env, p.eval_in(env, ctx)?)?,
            CTemplate::List(items) => Value::list(
                items
                    .iter()
                    .map(|x| x.eval(env, ctx))
                    .collect::<Result<_>>()?,
            ),
            CTemplate::Dict(items) => {
                let mut d = Dict::default();
                for (k, v) in items {
                    d.insert(k.eval(env, ctx)?, v.eval(env, ctx)?);
                }
                Value::dict(d)
            }
        })
    }
}

/// One step of an assignment path.
#[derive(Clone)]
enum Step {
    Key(Value),
    Index(Arc<Program>),
}

/// The target of an assignment.
#[derive(Clone)]
enum Target {
    Local(Arc<str>, Vec<Step>),
    Prop(Arc<str>, Vec<Step>),
    /// A property of the object or type an expression yields.
    Of(Arc<Program>, Arc<str>, Vec<Step>),
}

/// A catch clause.
#[derive(Clone)]
struct Catch {
    with: Vec<String>,
    as_: Option<Arc<str>>,
    body: Body,
}

/// A statement.
#[derive(Clone)]
enum Stmt {
    Expr(CTemplate),
    Assign(Target, CTemplate),
    Return(Option<CTemplate>),
    If(CTemplate, Body, Option<Body>),
    While(CTemplate, Body),
    For(Arc<str>, CTemplate, Body),
    Repeat(CTemplate, Body),
    Break,
    Continue,
    Match(CTemplate, Vec<(CTemplate, Body)>, Option<Body>),
    Switch(Vec<(CTemplate, Body)>, Option<Body>),
    Do(Body),
    Parallel(Vec<Body>, Option<CTemplate>),
    Try(Body, Vec<Catch>, Option<Body>, Option<Body>),
    Throw(
        CTemplate,
        Option<CTemplate>,
        Option<CTemplate>,
        Option<CTemplate>,
    ),
    Rethrow,
}

/// A compiled block.
#[derive(Clone, Default)]
pub struct Body(Arc<Vec<(Stmt, Arc<str>)>>);

struct Compiler<'a> {
    reg: &'a Registry,
    opts: CompileOptions,
}

fn syntax(node: &Node, msg: impl std::fmt::Display) -> Error {
    node.pos.error("DslSyntaxError", msg)
}

impl Body {
    /// An empty body.
    pub fn empty() -> Body {
        Body::default()
    }

    /// Compiles a `Body` node.
    pub fn compile(node: &Node, reg: &Registry, opts: CompileOptions) -> Result<Body> {
        Compiler { reg, opts }.block(node)
    }
}

impl Compiler<'_> {
    fn tmpl(&self, node: &Node) -> Result<CTemplate> {
        let t = node.to_template(compiler::murano::LoadOptions {
            legacy: self.opts.legacy,
        })?;
        CTemplate::compile(&t, self.reg, self.opts)
    }

    fn block(&self, node: &Node) -> Result<Body> {
        let mut out = Vec::new();
        match &node.kind {
            NodeKind::Seq(items) => {
                for it in items {
                    out.push((self.stmt(it)?, Arc::from(it.pos.to_string())));
                }
            }
            _ if node.is_null() => {}
            _ => out.push((self.stmt(node)?, Arc::from(node.pos.to_string()))),
        }
        Ok(Body(Arc::new(out)))
    }

    fn opt_block(&self, node: Option<&Node>) -> Result<Option<Body>> {
        node.map(|n| self.block(n)).transpose()
    }

    fn stmt(&self, node: &Node) -> Result<Stmt> {
        let Some(map) = node.as_map() else {
            return Ok(Stmt::Expr(self.tmpl(node)?));
        };
        const KEYWORDS: &[&str] = &[
            "Return", "If", "While", "For", "Repeat", "Break", "Continue", "Match", "Switch",
            "Parallel", "Try", "Throw", "Rethrow", "Do",
        ];
        if map.len() == 1 {
            let (k, v) = &map[0];
            if let Some(key) = k.as_scalar() {
                if !KEYWORDS.contains(&key) && (key.starts_with('$') || key.contains('.')) {
                    return Ok(Stmt::Assign(self.target(k, key)?, self.tmpl(v)?));
                }
            }
        }
        let get = |name: &str| node.get(name);
        let key_of = |n: &Node| n.as_scalar().unwrap_or("").to_string();
        let keys: Vec<String> = map.iter().map(|(k, _)| key_of(k)).collect();
        let has = |name: &str| keys.iter().any(|k| k == name);
        let check_keys = |allowed: &[&str]| -> Result<()> {
            for (k, _) in map {
                let kk = key_of(k);
                if !allowed.contains(&kk.as_str()) {
                    return Err(syntax(k, format!("unexpected key '{kk}' in statement")));
                }
            }
            Ok(())
        };
        if has("Return") {
            check_keys(&["Return"])?;
            let v = get("Return").unwrap();
            return Ok(Stmt::Return(if v.is_null() {
                None
            } else {
                Some(self.tmpl(v)?)
            }));
        }
        if has("If") {
            check_keys(&["If", "Then", "Else"])?;
            return Ok(Stmt::If(
                self.tmpl(get("If").unwrap())?,
                self.opt_block(get("Then"))?.unwrap_or_default(),
                self.opt_block(get("Else"))?,
            ));
        }
        if has("While") {
            check_keys(&["While", "Do"])?;
            return Ok(Stmt::While(
                self.tmpl(get("While").unwrap())?,
                self.opt_block(get("Do"))?.unwrap_or_default(),
            ));
        }
        if has("For") {
            check_keys(&["For", "In", "Do"])?;
            let var = get("For")
                .and_then(|n| n.as_scalar())
                .unwrap_or("")
                .to_string();
            let Some(inn) = get("In") else {
                return Err(syntax(node, "For needs In"));
            };
            return Ok(Stmt::For(
                var.trim_start_matches('$').into(),
                self.tmpl(inn)?,
                self.opt_block(get("Do"))?.unwrap_or_default(),
            ));
        }
        if has("Repeat") {
            check_keys(&["Repeat", "Do"])?;
            return Ok(Stmt::Repeat(
                self.tmpl(get("Repeat").unwrap())?,
                self.opt_block(get("Do"))?.unwrap_or_default(),
            ));
        }
        if has("Break") {
            check_keys(&["Break"])?;
            return Ok(Stmt::Break);
        }
        if has("Continue") {
            check_keys(&["Continue"])?;
            return Ok(Stmt::Continue);
        }
        if has("Match") {
            check_keys(&["Match", "Value", "Default"])?;
            let cases = self.cases(get("Match").unwrap())?;
            let Some(val) = get("Value") else {
                return Err(syntax(node, "Match needs Value"));
            };
            return Ok(Stmt::Match(
                self.tmpl(val)?,
                cases,
                self.opt_block(get("Default"))?,
            ));
        }
        if has("Switch") {
            check_keys(&["Switch", "Default"])?;
            let cases = self.cases(get("Switch").unwrap())?;
            return Ok(Stmt::Switch(cases, self.opt_block(get("Default"))?));
        }
        if has("Parallel") {
            check_keys(&["Parallel", "Limit"])?;
            let p = get("Parallel").unwrap();
            let branches = match &p.kind {
                NodeKind::Seq(items) => items
                    .iter()
                    .map(|it| self.block(it))
                    .collect::<Result<Vec<_>>>()?,
                _ => vec![self.block(p)?],
            };
            let limit = get("Limit").map(|n| self.tmpl(n)).transpose()?;
            return Ok(Stmt::Parallel(branches, limit));
        }
        if has("Try") {
            check_keys(&["Try", "Catch", "Else", "Finally"])?;
            let mut catches = Vec::new();
            if let Some(c) = get("Catch") {
                let items: Vec<&Node> = match &c.kind {
                    NodeKind::Seq(items) => items.iter().collect(),
                    _ => vec![c],
                };
                for it in items {
                    let with = match it.get("With") {
                        None => Vec::new(),
                        Some(w) => match &w.kind {
                            NodeKind::Seq(xs) => xs
                                .iter()
                                .filter_map(|x| x.as_scalar().map(str::to_string))
                                .collect(),
                            _ => w
                                .as_scalar()
                                .map(|s| vec![s.to_string()])
                                .unwrap_or_default(),
                        },
                    };
                    let as_ = it
                        .get("As")
                        .and_then(|a| a.as_scalar())
                        .map(|s| Arc::from(s.trim_start_matches('$')));
                    catches.push(Catch {
                        with,
                        as_,
                        body: self.opt_block(it.get("Do"))?.unwrap_or_default(),
                    });
                }
            }
            return Ok(Stmt::Try(
                self.opt_block(get("Try"))?.unwrap_or_default(),
                catches,
                self.opt_block(get("Else"))?,
                self.opt_block(get("Finally"))?,
            ));
        }
        if has("Throw") {
            check_keys(&["Throw", "Message", "Extra", "Cause"])?;
            return Ok(Stmt::Throw(
                self.tmpl(get("Throw").unwrap())?,
                get("Message").map(|n| self.tmpl(n)).transpose()?,
                get("Extra").map(|n| self.tmpl(n)).transpose()?,
                get("Cause").map(|n| self.tmpl(n)).transpose()?,
            ));
        }
        if has("Rethrow") {
            check_keys(&["Rethrow"])?;
            return Ok(Stmt::Rethrow);
        }
        if has("Do") {
            check_keys(&["Do"])?;
            return Ok(Stmt::Do(self.block(get("Do").unwrap())?));
        }
        // A plain dict used as an expression statement.
        Ok(Stmt::Expr(self.tmpl(node)?))
    }

    fn cases(&self, node: &Node) -> Result<Vec<(CTemplate, Body)>> {
        let Some(map) = node.as_map() else {
            return Err(syntax(node, "expected a mapping of cases"));
        };
        map.iter()
            .map(|(k, v)| Ok((self.tmpl(k)?, self.block(v)?)))
            .collect()
    }

    fn target(&self, node: &Node, text: &str) -> Result<Target> {
        let ast = compiler::yaql::parse(
            text,
            compiler::yaql::LexOptions {
                legacy: self.opts.legacy,
                murano: true,
            },
        )
        .map_err(|e| {
            syntax(
                node,
                format!("bad assignment target `{text}`: {}", e.message()),
            )
        })?;
        let mut steps = Vec::new();
        let mut cur: &Expr = &ast;
        loop {
            match &cur.kind {
                ExprKind::Attr(recv, name) => {
                    if matches!(&recv.kind, ExprKind::Var(v) if v.is_empty() || v == "this") {
                        steps.reverse();
                        return Ok(Target::Prop(name.as_str().into(), steps));
                    }
                    steps.push(Step::Key(Value::str(name.as_str())));
                    cur = recv;
                }
                ExprKind::Index(recv, args) => {
                    let [AstArg::Pos(ix)] = &args[..] else {
                        return Err(syntax(node, format!("bad index in `{text}`")));
                    };
                    match &ix.kind {
                        ExprKind::Lit(Lit::Str(s)) => steps.push(Step::Key(Value::str(s.as_str()))),
                        _ => {
                            let src = &text[ix.span.start as usize..ix.span.end as usize];
                            let p = compiler::compile(src, self.reg, self.opts)?;
                            steps.push(Step::Index(Arc::new(p)));
                        }
                    }
                    cur = recv;
                }
                ExprKind::Var(v) => {
                    steps.reverse();
                    return Ok(Target::Local(v.as_str().into(), steps));
                }
                _ => {
                    steps.reverse();
                    let Some(Step::Key(first)) = steps.first().cloned() else {
                        return Err(syntax(node, format!("cannot assign to `{text}`")));
                    };
                    steps.remove(0);
                    let src = &text[cur.span.start as usize..cur.span.end as usize];
                    let p = compiler::compile(src, self.reg, self.opts)?;
                    let name = runtime::pyrepr::to_str(&first);
                    return Ok(Target::Of(Arc::new(p), name.into(), steps));
                }
            }
        }
    }
}

// ---- execution -----------------------------------------------------------

enum Flow {
    Next,
    Return(Value),
    Break,
    Continue,
}

/// The payload kind of errors thrown by `Throw`.
pub const MURANO_EXCEPTION: &str = "MuranoPlException";

struct Activation<'a> {
    ex: &'a Executor,
    env: &'a Env,
    class: &'a Arc<Class>,
    this: Value,
    vars: Vec<(Arc<str>, Value)>,
    frame: Option<Arc<Frame>>,
    caught: Vec<Error>,
}

impl Activation<'_> {
    fn ctx(&mut self) -> Arc<Frame> {
        if let Some(f) = &self.frame {
            return f.clone();
        }
        let mut f = Frame::default();
        f.args.push(self.this.clone());
        f.vars.push(("this".into(), self.this.clone()));
        f.vars
            .push(("#class".into(), Value::Type(self.class.type_ref.clone())));
        for (k, v) in &self.vars {
            f.vars.push((k.clone(), v.clone()));
        }
        let f = Arc::new(f);
        self.frame = Some(f.clone());
        f
    }

    fn eval(&mut self, t: &CTemplate) -> Result<Value> {
        let ctx = self.ctx();
        t.eval(self.env, &ctx)
    }

    fn set_var(&mut self, name: &Arc<str>, v: Value) {
        self.frame = None;
        if let Some(slot) = self.vars.iter_mut().find(|(k, _)| k == name) {
            slot.1 = v;
        } else {
            self.vars.push((name.clone(), v));
        }
    }

    fn get_var(&mut self, name: &str) -> Value {
        let ctx = self.ctx();
        ctx.var(name)
    }

    fn block(&mut self, b: &Body) -> Result<Flow> {
        for (s, pos) in b.0.iter() {
            match self.stmt(s) {
                Ok(Flow::Next) => {}
                Ok(f) => return Ok(f),
                Err(e) => return Err(add_frame(e, pos)),
            }
        }
        Ok(Flow::Next)
    }

    fn stmt(&mut self, s: &Stmt) -> Result<Flow> {
        match s {
            Stmt::Expr(t) => {
                self.eval(t)?;
                Ok(Flow::Next)
            }
            Stmt::Assign(target, t) => {
                let v = self.eval(t)?;
                self.assign(target, v)?;
                Ok(Flow::Next)
            }
            Stmt::Return(t) => Ok(Flow::Return(match t {
                Some(t) => self.eval(t)?,
                None => Value::Null,
            })),
            Stmt::If(c, then, els) => {
                if self.eval(c)?.truthy() {
                    self.block(then)
                } else if let Some(e) = els {
                    self.block(e)
                } else {
                    Ok(Flow::Next)
                }
            }
            Stmt::While(c, body) => {
                while self.eval(c)?.truthy() {
                    match self.block(body)? {
                        Flow::Break => break,
                        Flow::Return(v) => return Ok(Flow::Return(v)),
                        _ => {}
                    }
                }
                Ok(Flow::Next)
            }
            Stmt::For(var, inn, body) => {
                let coll = self.eval(inn)?;
                let items: Vec<Value> = match &coll {
                    Value::Dict(d) => d.keys().cloned().collect(),
                    Value::Null => Vec::new(),
                    v => runtime::seq::iterate_unlimited(v)?.collect::<Result<_>>()?,
                };
                for it in items {
                    self.set_var(var, it);
                    match self.block(body)? {
                        Flow::Break => break,
                        Flow::Return(v) => return Ok(Flow::Return(v)),
                        _ => {}
                    }
                }
                Ok(Flow::Next)
            }
            Stmt::Repeat(n, body) => {
                let n = self.eval(n)?.as_i64().unwrap_or(0);
                for _ in 0..n.max(0) {
                    match self.block(body)? {
                        Flow::Break => break,
                        Flow::Return(v) => return Ok(Flow::Return(v)),
                        _ => {}
                    }
                }
                Ok(Flow::Next)
            }
            Stmt::Break => Ok(Flow::Break),
            Stmt::Continue => Ok(Flow::Continue),
            Stmt::Match(val, cases, default) => {
                let v = self.eval(val)?;
                for (k, body) in cases {
                    if self.eval(k)? == v {
                        return self.block(body);
                    }
                }
                match default {
                    Some(d) => self.block(d),
                    None => Ok(Flow::Next),
                }
            }
            Stmt::Switch(cases, default) => {
                let mut matched = false;
                for (k, body) in cases {
                    if self.eval(k)?.truthy() {
                        matched = true;
                        match self.block(body)? {
                            Flow::Next => {}
                            f => return Ok(f),
                        }
                    }
                }
                if !matched {
                    if let Some(d) = default {
                        return self.block(d);
                    }
                }
                Ok(Flow::Next)
            }
            Stmt::Do(b) => self.block(b),
            Stmt::Parallel(branches, limit) => {
                let limit = match limit {
                    Some(l) => self.eval(l)?.as_i64().unwrap_or(0).max(0) as usize,
                    None => 0,
                };
                let mut tasks: Vec<Box<dyn FnOnce() -> Result<Flow>>> = Vec::new();
                for b in branches {
                    let ex = self.ex.arc();
                    let env = self.env.clone();
                    let class = self.class.clone();
                    let this = self.this.clone();
                    let vars = self.vars.clone();
                    let body = b.clone();
                    tasks.push(Box::new(move || {
                        let mut act = Activation {
                            ex: &ex,
                            env: &env,
                            class: &class,
                            this,
                            vars,
                            frame: None,
                            caught: Vec::new(),
                        };
                        let prev = ex.set_caller(Some(class.name.clone()));
                        let r = act.block(&body);
                        ex.set_caller(prev);
                        r
                    }));
                }
                let mut first_err = None;
                for r in vm::coro::run(tasks, limit) {
                    if let Err(e) = r {
                        if first_err.is_none() {
                            first_err = Some(e)
                        }
                    }
                }
                match first_err {
                    Some(e) => Err(e),
                    None => Ok(Flow::Next),
                }
            }
            Stmt::Try(body, catches, els, fin) => {
                let r = self.block(body);
                let r = match r {
                    Ok(f) => match (f, els) {
                        (Flow::Next, Some(e)) => self.block(e),
                        (f, _) => Ok(f),
                    },
                    Err(e) => {
                        let names = self.error_names(&e);
                        let hit = catches.iter().find(|c| {
                            c.with.is_empty()
                                || c.with.iter().any(|w| {
                                    let w = self.class.resolve(w);
                                    names.contains(&w)
                                })
                        });
                        match hit {
                            Some(c) => {
                                if let Some(a) = &c.as_ {
                                    let obj = self.ex.exception_object(&e, &names)?;
                                    self.set_var(a, obj);
                                }
                                self.caught.push(e);
                                let r = self.block(&c.body);
                                self.caught.pop();
                                r
                            }
                            None => Err(e),
                        }
                    }
                };
                if let Some(f) = fin {
                    match self.block(f)? {
                        Flow::Next => {}
                        other => return Ok(other),
                    }
                }
                r
            }
            Stmt::Throw(names, msg, extra, cause) => {
                let names_v = self.eval(names)?;
                let mut names: Vec<String> = match &names_v {
                    Value::List(l) => l.iter().map(runtime::pyrepr::to_str).collect(),
                    v => vec![runtime::pyrepr::to_str(v)],
                };
                for n in names.iter_mut() {
                    *n = self.class.resolve(n);
                }
                let message = match msg {
                    Some(m) => runtime::pyrepr::to_str(&self.eval(m)?),
                    None => String::new(),
                };
                let extra = match extra {
                    Some(x) => self.eval(x)?,
                    None => Value::dict(Dict::default()),
                };
                let cause = match cause {
                    Some(c) => Some(self.eval(c)?),
                    None => None,
                };
                Err(self.ex.throw(names, message, extra, cause))
            }
            Stmt::Rethrow => match self.caught.last() {
                Some(e) => Err(e.clone()),
                None => Err(Error::new(
                    "DslInvalidOperationError",
                    "Rethrow outside of a Catch block",
                )),
            },
        }
    }

    fn error_names(&self, e: &Error) -> Vec<String> {
        error_names(self.ex, e, true)
    }

    fn assign(&mut self, target: &Target, v: Value) -> Result<()> {
        match target {
            Target::Local(name, steps) => {
                if steps.is_empty() {
                    self.set_var(name, v);
                    return Ok(());
                }
                let cur = self.get_var(name);
                let nv = self.set_path(cur, steps, v)?;
                if let Some(nv) = nv {
                    self.set_var(name, nv);
                }
                Ok(())
            }
            Target::Of(base, name, steps) => {
                let ctx = self.ctx();
                let b = base.eval_in(self.env, &ctx)?;
                match b {
                    Value::Type(t) => {
                        let cls = self.ex.class(&t.name)?;
                        let owner = cls
                            .find_prop(name)
                            .map(|(c, _)| c.name.clone())
                            .unwrap_or(cls.name.clone());
                        let nv = if steps.is_empty() {
                            Some(v)
                        } else {
                            let cur = self.ex.static_get(&owner, name).unwrap_or(Value::Null);
                            self.set_path(cur, steps, v)?
                        };
                        if let Some(nv) = nv {
                            self.ex.static_set(&owner, name, nv);
                        }
                        Ok(())
                    }
                    Value::Object(o) => {
                        let mut all = vec![Step::Key(Value::str(&**name))];
                        all.extend(steps.iter().cloned());
                        self.set_path(Value::Object(o), &all, v).map(|_| ())
                    }
                    other => Err(Error::type_(format!(
                        "cannot set property {name} of {}",
                        other.type_name()
                    ))),
                }
            }
            Target::Prop(name, steps) => {
                let Value::Object(o) = &self.this else {
                    // Static property of the class (or the ancestor declaring it).
                    let owner = self
                        .class
                        .find_prop(name)
                        .map(|(c, _)| c.name.clone())
                        .unwrap_or(self.class.name.clone());
                    let cur = if steps.is_empty() {
                        Value::Null
                    } else {
                        self.ex.static_get(&owner, name).unwrap_or(Value::Null)
                    };
                    let nv = if steps.is_empty() {
                        Some(v)
                    } else {
                        self.set_path(cur, steps, v)?
                    };
                    if let Some(nv) = nv {
                        self.ex.static_set(&owner, name, nv);
                    }
                    return Ok(());
                };
                let o = o.clone();
                if steps.is_empty() {
                    return self.ex.set_property(&o, name, v, true, Some(self.class));
                }
                let cur = match self.ex.get_property(&o, name, true) {
                    Ok(c) => c,
                    Err(e) if e.kind() == "UninitializedPropertyAccessError" => Value::Null,
                    Err(e) => return Err(e),
                };
                if let Some(nv) = self.set_path(cur, steps, v)? {
                    self.ex.set_property(&o, name, nv, true, Some(self.class))?;
                }
                Ok(())
            }
        }
    }

    /// Returns the container with the value set along `steps`, or `None`
    /// when the write went into an object (no rebuild needed).
    fn set_path(&mut self, cur: Value, steps: &[Step], v: Value) -> Result<Option<Value>> {
        let Some((first, rest)) = steps.split_first() else {
            return Ok(Some(v));
        };
        let key = match first {
            Step::Key(k) => k.clone(),
            Step::Index(p) => {
                let ctx = self.ctx();
                crate::finalize(self.env, p.eval_in(self.env, &ctx)?)?
            }
        };
        match cur {
            Value::Object(o) => {
                let name = runtime::pyrepr::to_str(&key);
                let inside = matches!(&self.this, Value::Object(t) if t.slot == o.slot);
                if rest.is_empty() {
                    self.ex
                        .set_property(&o, &name, v, inside, Some(self.class))?;
                } else {
                    let inner = self
                        .ex
                        .get_property(&o, &name, inside)
                        .unwrap_or(Value::Null);
                    if let Some(nv) = self.set_path(inner, rest, v)? {
                        self.ex
                            .set_property(&o, &name, nv, inside, Some(self.class))?;
                    }
                }
                Ok(None)
            }
            Value::List(l) => {
                let n = l.len() as i64;
                let i = key
                    .as_i64()
                    .ok_or_else(|| Error::type_("list indices must be integers"))?;
                let ix = if i < 0 { i + n } else { i };
                if ix < 0 || ix >= n {
                    return Err(Error::index("list assignment index out of range"));
                }
                let mut items = (*l).clone();
                let inner = items[ix as usize].clone();
                match self.set_path(inner, rest, v)? {
                    Some(nv) => items[ix as usize] = nv,
                    None => return Ok(None),
                }
                Ok(Some(Value::list(items)))
            }
            Value::Dict(d) => {
                let mut d2 = (*d).clone();
                let inner = d2.get(&key).cloned().unwrap_or(Value::Null);
                match self.set_path(inner, rest, v)? {
                    Some(nv) => {
                        d2.insert(key, nv);
                    }
                    None => return Ok(None),
                }
                Ok(Some(Value::dict(d2)))
            }
            Value::Null => {
                let mut d2 = Dict::default();
                if let Some(nv) = self.set_path(Value::Null, rest, v)? {
                    d2.insert(key, nv);
                }
                Ok(Some(Value::dict(d2)))
            }
            other => Err(Error::type_(format!(
                "'{}' object does not support item assignment",
                other.type_name()
            ))),
        }
    }
}

fn add_frame(e: Error, _pos: &str) -> Error {
    e
}

/// The names an error is known by inside MuranoPL (`Catch: With:`) or, with
/// `qualified` false, as the harness reports them.
pub fn error_names(ex: &Executor, e: &Error, qualified: bool) -> Vec<String> {
    if e.kind() == MURANO_EXCEPTION {
        if let Some(Value::Object(o)) = e.data() {
            if let Ok(Some(Value::List(l))) =
                ex.with_obj(o, |s| s.attrs.get(&Value::str("#names")).cloned())
            {
                return l.iter().map(runtime::pyrepr::to_str).collect();
            }
        }
    }
    if qualified {
        vec![super::qualified_kind(e.kind())]
    } else {
        vec![e.kind().to_string()]
    }
}

/// Runs a method body with its arguments bound.
pub fn run_method(
    ex: &Executor,
    env: &Env,
    class: &Arc<Class>,
    method: &Arc<Method>,
    this: Value,
    vars: Vec<(Arc<str>, Value)>,
) -> Result<Value> {
    let prev = ex.set_caller(Some(class.name.clone()));
    let r = run_method_inner(ex, env, class, method, this, vars);
    ex.set_caller(prev);
    r
}

fn run_method_inner(
    ex: &Executor,
    env: &Env,
    class: &Arc<Class>,
    method: &Arc<Method>,
    this: Value,
    vars: Vec<(Arc<str>, Value)>,
) -> Result<Value> {
    let mut act = Activation {
        ex,
        env,
        class,
        this,
        vars,
        frame: None,
        caught: Vec::new(),
    };
    match act.block(&method.body)? {
        Flow::Return(v) => Ok(v),
        Flow::Next => Ok(Value::Null),
        Flow::Break => Err(Error::new(
            "DslInvalidOperationError",
            "Break cannot be used on method level",
        )),
        Flow::Continue => Err(Error::new(
            "DslInvalidOperationError",
            "Continue cannot be used on method level",
        )),
    }
}
