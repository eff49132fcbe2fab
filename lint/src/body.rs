//! The lints of one class: its method bodies (a may-assigned analysis of
//! variables that also finds unreachable statements; the names
//! expressions call and read; strings that look like YAQL; statement
//! mappings without a keyword) and its constant defaults.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::Arc;

use compiler::murano::ir::{lower_body, Block, Catch, DestRoot, DestStep, Stmt, StmtKind, Tmpl};
use compiler::murano::ir::{TmplKind, Yaql};
use compiler::murano::yaml::{Template, TemplateKind};
use compiler::murano::{ClassDecl, LoadOptions, MethodUsage, Pos};
use compiler::yaql::ast::{Arg, Expr, ExprKind};
use engine::contracts::Reach;
use engine::{Class, Executor};
use runtime::Value;

use crate::diag::closest;
use crate::finding::{Finding, Lint};

/// What names mean across the catalogue.
pub(super) struct Names {
    /// Functions of the MuranoPL registry, and extension methods (both
    /// callable on any receiver).
    functions: HashSet<String>,
    /// Method name to the classes declaring it.
    methods: HashMap<String, HashSet<String>>,
    /// Property name to the classes declaring it.
    props: HashMap<String, HashSet<String>>,
    /// Class name to the classes that name it as a parent.
    children: HashMap<String, Vec<String>>,
    /// How many more names suggestions may compare (a comparison is an
    /// edit distance; a big package with many findings must not make
    /// their number times its number of names).
    budget: std::cell::Cell<usize>,
}

/// The most names all suggestions of one lint run compare.
const SUGGESTION_BUDGET: usize = 2_000_000;

impl Names {
    pub(super) fn new(ex: &Executor) -> Names {
        let mut functions: HashSet<String> = engine::murano_registry(false)
            .names()
            .chain(engine::murano_registry(true).names())
            .filter(|n| !n.starts_with('#') && !n.starts_with('*'))
            .map(str::to_string)
            .collect();
        let mut methods: HashMap<String, HashSet<String>> = HashMap::new();
        let mut props: HashMap<String, HashSet<String>> = HashMap::new();
        let mut children: HashMap<String, Vec<String>> = HashMap::new();
        for p in ex.packages() {
            for d in p.decls.values() {
                for m in &d.methods {
                    if m.usage == MethodUsage::Extension {
                        functions.insert(m.name.clone());
                    }
                    methods
                        .entry(m.name.clone())
                        .or_default()
                        .insert(d.name.clone());
                }
                for pr in &d.properties {
                    props
                        .entry(pr.name.clone())
                        .or_default()
                        .insert(d.name.clone());
                }
                for parent in &d.extends {
                    children
                        .entry(parent.clone())
                        .or_default()
                        .push(d.name.clone());
                }
            }
        }
        Names {
            functions,
            methods,
            props,
            children,
            budget: std::cell::Cell::new(SUGGESTION_BUDGET),
        }
    }

    /// `did you mean `X`?` for the closest of `candidates` to `name`
    /// (`prefix` before it), while the budget of comparisons lasts.
    fn suggest<'c>(
        &self,
        name: &str,
        prefix: &str,
        candidates: impl Iterator<Item = &'c str>,
    ) -> Option<String> {
        let left = self.budget.get();
        let c: Vec<&str> = candidates.take(left.saturating_add(1)).collect();
        if c.len() > left {
            self.budget.set(0);
            return None;
        }
        self.budget.set(left - c.len());
        closest(name, c.into_iter()).map(|h| format!("did you mean `{prefix}{h}`?"))
    }

    /// The classes that derive from class `name`, at any depth.
    fn descendants(&self, name: &str) -> HashSet<&str> {
        let mut out = HashSet::new();
        let mut todo = vec![name];
        while let Some(c) = todo.pop() {
            for child in self.children.get(c).into_iter().flatten() {
                if out.insert(child.as_str()) {
                    todo.push(child);
                }
            }
        }
        out
    }
}

