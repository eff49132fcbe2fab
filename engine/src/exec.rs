//! Method bodies: statements compiled from YAML and their execution.
//!
//! A body is a list of statements. Expressions in it are compiled once to
//! YAQL programs; control flow (`If`, `While`, `For`, `Repeat`, `Match`,
//! `Switch`, `Try`/`Catch`/`Else`/`Finally`, `Throw`, `Rethrow`, `Return`,
//! `Break`, `Continue`, `Parallel`) is interpreted here. `Parallel` runs its
//! branches one after another (coroutines are the next step, issue 5).

use runtime::ErrorKind;
use std::sync::Arc;

use compiler::murano::{Node, NodeKind, Template, TemplateKind};
use compiler::yaql::ast::{Arg as AstArg, Expr, ExprKind, Lit};
use compiler::{CompileOptions, Program};
use runtime::ctx::Frame;
use runtime::{Dict, Env, Error, Registry, Result, Value};

use crate::{Class, Executor, Method};

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
            CTemplate::Expr(p) => stdlib::finalize(env, p.eval_in(env, ctx)?)?,
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

/// A compiled block: the statement tree and, lowered from it on first use,
/// its bytecode.
#[derive(Clone, Default)]
pub struct Body(Arc<BodyInner>);

#[derive(Default)]
struct BodyInner {
    stmts: Vec<(Stmt, Arc<str>)>,
    code: std::sync::OnceLock<Code>,
}

struct Compiler<'a> {
    reg: &'a Registry,
    opts: CompileOptions,
}

fn syntax(node: &Node, msg: impl std::fmt::Display) -> Error {
    node.pos.error(ErrorKind::DslSyntaxError, msg)
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
        Ok(Body(Arc::new(BodyInner {
            stmts: out,
            code: std::sync::OnceLock::new(),
        })))
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
                            .map(|(c, _)| c.key.clone())
                            .unwrap_or(cls.key.clone());
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
                        .map(|(c, _)| c.key.clone())
                        .unwrap_or(self.class.key.clone());
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
                    Err(e) if *e.error_kind() == ErrorKind::UninitializedPropertyAccessError => {
                        Value::Null
                    }
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
                stdlib::finalize(self.env, p.eval_in(self.env, &ctx)?)?
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
        vec![crate::qualified_kind(e.kind())]
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
    let prev = ex.set_caller(Some(class.key.clone()));
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
    };
    let code = method.body.code();
    match act.run(code) {
        Ok(Flow::Return(v)) => Ok(v),
        Ok(Flow::Next) => Ok(Value::Null),
        Err(e) => Err(e.push_frame(format!("{}::{}", class.name, method.name))),
    }
}

// ---- statement bytecode ---------------------------------------------------

use vm::bc::stmt::{finally_between, find_handler, Handler, HandlerKind, SOp};

/// A catch clause after lowering.
struct Clause {
    with: Vec<String>,
    as_: Option<Arc<str>>,
    target: u32,
}

/// A `Throw` statement's parts.
struct ThrowSpec {
    names: CTemplate,
    message: Option<CTemplate>,
    extra: Option<CTemplate>,
    cause: Option<CTemplate>,
}

/// A method body compiled to statement bytecode.
#[derive(Default)]
pub struct Code {
    ops: Vec<SOp>,
    pos: Vec<Arc<str>>,
    handlers: Vec<Handler>,
    exprs: Vec<CTemplate>,
    targets: Vec<Target>,
    names: Vec<Arc<str>>,
    clauses: Vec<Vec<Clause>>,
    throws: Vec<ThrowSpec>,
    subs: Vec<Arc<Code>>,
    nslots: u32,
    ntries: u32,
}

const NONE: u32 = u32::MAX;

struct Lower<'a> {
    code: &'a mut Code,
    /// (continue target, break-exit label) of enclosing loops.
    loops: Vec<(u32, usize)>,
    /// Pending patches: label -> pcs of jumps to patch.
    labels: Vec<Option<u32>>,
    patches: Vec<(usize, usize)>,
    /// Innermost enclosing catch clause's try index (for `Rethrow`).
    catches: Vec<u32>,
}

