//! The code object of statement bytecode: instructions with their
//! positions and handler table, and the side tables their operands index.

use std::fmt::{self, Write};
use std::sync::Arc;

use runtime::{Location, Value};

use super::ops::{disas, Handler, SOp, NONE};

/// The number of a YAQL expression in a body or contract: expressions are
/// numbered from 0 in the order the compiler compiles them (which is not
/// always source order: a `Try`'s `Catch` clauses come before its body, a
/// destination's indexes from the right). Prints as `e3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExprId(u32);

impl ExprId {
    /// The id with number `n`.
    pub fn new(n: usize) -> ExprId {
        ExprId(u32::try_from(n).expect("fewer than 2^32 expressions"))
    }
    /// The number, for indexing a side table.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for ExprId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "e{}", self.0)
    }
}

/// What the disassembler needs of a compiled expression: its source.
pub trait Source {
    /// The expression's source text.
    fn source(&self) -> &str;
}

/// A template operand: a value template whose YAQL expressions are
/// [`ExprId`]s into the compiled programs of its code.
#[derive(Clone, Debug)]
pub enum Operand {
    /// A constant.
    Const(Value),
    /// A YAQL expression (its value is finalized when evaluated).
    Expr(ExprId),
    /// A list of templates.
    List(Vec<Operand>),
    /// A dict of templates, in source order.
    Dict(Vec<(Operand, Operand)>),
}

impl Operand {
    /// The largest expression id in the operand, if any.
    fn max_expr(&self) -> Option<ExprId> {
        match self {
            Operand::Const(_) => None,
            Operand::Expr(id) => Some(*id),
            Operand::List(items) => items.iter().filter_map(Operand::max_expr).max(),
            Operand::Dict(items) => items
                .iter()
                .flat_map(|(k, v)| [k.max_expr(), v.max_expr()])
                .max()
                .flatten(),
        }
    }
}

/// The root of an assignment [`Target`].
#[derive(Clone, Debug)]
pub enum TargetRoot {
    /// A variable.
    Local(Arc<str>),
    /// A property of the current object, or a static property of the
    /// current class.
    Prop(Arc<str>),
    /// Property `name` of the object (or static property of the type) that
    /// expression `.0` yields.
    Of(ExprId, Arc<str>),
}

/// One step of a [`Target`] path.
#[derive(Clone, Debug)]
pub enum TargetStep {
    /// A constant key or property name (a string value).
    Key(Value),
    /// A key or index computed by an expression.
    Index(ExprId),
}

/// An assignment destination.
#[derive(Clone, Debug)]
pub struct Target {
    /// What is assigned.
    pub root: TargetRoot,
    /// The path into it.
    pub path: Vec<TargetStep>,
}

/// A `Catch` clause.
#[derive(Clone, Debug)]
pub struct Clause {
    /// The exception names it catches, as written (empty: any).
    pub with: Vec<String>,
    /// The variable bound to the exception.
    pub as_: Option<Arc<str>>,
    /// The pc of the clause's block.
    pub target: u32,
}

/// The parts of a `Throw` statement.
#[derive(Clone, Debug)]
pub struct Throw {
    /// The exception name or list of names.
    pub names: Operand,
    /// `Message`.
    pub message: Option<Operand>,
    /// `Extra`.
    pub extra: Option<Operand>,
    /// `Cause`.
    pub cause: Option<Operand>,
}

/// A method body (or a `Parallel` branch of one) as statement bytecode,
/// its expressions compiled to `P`s.
pub struct Code<P> {
    /// The instructions.
    pub ops: Vec<SOp>,
    /// The position of each instruction's statement.
    pub pos: Vec<Location>,
    /// The text of each instruction's statement (for stack traces).
    pub texts: Vec<Arc<str>>,
    /// The handler table, innermost first.
    pub handlers: Vec<Handler>,
    /// Template operands (`expr`, `cond`, `limit`).
    pub operands: Vec<Operand>,
    /// The compiled expressions of the whole body, indexed by [`ExprId`].
    pub programs: Arc<[P]>,
    /// Assignment destinations (`target`).
    pub targets: Vec<Target>,
    /// Loop variable names (`var`).
    pub names: Vec<Arc<str>>,
    /// Catch clause lists (`clauses`).
    pub clauses: Vec<Vec<Clause>>,
    /// `Throw` statements (`throw`).
    pub throws: Vec<Throw>,
    /// The code of each `Parallel` branch (`first`, `count`).
    pub subs: Vec<Arc<Code<P>>>,
    /// Scratch slots an activation needs.
    pub nslots: u32,
    /// `Try` statements (caught-exception slots an activation needs).
    pub ntries: u32,
}

impl<P> Default for Code<P> {
    fn default() -> Code<P> {
        Code::new(Arc::from(Vec::new()))
    }
}