/// Lints class `class` (whose files' texts are in `texts`) into `out`.
pub(super) fn lint_class(
    class: &Arc<Class>,
    names: &Names,
    texts: &HashMap<String, String>,
    ex: &Arc<Executor>,
    out: &mut Vec<Finding>,
) {
    let decl = &class.decl;
    let Some(text) = texts.get(&*decl.pos.file) else {
        return;
    };
    // A body that does not lower was reported as an error.
    let legacy = class.package.legacy;
    let bodies: Vec<(Block, &compiler::murano::MethodDecl)> = decl
        .methods
        .iter()
        .filter_map(|m| {
            let b = lower_body(m.body.as_ref()?, LoadOptions { legacy }).ok()?;
            Some((b, m))
        })
        .collect();
    let mut private = HashSet::new();
    for (b, _) in &bodies {
        private.extend(own_assigned(b));
    }
    let mut cx = Cx {
        class,
        names,
        ex,
        text,
        legacy,
        private,
        descendants: std::cell::OnceCell::new(),
        out,
    };
    cx.defaults();
    for (body, m) in &bodies {
        let mut vars: Vars = ["", "this"].into_iter().map(Arc::from).collect();
        vars.extend(m.arguments.iter().map(|a| Arc::from(a.name.as_str())));
        cx.block(body, &mut vars);
    }
}

/// The keys a class declaration ignores (its `file:line:col: message`
/// warnings), in the file's text `text`.
/// `starts` are the offsets the lines of `text` start at.
pub(super) fn decl_warnings(
    decl: &ClassDecl,
    text: &str,
    starts: &[usize],
    out: &mut Vec<Finding>,
) {
    for w in &decl.warnings {
        let Some((line, col, msg)) = split_position(w) else {
            continue;
        };
        let Some(at) = offset(text, starts, line, col) else {
            continue;
        };
        out.push(Finding {
            lint: Lint::UnknownKey,
            message: msg.to_string(),
            file: decl.pos.file.to_string(),
            span: line_span(text, at),
            help: None,
        });
    }
}

/// The byte offset of line `line`, column `col` (1-based, in characters)
/// of `text`, whose lines start at `starts`.
fn offset(text: &str, starts: &[usize], line: usize, col: usize) -> Option<usize> {
    let start = *starts.get(line.max(1) - 1)?;
    let rest = &text[start..];
    let line_text = &rest[..rest.find('\n').unwrap_or(rest.len())];
    let in_line = (line_text.char_indices())
        .nth(col.saturating_sub(1))
        .map_or(line_text.len(), |(i, _)| i);
    Some(start + in_line)
}

/// The rest of the line at byte `at` of `text` (trailing blanks left out).
fn line_span(text: &str, at: usize) -> Range<usize> {
    let start = at.min(text.len());
    let rest = &text[start..];
    start
        ..start
            + rest
                .find('\n')
                .map_or(rest.len(), |i| rest[..i].trim_end().len())
}

/// The variables some path may have assigned.
type Vars = HashSet<Arc<str>>;

struct Cx<'a> {
    class: &'a Arc<Class>,
    names: &'a Names,
    ex: &'a Arc<Executor>,
    /// The class file's text.
    text: &'a str,
    legacy: bool,
    /// The undeclared ("private") properties the class's methods assign.
    private: HashSet<Arc<str>>,
    /// The classes derived from this one (found when first needed).
    descendants: std::cell::OnceCell<HashSet<&'a str>>,
    out: &'a mut Vec<Finding>,
}

