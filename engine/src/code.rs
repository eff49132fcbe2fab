//! Compiled code the classes hold: method bodies (statement bytecode) and
//! value templates (defaults, meta values) with their expressions
//! compiled. Running a body is the statement interpreter's (`exec.rs`).

use std::sync::Arc;

use compiler::murano::emit::{self, Code};
use compiler::murano::{Node, Template};
use compiler::{CompileOptions, Program};
use runtime::ctx::Frame;
use runtime::{Dict, Env, Registry, Result, Value};
use vm::stmt::Operand;

/// A value template (a default, a meta value) with its expressions
/// compiled.
#[derive(Clone)]
pub struct CTemplate {
    operand: Operand,
    programs: Arc<[Program]>,
}

impl CTemplate {
    /// Compiles a template (through the IR: see
    /// [`compiler::murano::emit::compile_template`]).
    pub fn compile(t: &Template, reg: &Registry, opts: CompileOptions) -> Result<CTemplate> {
        let (operand, programs) = emit::compile_template(t, reg, opts)?;
        Ok(CTemplate { operand, programs })
    }

    /// True when the template holds no expression: its value is constant.
    pub fn is_const(&self) -> bool {
        self.programs.is_empty()
    }

    /// Evaluates the template (lazy results are materialised).
    pub fn eval(&self, env: &Env, ctx: &Arc<Frame>) -> Result<Value> {
        eval_operand(&self.operand, &self.programs, env, ctx)
    }
}

/// Evaluates a template operand whose expressions are ids into `programs`
/// (lazy results are materialised).
pub(crate) fn eval_operand(
    o: &Operand,
    programs: &[Program],
    env: &Env,
    ctx: &Arc<Frame>,
) -> Result<Value> {
    Ok(match o {
        Operand::Const(v) => v.clone(),
        Operand::Expr(id) => stdlib::finalize(env, programs[id.index()].eval_in(env, ctx)?)?,
        Operand::List(items) => Value::list(
            items
                .iter()
                .map(|x| eval_operand(x, programs, env, ctx))
                .collect::<Result<_>>()?,
        ),
        Operand::Dict(items) => {
            let mut d = Dict::default();
            for (k, v) in items {
                d.insert(
                    eval_operand(k, programs, env, ctx)?,
                    eval_operand(v, programs, env, ctx)?,
                );
            }
            Value::dict(d)
        }
    })
}

/// A compiled method body: its statement bytecode.
#[derive(Clone, Default)]
pub struct Body(Arc<Code>);

impl Body {
    /// An empty body.
    pub fn empty() -> Body {
        Body::default()
    }

    /// Compiles a `Body` node: YAML -> IR -> bytecode
    /// ([`compiler::murano::emit::compile_body`]).
    pub fn compile(node: &Node, reg: &Registry, opts: CompileOptions) -> Result<Body> {
        Ok(Body(Arc::new(emit::compile_body(node, reg, opts)?)))
    }

    /// The body's bytecode.
    pub fn code(&self) -> &Code {
        &self.0
    }

    /// Disassembly of the body's bytecode with its handler table.
    pub fn disas(&self) -> String {
        self.0.disas()
    }

    /// What the compiled tier does with each condition of the body (`If`,
    /// `While`, the cases of `Switch`, the value of `Match`, `Parallel`
    /// branches included): compiled to machine code or, why not,
    /// interpreted.
    pub fn condition_coverage(&self) -> Vec<crate::contracts::TierCoverage> {
        let mut out = Vec::new();
        conditions(&self.0, &mut out);
        out
    }
}

/// The compiled tier's verdict on an `If`/`While`/`Switch` condition: the
/// code generator's (properties and attributes of objects it reads through
/// the engine, [`compiler::jit::Objects`]).
fn condition_verdict(p: &Program) -> std::result::Result<(), String> {
    compiler::jit::Predicate::verdict(p.ir()).map_err(|e| e.0)
}

fn conditions(code: &Code, out: &mut Vec<crate::contracts::TierCoverage>) {
    use vm::stmt::SOp;
    for (pc, op) in code.ops.iter().enumerate() {
        let (o, verdict): (u32, fn(&Program) -> std::result::Result<(), String>) = match *op {
            SOp::JumpIfNot { cond, .. } => (cond, condition_verdict),
            SOp::SetTemp { expr, .. } => (expr, |_| {
                Err("a Match value: compared with its cases by the statement interpreter".into())
            }),
            _ => continue,
        };
        if let Operand::Expr(id) = &code.operands[o as usize] {
            let p = code.program(*id);
            out.push(crate::contracts::TierCoverage {
                at: code.pos[pc].to_string().into(),
                source: p.source().to_string(),
                compiled: verdict(p),
            });
        }
    }
    for sub in &code.subs {
        conditions(sub, out);
    }
}