impl Lower<'_> {
    fn emit(&mut self, op: SOp, pos: &Arc<str>) -> usize {
        self.code.ops.push(op);
        self.code.pos.push(pos.clone());
        self.code.ops.len() - 1
    }
    fn pc(&self) -> u32 {
        self.code.ops.len() as u32
    }
    fn expr(&mut self, t: &CTemplate) -> u32 {
        self.code.exprs.push(t.clone());
        (self.code.exprs.len() - 1) as u32
    }
    fn name(&mut self, n: &Arc<str>) -> u32 {
        self.code.names.push(n.clone());
        (self.code.names.len() - 1) as u32
    }
    fn slot(&mut self) -> u32 {
        self.code.nslots += 1;
        self.code.nslots - 1
    }
    fn label(&mut self) -> usize {
        self.labels.push(None);
        self.labels.len() - 1
    }
    fn bind(&mut self, l: usize) {
        self.labels[l] = Some(self.pc());
    }
    /// Emits `op` whose jump target is label `l` (patched at the end).
    fn emit_to(&mut self, op: SOp, l: usize, pos: &Arc<str>) {
        let at = self.emit(op, pos);
        self.patches.push((at, l));
    }
    fn finish(&mut self) {
        for (at, l) in std::mem::take(&mut self.patches) {
            let to = self.labels[l].expect("label bound");
            let op = &mut self.code.ops[at];
            match op {
                SOp::JumpIfNot { to: t, .. }
                | SOp::Jump { to: t }
                | SOp::Leave { to: t }
                | SOp::IterNext { done: t, .. }
                | SOp::CountNext { done: t, .. }
                | SOp::JumpIfNe { to: t, .. }
                | SOp::JumpIfFlag { to: t, .. } => *t = to,
                _ => {}
            }
        }
    }

    fn block(&mut self, b: &Body) {
        for (s, pos) in b.0.stmts.iter() {
            self.stmt(s, pos);
        }
    }

    fn stmt(&mut self, s: &Stmt, pos: &Arc<str>) {
        match s {
            Stmt::Expr(t) => {
                let e = self.expr(t);
                self.emit(SOp::Eval { expr: e }, pos);
            }
            Stmt::Assign(target, t) => {
                self.code.targets.push(target.clone());
                let target = (self.code.targets.len() - 1) as u32;
                let e = self.expr(t);
                self.emit(SOp::Assign { target, expr: e }, pos);
            }
            Stmt::Return(t) => {
                let e = t.as_ref().map_or(NONE, |t| self.expr(t));
                self.emit(SOp::Return { expr: e }, pos);
            }
            Stmt::If(c, then, els) => {
                let (l_else, l_end) = (self.label(), self.label());
                let cond = self.expr(c);
                self.emit_to(SOp::JumpIfNot { cond, to: 0 }, l_else, pos);
                self.block(then);
                self.emit_to(SOp::Jump { to: 0 }, l_end, pos);
                self.bind(l_else);
                if let Some(e) = els {
                    self.block(e);
                }
                self.bind(l_end);
            }
            Stmt::While(c, body) => {
                let l_exit = self.label();
                let top = self.pc();
                let cond = self.expr(c);
                self.emit_to(SOp::JumpIfNot { cond, to: 0 }, l_exit, pos);
                self.loops.push((top, l_exit));
                self.block(body);
                self.loops.pop();
                self.emit(SOp::Jump { to: top }, pos);
                self.bind(l_exit);
            }
            Stmt::For(var, inn, body) => {
                let l_exit = self.label();
                let slot = self.slot();
                let e = self.expr(inn);
                let v = self.name(var);
                self.emit(SOp::IterInit { slot, expr: e }, pos);
                let top = self.pc();
                self.emit_to(
                    SOp::IterNext {
                        slot,
                        var: v,
                        done: 0,
                    },
                    l_exit,
                    pos,
                );
                self.loops.push((top, l_exit));
                self.block(body);
                self.loops.pop();
                self.emit(SOp::Jump { to: top }, pos);
                self.bind(l_exit);
            }
            Stmt::Repeat(n, body) => {
                let l_exit = self.label();
                let slot = self.slot();
                let e = self.expr(n);
                self.emit(SOp::CountInit { slot, expr: e }, pos);
                let top = self.pc();
                self.emit_to(SOp::CountNext { slot, done: 0 }, l_exit, pos);
                self.loops.push((top, l_exit));
                self.block(body);
                self.loops.pop();
                self.emit(SOp::Jump { to: top }, pos);
                self.bind(l_exit);
            }
            Stmt::Break => match self.loops.last().copied() {
                Some((_, exit)) => self.emit_to(SOp::Leave { to: 0 }, exit, pos),
                None => {
                    self.emit(SOp::Invalid { what: 0 }, pos);
                }
            },
            Stmt::Continue => match self.loops.last().copied() {
                Some((top, _)) => {
                    self.emit(SOp::Leave { to: top }, pos);
                }
                None => {
                    self.emit(SOp::Invalid { what: 1 }, pos);
                }
            },
            Stmt::Match(val, cases, default) => {
                let l_end = self.label();
                let slot = self.slot();
                let e = self.expr(val);
                self.emit(SOp::SetTemp { slot, expr: e }, pos);
                for (k, body) in cases {
                    let l_next = self.label();
                    let ke = self.expr(k);
                    self.emit_to(
                        SOp::JumpIfNe {
                            slot,
                            expr: ke,
                            to: 0,
                        },
                        l_next,
                        pos,
                    );
                    self.block(body);
                    self.emit_to(SOp::Jump { to: 0 }, l_end, pos);
                    self.bind(l_next);
                }
                if let Some(d) = default {
                    self.block(d);
                }
                self.bind(l_end);
            }
            Stmt::Switch(cases, default) => {
                let l_end = self.label();
                let slot = self.slot();
                self.emit(SOp::ClearFlag { slot }, pos);
                for (c, body) in cases {
                    let l_next = self.label();
                    let cond = self.expr(c);
                    self.emit_to(SOp::JumpIfNot { cond, to: 0 }, l_next, pos);
                    self.emit(SOp::Flag { slot }, pos);
                    self.block(body);
                    self.bind(l_next);
                }
                self.emit_to(SOp::JumpIfFlag { slot, to: 0 }, l_end, pos);
                if let Some(d) = default {
                    self.block(d);
                }
                self.bind(l_end);
            }
            Stmt::Do(b) => self.block(b),
            Stmt::Parallel(branches, limit) => {
                let first = self.code.subs.len() as u32;
                for b in branches {
                    self.code.subs.push(Arc::new(lower(b)));
                }
                let limit = limit.as_ref().map_or(NONE, |l| self.expr(l));
                self.emit(
                    SOp::Parallel {
                        first,
                        count: branches.len() as u32,
                        limit,
                    },
                    pos,
                );
            }
            Stmt::Try(body, catches, els, fin) => {
                let try_ = self.code.ntries;
                self.code.ntries += 1;
                let (l_catch, l_fin) = (self.label(), self.label());
                let start = self.pc();
                self.block(body);
                let try_end = self.pc();
                if let Some(e) = els {
                    self.block(e);
                }
                self.emit_to(SOp::Jump { to: 0 }, l_fin, pos);
                self.bind(l_catch);
                let catch_pc = self.pc();
                let mut clauses = Vec::new();
                let ci = self.code.clauses.len() as u32;
                self.code.clauses.push(Vec::new());
                if !catches.is_empty() {
                    self.emit(SOp::Catch { try_, clauses: ci }, pos);
                    for c in catches {
                        let target = self.pc();
                        clauses.push(Clause {
                            with: c.with.clone(),
                            as_: c.as_.clone(),
                            target,
                        });
                        self.catches.push(try_);
                        self.block(&c.body);
                        self.catches.pop();
                        self.emit(SOp::EndCatch { try_ }, pos);
                        self.emit_to(SOp::Jump { to: 0 }, l_fin, pos);
                    }
                }
                self.code.clauses[ci as usize] = clauses;
                self.bind(l_fin);
                let fin_pc = self.pc();
                if let Some(f) = fin {
                    self.block(f);
                    self.emit(SOp::EndFinally { try_ }, pos);
                }
                // Inner handlers were pushed while lowering the body, so
                // they come first in the table.
                if !catches.is_empty() {
                    self.code.handlers.push(Handler {
                        start,
                        end: try_end,
                        target: catch_pc,
                        kind: HandlerKind::Catch(try_),
                    });
                }
                if fin.is_some() {
                    self.code.handlers.push(Handler {
                        start,
                        end: fin_pc,
                        target: fin_pc,
                        kind: HandlerKind::Finally(try_),
                    });
                }
            }
            Stmt::Throw(names, msg, extra, cause) => {
                self.code.throws.push(ThrowSpec {
                    names: names.clone(),
                    message: msg.clone(),
                    extra: extra.clone(),
                    cause: cause.clone(),
                });
                let t = (self.code.throws.len() - 1) as u32;
                self.emit(SOp::Throw { throw: t }, pos);
            }
            Stmt::Rethrow => match self.catches.last().copied() {
                Some(try_) => {
                    self.emit(SOp::Rethrow { try_ }, pos);
                }
                None => {
                    self.emit(SOp::Invalid { what: 2 }, pos);
                }
            },
        }
    }
}