impl Cx<'_> {
    fn warn(&mut self, lint: Lint, span: Range<usize>, message: String, help: Option<String>) {
        self.out.push(Finding {
            lint,
            message,
            file: self.class.decl.pos.file.to_string(),
            span,
            help,
        });
    }

    /// The rest of the line at `pos` (trailing blanks left out).
    fn line_span(&self, pos: &Pos) -> Range<usize> {
        line_span(self.text, pos.offset as usize)
    }

    /// The file span of node `e` of expression `y`: exact when the
    /// expression is its scalar's text verbatim, else the scalar's line.
    fn expr_span(&self, y: &Yaql, e: &Expr) -> Range<usize> {
        let (s, t) = (y.span.start as usize, y.span.end as usize);
        if self.text.get(s..t) == Some(&*y.src) {
            s + e.span.start as usize..s + e.span.end as usize
        } else {
            self.line_span(&y.pos)
        }
    }

    /// Contracts and constant defaults of properties and arguments:
    /// YAQL-looking strings, and defaults their contracts reject.
    fn defaults(&mut self) {
        let class = self.class.clone();
        let decl = &class.decl;
        for (p, d) in class.props.iter().zip(&decl.properties) {
            self.template_strings(&d.contract);
            if let Some(t) = &d.default {
                self.template_strings(t);
                self.check_default(
                    engine::contracts::Contract::of(&p.contract),
                    t,
                    &d.name,
                    &format!("property `{}`", d.name),
                );
            }
        }
        for md in &decl.methods {
            let Some(m) = class.methods.get(&md.name) else {
                continue;
            };
            for (a, d) in m.args.iter().zip(&md.arguments) {
                self.template_strings(&d.contract);
                if let Some(t) = &d.default {
                    self.template_strings(t);
                    let what = format!("argument `{}` of method `{}`", d.name, md.name);
                    self.check_default(
                        engine::contracts::Contract::of(&a.contract),
                        t,
                        &d.name,
                        &what,
                    );
                }
            }
        }
    }

    /// Checks a constant default against its contract, when the contract
    /// needs no more than the value (or the value is null).
    fn check_default(
        &mut self,
        contract: &engine::contracts::Contract,
        t: &Template,
        name: &str,
        what: &str,
    ) {
        let Some(v) = const_value(t) else { return };
        let checkable = match contract.reach() {
            Reach::Value => true,
            Reach::Classes => v.is_null(),
            Reach::Execution => false,
        };
        if !checkable {
            return;
        }
        let ctx = self.ex.class_ctx(self.class, Value::Null);
        let env = self.ex.env(self.legacy);
        if let Err(e) = contract.check(self.ex, env, &ctx, v, None, name) {
            let span = self.line_span(&t.pos);
            self.warn(
                Lint::DefaultViolatesContract,
                span,
                format!(
                    "the default of {what} violates its contract: {}",
                    e.message()
                ),
                None,
            );
        }
    }

    /// YAQL-looking strings in a constant template.
    fn template_strings(&mut self, t: &Template) {
        match &t.kind {
            TemplateKind::Value(v) => self.string(v, &t.pos),
            TemplateKind::Expr { .. } => {}
            TemplateKind::List(items) => items.iter().for_each(|i| self.template_strings(i)),
            TemplateKind::Dict(items) => items.iter().for_each(|(k, v)| {
                self.template_strings(k);
                self.template_strings(v);
            }),
        }
    }

    /// Warns when constant `v` at `pos` looks like YAQL but does not parse.
    fn string(&mut self, v: &Value, pos: &Pos) {
        let Some(s) = v.as_str() else { return };
        if !looks_like_yaql(s) {
            return;
        }
        let opts = compiler::yaql::LexOptions {
            legacy: self.legacy,
            murano: true,
        };
        if let Err(e) = compiler::yaql::parse(s, opts) {
            let span = self.line_span(pos);
            self.warn(
                Lint::UnparsableYaql,
                span,
                format!(
                    "{} looks like a YAQL expression but does not parse ({}), so it is a plain string",
                    quoted(s),
                    e.message()
                ),
                Some("fix the expression, or quote the text another way if a string is meant".into()),
            );
        }
    }

    /// Lints a block; true when it never completes normally (it ends in
    /// `Return`, `Throw`, ...). `vars` becomes what may be assigned after it.
    fn block(&mut self, b: &Block, vars: &mut Vars) -> bool {
        let mut diverged = false;
        for s in &b.stmts {
            if diverged {
                let span = self.line_span(&s.pos);
                self.warn(
                    Lint::UnreachableCode,
                    span,
                    "unreachable statement: the statements before it always leave the block".into(),
                    None,
                );
                // The rest is linted, the flow not: it never runs.
                self.stmt(s, &mut vars.clone());
                break;
            }
            diverged = self.stmt(s, vars);
        }
        diverged
    }

    fn stmt(&mut self, s: &Stmt, vars: &mut Vars) -> bool {
        match &s.kind {
            StmtKind::Expr(t) => {
                self.tmpl(t, vars);
                false
            }
            StmtKind::Assign { dest, value } => {
                self.tmpl(value, vars);
                for step in &dest.path {
                    if let DestStep::Index(y) = step {
                        self.yaql(y, vars);
                    }
                }
                match &dest.root {
                    DestRoot::Local(name) => {
                        // `$x.a: 1` reads `$x`; `$x: 1` assigns it.
                        if !dest.path.is_empty() && !vars.contains(name) {
                            self.undefined_in_dest(name, &s.pos);
                        }
                        vars.insert(name.clone());
                    }
                    // Assigning an undeclared property makes a private one.
                    DestRoot::Prop(_) => {}
                    DestRoot::Of(y, _) => self.yaql(y, vars),
                }
                false
            }
            StmtKind::Return(t) => {
                if let Some(t) = t {
                    self.tmpl(t, vars);
                }
                true
            }
            StmtKind::If { cond, then, else_ } => {
                self.tmpl(cond, vars);
                let mut a = vars.clone();
                let da = self.block(then, &mut a);
                let mut b = vars.clone();
                let db = else_.as_ref().is_some_and(|e| self.block(e, &mut b));
                join(vars, [(a, da), (b, db)]);
                da && db
            }
            StmtKind::While { cond, body } => {
                vars.extend(assigned(body));
                self.tmpl(cond, vars);
                self.block(body, &mut vars.clone());
                false
            }
            StmtKind::For { var, in_, body } => {
                self.tmpl(in_, vars);
                vars.insert(var.clone());
                vars.extend(assigned(body));
                self.block(body, &mut vars.clone());
                false
            }
            StmtKind::Repeat { count, body } => {
                self.tmpl(count, vars);
                vars.extend(assigned(body));
                self.block(body, &mut vars.clone());
                false
            }
            StmtKind::Break | StmtKind::Continue | StmtKind::Rethrow | StmtKind::Invalid(_) => true,
            StmtKind::Match {
                value,
                cases,
                default,
            } => {
                self.tmpl(value, vars);
                self.cases(cases, default.as_ref(), vars)
            }
            StmtKind::Switch { cases, default } => {
                self.cases(cases, default.as_ref(), vars);
                false
            }
            StmtKind::Do(b) => self.block(b, vars),
            StmtKind::Parallel { branches, limit } => {
                if let Some(l) = limit {
                    self.tmpl(l, vars);
                }
                let runs: Vec<(Vars, bool)> = branches
                    .iter()
                    .map(|b| {
                        let mut v = vars.clone();
                        self.block(b, &mut v);
                        (v, false)
                    })
                    .collect();
                join(vars, runs);
                false
            }
            StmtKind::Try {
                body,
                catches,
                else_,
                finally,
            } => self.try_(body, catches, else_.as_ref(), finally.as_ref(), vars),
            StmtKind::Throw {
                names,
                message,
                extra,
                cause,
            } => {
                for t in [
                    Some(names),
                    message.as_ref(),
                    extra.as_ref(),
                    cause.as_ref(),
                ]
                .into_iter()
                .flatten()
                {
                    self.tmpl(t, vars);
                }
                true
            }
        }
    }

    /// `Match`/`Switch` cases: each from `vars`; no case may match, unless
    /// a `Default` is given.
    fn cases(
        &mut self,
        cases: &[compiler::murano::ir::Case],
        default: Option<&Block>,
        vars: &mut Vars,
    ) -> bool {
        let mut runs = Vec::new();
        for c in cases {
            self.tmpl(&c.key, vars);
            let mut v = vars.clone();
            let d = self.block(&c.body, &mut v);
            runs.push((v, d));
        }
        let mut v = vars.clone();
        let d = default.is_some_and(|b| self.block(b, &mut v));
        runs.push((v, d));
        let all = runs.iter().all(|(_, d)| *d);
        join(vars, runs);
        all
    }

    fn try_(
        &mut self,
        body: &Block,
        catches: &[Catch],
        else_: Option<&Block>,
        finally: Option<&Block>,
        vars: &mut Vars,
    ) -> bool {
        // A handler may run after any part of the body.
        let mut partial = vars.clone();
        partial.extend(assigned(body));
        let mut b = vars.clone();
        let mut db = self.block(body, &mut b);
        if let Some(e) = else_ {
            db = self.block(e, &mut b) || db;
        }
        let mut runs = vec![(b, db)];
        for c in catches {
            let mut v = partial.clone();
            if let Some(a) = &c.as_ {
                v.insert(a.clone());
            }
            let d = self.block(&c.body, &mut v);
            runs.push((v, d));
        }
        let all = runs.iter().all(|(_, d)| *d);
        for (v, _) in &runs {
            partial.extend(v.iter().cloned());
        }
        join(vars, runs);
        match finally {
            Some(f) => {
                let df = self.block(f, &mut partial);
                vars.extend(assigned(f));
                df || all
            }
            None => all,
        }
    }

    fn tmpl(&mut self, t: &Tmpl, vars: &Vars) {
        match &t.kind {
            TmplKind::Const(v) => self.string(v, &t.pos),
            TmplKind::Expr(y) => self.yaql(y, vars),
            TmplKind::List(items) => items.iter().for_each(|i| self.tmpl(i, vars)),
            TmplKind::Dict(items) => items.iter().for_each(|(k, v)| {
                self.tmpl(k, vars);
                self.tmpl(v, vars);
            }),
        }
    }

    /// The names an expression reads and calls.
    fn yaql(&mut self, y: &Yaql, vars: &Vars) {
        // `let`, `def`, `unpack` and the test framework's `withOriginal`
        // bind names inside expressions.
        let binds = any_node(&y.ast, &mut |e| {
            matches!(&e.kind, ExprKind::Call(n, _) | ExprKind::Method(_, n, _)
                if matches!(n.as_str(), "let" | "def" | "unpack" | "withOriginal"))
        });
        walk(&y.ast, &mut |e, in_arg| match &e.kind {
            ExprKind::Var(name) if !binds && !vars.contains(name.as_str()) && checkable(name) => {
                let candidates = vars.iter().map(|v| &**v).filter(|v| checkable(v));
                let help = self.names.suggest(name, "$", candidates);
                let span = self.expr_span(y, e);
                self.warn(
                    Lint::UndefinedVariable,
                    span,
                    format!("`${name}` is not assigned on any path to here (it reads as null)"),
                    help,
                );
            }
            ExprKind::Method(recv, name, _) => {
                let span = self.expr_span(y, e);
                self.method(name, is_self(recv, in_arg), span);
            }
            ExprKind::Call(name, _) => {
                let span = self.expr_span(y, e);
                self.method(name, false, span);
            }
            ExprKind::Attr(recv, name) if is_self(recv, in_arg) => {
                let span = self.expr_span(y, e);
                self.property(name, span);
            }
            _ => {}
        });
    }

    /// `$x.a: v` (the statement at `pos`) where nothing assigned `$x`.
    fn undefined_in_dest(&mut self, name: &str, pos: &Pos) {
        if !checkable(name) {
            return;
        }
        let span = self.line_span(pos);
        let span = span.start..span.start + name.len() + 1;
        self.warn(
            Lint::UndefinedVariable,
            span,
            format!("`${name}` is not assigned on any path to here (it reads as null)"),
            None,
        );
    }

    /// A call of `name`: on `$this` (`own`) or on anything else.
    fn method(&mut self, name: &str, own: bool, span: Range<usize>) {
        let n = &self.names;
        if name.contains(':') || n.functions.contains(name) {
            return;
        }
        let declared = match n.methods.get(name) {
            None => false,
            // A subclass may implement what its parent calls.
            Some(classes) if own => self.class.find_method(name).is_some() || self.derived(classes),
            Some(_) => true,
        };
        if declared {
            return;
        }
        let (message, help) = if own {
            let mine = (self.class.mro()).flat_map(|c| c.methods.keys().map(String::as_str));
            (
                format!(
                    "class `{}` has no method `{name}` (nor does any class derived from it, and no function has that name)",
                    self.class.name
                ),
                n.suggest(name, "", mine),
            )
        } else {
            (
                format!(
                    "no class loaded declares a method `{name}`, and no function has that name"
                ),
                n.suggest(
                    name,
                    "",
                    n.functions
                        .iter()
                        .chain(n.methods.keys())
                        .map(String::as_str),
                ),
            )
        };
        self.warn(Lint::UnknownMethod, span, message, help);
    }

    /// `$.name` / `$this.name`.
    fn property(&mut self, name: &str, span: Range<usize>) {
        if self.class.find_prop(name).is_some() || self.private.contains(name) {
            return;
        }
        if let Some(classes) = self.names.props.get(name) {
            if self.derived(classes) {
                return;
            }
        }
        let mine = (self.class.mro()).flat_map(|c| c.props.iter().map(|p| &*p.name));
        let help = self.names.suggest(name, "", mine);
        self.warn(
            Lint::UnknownProperty,
            span,
            format!(
                "class `{}` and its parents declare no property `{name}`, and no method of it assigns one (reading it fails)",
                self.class.name
            ),
            help,
        );
    }

    /// Whether one of `classes` is this class, one of its parents (in
    /// any loaded package: the engine's own core classes declare what
    /// murano implements in Python) or derives from it.
    fn derived(&self, classes: &HashSet<String>) -> bool {
        if self.class.mro().any(|k| classes.contains(&*k.name)) {
            return true;
        }
        let names = self.names;
        let below = (self.descendants).get_or_init(|| names.descendants(&self.class.name));
        below.iter().any(|c| classes.contains(*c))
    }
}