impl<P> Code<P> {
    /// Empty code over `programs`.
    pub fn new(programs: Arc<[P]>) -> Code<P> {
        Code {
            ops: Vec::new(),
            pos: Vec::new(),
            texts: Vec::new(),
            handlers: Vec::new(),
            operands: Vec::new(),
            programs,
            targets: Vec::new(),
            names: Vec::new(),
            clauses: Vec::new(),
            throws: Vec::new(),
            subs: Vec::new(),
            nslots: 0,
            ntries: 0,
        }
    }

    /// The program of expression `id`.
    pub fn program(&self, id: ExprId) -> &P {
        &self.programs[id.index()]
    }

    /// The largest expression id the code (not its sub-codes) refers to.
    pub fn max_expr(&self) -> Option<ExprId> {
        let operands = self.operands.iter().map(Operand::max_expr);
        let throws = self.throws.iter().flat_map(|t| {
            [
                Some(&t.names),
                t.message.as_ref(),
                t.extra.as_ref(),
                t.cause.as_ref(),
            ]
            .into_iter()
            .flatten()
            .map(Operand::max_expr)
        });
        let targets = self.targets.iter().flat_map(|t| {
            let root = match &t.root {
                TargetRoot::Of(id, _) => Some(*id),
                _ => None,
            };
            let path = t.path.iter().map(|s| match s {
                TargetStep::Index(id) => Some(*id),
                TargetStep::Key(_) => None,
            });
            std::iter::once(root).chain(path)
        });
        operands.chain(throws).chain(targets).max().flatten()
    }
}

impl<P: Source> Code<P> {
    /// Disassembles the code, its handler table and its `Parallel`
    /// branches: one instruction per line with the source of its operand
    /// and its position.
    pub fn disas(&self) -> String {
        let pos: Vec<String> = self.pos.iter().map(Location::to_string).collect();
        let mut out = disas(&self.ops, &pos, &self.handlers, |op| self.note(op));
        for (i, s) in self.subs.iter().enumerate() {
            let _ = writeln!(out, "  branch {i}:");
            for line in s.disas().lines() {
                let _ = writeln!(out, "  {line}");
            }
        }
        out
    }

    /// The text of an assignment target, its expressions as `e3`src``:
    /// `$x.a[e0`$i`]`, `$.p`, `(e1`$f()`).p`.
    pub fn target_text(&self, t: &Target) -> String {
        let e = |id: ExprId| format!("{id}`{}`", self.program(id).source());
        let mut out = match &t.root {
            TargetRoot::Local(n) => format!("${n}"),
            TargetRoot::Prop(n) => format!("$.{n}"),
            TargetRoot::Of(id, n) => format!("({}).{n}", e(*id)),
        };
        for s in &t.path {
            match s {
                TargetStep::Key(k) => match k.as_str() {
                    Some(k) if is_name(k) => {
                        let _ = write!(out, ".{k}");
                    }
                    _ => {
                        let _ = write!(out, "[{k:?}]");
                    }
                },
                TargetStep::Index(id) => {
                    let _ = write!(out, "[{}]", e(*id));
                }
            }
        }
        out
    }

    /// The text of an operand: an expression's source, a constant's value.
    fn operand_text(&self, o: &Operand) -> String {
        match o {
            Operand::Expr(id) => self.program(*id).source().to_string(),
            Operand::Const(v) => format!("{v:?}"),
            _ => "<template>".to_string(),
        }
    }

    fn note(&self, op: &SOp) -> String {
        let e = |i: u32| {
            self.operands
                .get(i as usize)
                .map_or(String::new(), |o| self.operand_text(o))
        };
        match *op {
            SOp::Eval { expr }
            | SOp::SetTemp { expr, .. }
            | SOp::IterInit { expr, .. }
            | SOp::CountInit { expr, .. }
            | SOp::JumpIfNe { expr, .. }
            | SOp::Assign { expr, .. } => e(expr),
            SOp::JumpIfNot { cond, .. } => e(cond),
            SOp::Return { expr } if expr != NONE => e(expr),
            SOp::IterNext { var, .. } => format!("${}", self.names[var as usize]),
            SOp::Catch { clauses, .. } => self.clauses[clauses as usize]
                .iter()
                .map(clause_text)
                .collect::<Vec<_>>()
                .join(", "),
            SOp::Throw { throw } => match &self.throws[throw as usize].names {
                o @ (Operand::Const(_) | Operand::Expr(_)) => self.operand_text(o),
                _ => String::new(),
            },
            _ => String::new(),
        }
    }
}

/// A catch clause as the disassembler prints it: `A|B as $e -> 0007`.
fn clause_text(c: &Clause) -> String {
    let with = if c.with.is_empty() {
        "*".to_string()
    } else {
        c.with.join("|")
    };
    let as_ = c
        .as_
        .as_ref()
        .map_or(String::new(), |a| format!(" as ${a}"));
    format!("{with}{as_} -> {:04}", c.target)
}

/// Whether `s` can follow a `.` in a target as printed.
fn is_name(s: &str) -> bool {
    let mut cs = s.chars();
    matches!(cs.next(), Some(c) if c.is_alphabetic() || c == '_')
        && cs.all(|c| c.is_alphanumeric() || c == '_')
}