/// Lowers a statement tree to bytecode.
fn lower(b: &Body) -> Code {
    let mut code = Code::default();
    let mut l = Lower {
        code: &mut code,
        loops: Vec::new(),
        labels: Vec::new(),
        patches: Vec::new(),
        catches: Vec::new(),
    };
    l.block(b);
    l.finish();
    code
}

impl Body {
    /// The body's bytecode (lowered on first use).
    pub fn code(&self) -> &Code {
        self.0.code.get_or_init(|| lower(self))
    }

    /// Disassembly of the body's bytecode with its handler table.
    pub fn disas(&self) -> String {
        self.code().disas()
    }
}

impl Code {
    /// Disassembles the code and its `Parallel` branches.
    pub fn disas(&self) -> String {
        let pos: Vec<String> = self.pos.iter().map(|p| p.to_string()).collect();
        let mut out = vm::bc::stmt::disas(&self.ops, &pos, &self.handlers, |op| self.note(op));
        for (i, s) in self.subs.iter().enumerate() {
            out.push_str(&format!("  branch {i}:\n"));
            for line in s.disas().lines() {
                out.push_str("  ");
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    }

    fn note(&self, op: &SOp) -> String {
        let e = |i: u32| match self.exprs.get(i as usize) {
            Some(CTemplate::Expr(p)) => p.source().to_string(),
            Some(CTemplate::Const(v)) => format!("{v:?}"),
            Some(_) => "<template>".into(),
            None => String::new(),
        };
        match *op {
            SOp::Eval { expr }
            | SOp::SetTemp { expr, .. }
            | SOp::IterInit { expr, .. }
            | SOp::CountInit { expr, .. } => e(expr),
            SOp::JumpIfNot { cond, .. } => e(cond),
            SOp::Return { expr } if expr != NONE => e(expr),
            SOp::JumpIfNe { expr, .. } => e(expr),
            SOp::Assign { expr, .. } => e(expr),
            SOp::IterNext { var, .. } => format!("${}", self.names[var as usize]),
            SOp::Catch { clauses, .. } => self.clauses[clauses as usize]
                .iter()
                .map(|c| {
                    format!(
                        "{}{} -> {:04}",
                        if c.with.is_empty() {
                            "*".to_string()
                        } else {
                            c.with.join("|")
                        },
                        c.as_
                            .as_ref()
                            .map_or(String::new(), |a| format!(" as ${a}")),
                        c.target
                    )
                })
                .collect::<Vec<_>>()
                .join(", "),
            SOp::Throw { throw } => match &self.throws[throw as usize].names {
                CTemplate::Const(v) => format!("{v:?}"),
                CTemplate::Expr(p) => p.source().to_string(),
                _ => String::new(),
            },
            _ => String::new(),
        }
    }
}

/// Completion pending while a `Finally` block runs.
enum Pending {
    Throw(Error),
    Return(Value),
    Jump(u32),
}

struct Run {
    slots: Vec<Slot>,
    caught: Vec<Option<Error>>,
    pending: Vec<(u32, Pending)>,
}

#[derive(Clone)]
enum Slot {
    Empty,
    Items(Vec<Value>, usize),
    Count(i64),
    Value(Value),
    Flag(bool),
}

impl Activation<'_> {
    fn run(&mut self, code: &Code) -> Result<Flow> {
        let mut st = Run {
            slots: vec![Slot::Empty; code.nslots as usize],
            caught: vec![None; code.ntries as usize],
            pending: Vec::new(),
        };
        let mut pc: u32 = 0;
        loop {
            let Some(op) = code.ops.get(pc as usize).copied() else {
                return Ok(Flow::Next);
            };
            if !self.ex.spend_step() {
                return Err(Error::new(
                    ErrorKind::ExecutionLimitExceeded,
                    format!(
                        "the execution ran more than {} statements",
                        crate::STEP_BUDGET
                    ),
                )
                .push_frame(code.pos[pc as usize].to_string()));
            }
            match self.step(code, &mut st, pc, op) {
                Ok(Step2::Next) => pc += 1,
                Ok(Step2::Goto(t)) => pc = t,
                Ok(Step2::Return(v)) => return Ok(Flow::Return(v)),
                Err(e) => {
                    let e = e.push_frame(code.pos[pc as usize].to_string());
                    match find_handler(&code.handlers, pc).copied() {
                        Some(Handler {
                            target,
                            kind: HandlerKind::Catch(t),
                            ..
                        }) => {
                            st.caught[t as usize] = Some(e);
                            pc = target;
                        }
                        Some(Handler {
                            target,
                            kind: HandlerKind::Finally(t),
                            ..
                        }) => {
                            st.pending.push((t, Pending::Throw(e)));
                            pc = target;
                        }
                        None => return Err(e),
                    }
                }
            }
        }
    }

    /// Continues a return or jump from `pc` through the `Finally` blocks it
    /// leaves.
    fn unwind(&self, code: &Code, st: &mut Run, pc: u32, p: Pending) -> Result<Step2> {
        let to = match &p {
            Pending::Jump(t) => Some(*t),
            _ => None,
        };
        if let Some(h) = finally_between(&code.handlers, pc, to) {
            let HandlerKind::Finally(t) = h.kind else {
                unreachable!()
            };
            st.pending.push((t, p));
            return Ok(Step2::Goto(h.target));
        }
        match p {
            Pending::Jump(t) => Ok(Step2::Goto(t)),
            Pending::Return(v) => Ok(Step2::Return(v)),
            Pending::Throw(e) => Err(e),
        }
    }

    fn step(&mut self, code: &Code, st: &mut Run, pc: u32, op: SOp) -> Result<Step2> {
        Ok(match op {
            SOp::Eval { expr } => {
                self.eval(&code.exprs[expr as usize])?;
                Step2::Next
            }
            SOp::Assign { target, expr } => {
                let v = self.eval(&code.exprs[expr as usize])?;
                self.assign(&code.targets[target as usize], v)?;
                Step2::Next
            }
            SOp::JumpIfNot { cond, to } => {
                if self.eval(&code.exprs[cond as usize])?.truthy() {
                    Step2::Next
                } else {
                    Step2::Goto(to)
                }
            }
            SOp::Jump { to } => Step2::Goto(to),
            SOp::Leave { to } => return self.unwind(code, st, pc, Pending::Jump(to)),
            SOp::Return { expr } => {
                let v = if expr == NONE {
                    Value::Null
                } else {
                    self.eval(&code.exprs[expr as usize])?
                };
                return self.unwind(code, st, pc, Pending::Return(v));
            }
            SOp::IterInit { slot, expr } => {
                let coll = self.eval(&code.exprs[expr as usize])?;
                let items: Vec<Value> = match &coll {
                    Value::Dict(d) => d.keys().cloned().collect(),
                    Value::Null => Vec::new(),
                    v => runtime::seq::iterate_unlimited(v)?.collect::<Result<_>>()?,
                };
                st.slots[slot as usize] = Slot::Items(items, 0);
                Step2::Next
            }
            SOp::IterNext { slot, var, done } => {
                let next = match &mut st.slots[slot as usize] {
                    Slot::Items(items, i) => {
                        let v = items.get(*i).cloned();
                        *i += 1;
                        v
                    }
                    _ => None,
                };
                match next {
                    Some(v) => {
                        let name = code.names[var as usize].clone();
                        self.set_var(&name, v);
                        Step2::Next
                    }
                    None => Step2::Goto(done),
                }
            }
            SOp::CountInit { slot, expr } => {
                let n = self.eval(&code.exprs[expr as usize])?.as_i64().unwrap_or(0);
                st.slots[slot as usize] = Slot::Count(n);
                Step2::Next
            }
            SOp::CountNext { slot, done } => match &mut st.slots[slot as usize] {
                Slot::Count(n) if *n > 0 => {
                    *n -= 1;
                    Step2::Next
                }
                _ => Step2::Goto(done),
            },
            SOp::SetTemp { slot, expr } => {
                st.slots[slot as usize] = Slot::Value(self.eval(&code.exprs[expr as usize])?);
                Step2::Next
            }
            SOp::JumpIfNe { slot, expr, to } => {
                let k = self.eval(&code.exprs[expr as usize])?;
                match &st.slots[slot as usize] {
                    Slot::Value(v) if *v == k => Step2::Next,
                    _ => Step2::Goto(to),
                }
            }
            SOp::Flag { slot } => {
                st.slots[slot as usize] = Slot::Flag(true);
                Step2::Next
            }
            SOp::ClearFlag { slot } => {
                st.slots[slot as usize] = Slot::Flag(false);
                Step2::Next
            }
            SOp::JumpIfFlag { slot, to } => match st.slots[slot as usize] {
                Slot::Flag(true) => Step2::Goto(to),
                _ => Step2::Next,
            },
            SOp::Parallel {
                first,
                count,
                limit,
            } => {
                let limit = if limit == NONE {
                    0
                } else {
                    self.eval(&code.exprs[limit as usize])?
                        .as_i64()
                        .unwrap_or(0)
                        .max(0) as usize
                };
                let mut tasks: Vec<Box<dyn FnOnce() -> Result<Flow>>> = Vec::new();
                for i in first..first + count {
                    let sub = code.subs[i as usize].clone();
                    let ex = self.ex.arc();
                    let env = self.env.clone();
                    let class = self.class.clone();
                    let this = self.this.clone();
                    let vars = self.vars.clone();
                    tasks.push(Box::new(move || {
                        let mut act = Activation {
                            ex: &ex,
                            env: &env,
                            class: &class,
                            this,
                            vars,
                            frame: None,
                        };
                        let prev = ex.set_caller(Some(class.key.clone()));
                        let r = act.run(&sub);
                        ex.set_caller(prev);
                        r
                    }));
                }
                let mut first_err = None;
                for r in vm::coro::run(tasks, limit) {
                    if let Err(e) = r {
                        first_err.get_or_insert(e);
                    }
                }
                match first_err {
                    Some(e) => return Err(e),
                    None => Step2::Next,
                }
            }
            SOp::Catch { try_, clauses } => {
                let Some(e) = st.caught[try_ as usize].clone() else {
                    return Ok(Step2::Next);
                };
                let names = self.error_names(&e);
                let hit = code.clauses[clauses as usize].iter().find(|c| {
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
                        Step2::Goto(c.target)
                    }
                    None => {
                        st.caught[try_ as usize] = None;
                        return Err(e);
                    }
                }
            }
            SOp::EndCatch { try_ } => {
                st.caught[try_ as usize] = None;
                Step2::Next
            }
            SOp::EndFinally { try_ } => match st.pending.last() {
                Some((t, _)) if *t == try_ => {
                    let (_, p) = st.pending.pop().unwrap();
                    return match p {
                        // A pending exception continues to the handlers
                        // outside this Try.
                        Pending::Throw(e) => Err(e),
                        other => self.unwind(code, st, pc, other),
                    };
                }
                _ => Step2::Next,
            },
            SOp::Throw { throw } => {
                let t = &code.throws[throw as usize];
                let names_v = self.eval(&t.names)?;
                let mut names: Vec<String> = match &names_v {
                    Value::List(l) => l.iter().map(runtime::pyrepr::to_str).collect(),
                    v => vec![runtime::pyrepr::to_str(v)],
                };
                for n in names.iter_mut() {
                    *n = self.class.resolve(n);
                }
                let message = match &t.message {
                    Some(m) => runtime::pyrepr::to_str(&self.eval(m)?),
                    None => String::new(),
                };
                let extra = match &t.extra {
                    Some(x) => self.eval(x)?,
                    None => Value::dict(Dict::default()),
                };
                let cause = match &t.cause {
                    Some(c) => Some(self.eval(c)?),
                    None => None,
                };
                return Err(self.ex.throw(names, message, extra, cause));
            }
            SOp::Rethrow { try_ } => match st.caught[try_ as usize].clone() {
                Some(e) => return Err(e),
                None => {
                    return Err(Error::new(
                        ErrorKind::DslInvalidOperationError,
                        "Rethrow outside of a Catch block",
                    ))
                }
            },
            SOp::Invalid { what } => {
                return Err(Error::new(
                    ErrorKind::DslInvalidOperationError,
                    match what {
                        0 => "Break cannot be used on method level",
                        1 => "Continue cannot be used on method level",
                        _ => "Rethrow outside of a Catch block",
                    },
                ))
            }
        })
    }
}

/// What an instruction does next.
enum Step2 {
    Next,
    Goto(u32),
    Return(Value),
}