/// `vars` after branches that ran from it: what any branch that
/// completes may have assigned (all of them when none completes).
fn join(vars: &mut Vars, runs: impl IntoIterator<Item = (Vars, bool)>) {
    let runs: Vec<(Vars, bool)> = runs.into_iter().collect();
    let completes = runs.iter().any(|(_, d)| !d);
    for (v, d) in runs {
        if !d || !completes {
            vars.extend(v);
        }
    }
}

/// Every variable a block may assign, at any depth.
fn assigned(b: &Block) -> Vars {
    assigned_roots(b, |r| match r {
        DestRoot::Local(n) => Some(n),
        _ => None,
    })
}

/// Every property of `$this` a block may assign, at any depth.
fn own_assigned(b: &Block) -> Vars {
    assigned_roots(b, |r| match r {
        DestRoot::Prop(n) => Some(n),
        _ => None,
    })
}

/// The names `pick` finds in the destinations of a block's assignments,
/// at any depth (with `For` variables and `Catch` names for locals).
fn assigned_roots(b: &Block, pick: impl Fn(&DestRoot) -> Option<&Arc<str>>) -> Vars {
    let locals = pick(&DestRoot::Local(Arc::from(""))).is_some();
    let mut out = Vars::new();
    let mut blocks = vec![b];
    while let Some(b) = blocks.pop() {
        for s in &b.stmts {
            match &s.kind {
                StmtKind::Assign { dest, .. } => out.extend(pick(&dest.root).cloned()),
                StmtKind::If { then, else_, .. } => {
                    blocks.push(then);
                    blocks.extend(else_);
                }
                StmtKind::While { body, .. } | StmtKind::Repeat { body, .. } => blocks.push(body),
                StmtKind::For { var, body, .. } => {
                    if locals {
                        out.insert(var.clone());
                    }
                    blocks.push(body);
                }
                StmtKind::Match { cases, default, .. } | StmtKind::Switch { cases, default } => {
                    blocks.extend(cases.iter().map(|c| &c.body));
                    blocks.extend(default);
                }
                StmtKind::Do(b) => blocks.push(b),
                StmtKind::Parallel { branches, .. } => blocks.extend(branches),
                StmtKind::Try {
                    body,
                    catches,
                    else_,
                    finally,
                } => {
                    blocks.push(body);
                    for c in catches {
                        if locals {
                            out.extend(c.as_.clone());
                        }
                        blocks.push(&c.body);
                    }
                    blocks.extend(else_);
                    blocks.extend(finally);
                }
                _ => {}
            }
        }
    }
    out
}

/// A variable the analysis follows: named (not `$`, `$1`), not `$this`,
/// not one of murano's `$__` internals.
fn checkable(name: &str) -> bool {
    !name.is_empty()
        && name != "this"
        && !name.starts_with("__")
        && !name.starts_with(|c: char| c.is_ascii_digit())
}

/// `$` outside any call's arguments (where functions may rebind it), or
/// `$this`.
fn is_self(e: &Expr, in_arg: bool) -> bool {
    match &e.kind {
        ExprKind::Var(n) => n == "this" || (n.is_empty() && !in_arg),
        _ => false,
    }
}

/// Calls `f` on every node of `e` with whether it sits inside a call's
/// arguments (or a lambda's right-hand side). Iterative: trees can be
/// deep.
fn walk<'a>(e: &'a Expr, f: &mut dyn FnMut(&'a Expr, bool)) {
    let mut stack = vec![(e, false)];
    while let Some((e, in_arg)) = stack.pop() {
        f(e, in_arg);
        let args = |a: &'a [Arg], stack: &mut Vec<(&'a Expr, bool)>| {
            for a in a {
                match a {
                    Arg::Pos(x) | Arg::Named(_, x) => stack.push((x, true)),
                    Arg::Mapping(k, v) => stack.extend([(k, true), (v, true)]),
                    Arg::Skip => {}
                }
            }
        };
        match &e.kind {
            ExprKind::Lit(_) | ExprKind::Keyword(_) | ExprKind::Var(_) | ExprKind::NsName(..) => {}
            ExprKind::Call(_, a) => args(a, &mut stack),
            // List and dict literals keep `$`.
            ExprKind::List(a) | ExprKind::Map(a) => {
                let at = stack.len();
                args(a, &mut stack);
                stack[at..].iter_mut().for_each(|s| s.1 = in_arg);
            }
            ExprKind::Method(r, _, a) | ExprKind::Index(r, a) | ExprKind::Delegate(r, a) => {
                stack.push((r, in_arg));
                args(a, &mut stack);
            }
            ExprKind::Op(op, xs) => {
                // `a -> b` evaluates `b` with `$` bound to `a`.
                let rebinds = op.ends_with("->");
                for (i, x) in xs.iter().enumerate() {
                    stack.push((x, in_arg || (rebinds && i > 0)));
                }
            }
            ExprKind::Attr(r, _) => stack.push((r, in_arg)),
            ExprKind::Dot(r, m) | ExprKind::SafeDot(r, m) => {
                stack.extend([(&**r, in_arg), (&**m, in_arg)]);
            }
        }
    }
}

/// Whether `f` holds for some node of `e`.
fn any_node(e: &Expr, f: &mut dyn FnMut(&Expr) -> bool) -> bool {
    let mut found = false;
    walk(e, &mut |x, _| found = found || f(x));
    found
}

/// The longest string the `unparsable-yaql` lint parses (parsing takes
/// about 0.1 s a MiB; a string longer is data, not an expression).
const MAX_LINTED: usize = 1 << 20;

/// Whether a string that did not become an expression was probably meant
/// as one: it starts with `$`, names a variable or `$.`, or is a call
/// `name(...)`; one line (a script is not), at most [`MAX_LINTED`]
/// bytes. Long ones are linted too: a long one-line expression is no less
/// likely to be one (they were left out past 400 bytes).
fn looks_like_yaql(s: &str) -> bool {
    let s = s.trim();
    if s.is_empty() || s.len() > MAX_LINTED || s.contains('\n') {
        return false;
    }
    let var = s.char_indices().any(|(i, c)| {
        c == '$'
            && s[i + 1..]
                .chars()
                .next()
                .is_none_or(|n| n.is_alphabetic() || matches!(n, '.' | '_' | '(' | '['))
    });
    let call = s
        .split_once('(')
        .is_some_and(|(head, _)| is_name(head) && s.ends_with(')'));
    var || call
}

/// `s` quoted for a message: whole when short, else its start and its
/// length.
fn quoted(s: &str) -> String {
    const SHOWN: usize = 120;
    match s.char_indices().nth(SHOWN) {
        None => format!("`{s}`"),
        Some((i, _)) => format!("`{}...` ({} characters)", &s[..i], s.chars().count()),
    }
}

fn is_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && s.chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
}

/// The constant a template holds (`None` when it holds an expression).
fn const_value(t: &Template) -> Option<Value> {
    Some(match &t.kind {
        TemplateKind::Value(v) => v.clone(),
        TemplateKind::Expr { .. } => return None,
        TemplateKind::List(items) => {
            Value::list(items.iter().map(const_value).collect::<Option<Vec<_>>>()?)
        }
        TemplateKind::Dict(items) => {
            let mut d = runtime::Dict::default();
            for (k, v) in items {
                d.insert(const_value(k)?, const_value(v)?);
            }
            Value::dict(d)
        }
    })
}

/// `file:line:col: message` → line, column and message.
fn split_position(w: &str) -> Option<(usize, usize, &str)> {
    let mut it = w.splitn(4, ':').skip(1);
    let line = it.next()?.parse().ok()?;
    let col = it.next()?.parse().ok()?;
    Some((line, col, it.next()?.trim_start()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaql_looking_strings_are_recognised() {
        assert!(looks_like_yaql("format('{0}', $n +)"));
        assert!(looks_like_yaql("$.x +"));
        assert!(looks_like_yaql("len($x"));
        assert!(!looks_like_yaql("Hello world"));
        assert!(!looks_like_yaql("costs $5"));
        assert!(!looks_like_yaql("echo $HOME\necho done"));
        assert!(!looks_like_yaql("see (below)"));
        let long = format!("f({})", "$x, ".repeat(200));
        assert!(looks_like_yaql(&long));
        assert!(!looks_like_yaql(&format!("f({})", "x".repeat(MAX_LINTED))));
    }

    #[test]
    fn positions_split_off_warnings() {
        assert_eq!(
            split_position("a/C.yaml:3:5: unknown key 'X'"),
            Some((3, 5, "unknown key 'X'"))
        );
        assert_eq!(split_position("no position"), None);
    }
}
