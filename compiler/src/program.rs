//! Compiled YAQL expressions: [`compile`] and its variants make a
//! [`Program`], which evaluates with the bytecode interpreter or, for the
//! conditions the JIT compiles, as machine code.

use std::sync::{Arc, OnceLock};

use runtime::{Env, Error, Frame, Registry, Value};

use crate::murano::ir::Yaql;
use crate::{emit, ir, jit, lower, yaql};
use vm::bc::Chunk;

/// Compilation options.
#[derive(Clone, Copy, Debug, Default)]
pub struct CompileOptions {
    /// yaql 0.2 (legacy) syntax.
    pub legacy: bool,
    /// MuranoPL operators (`is`, `ns:Name`, `:Name`).
    pub murano: bool,
}

/// A compiled expression: compile once, evaluate many times.
///
/// Compiling parses and lowers (every error the expression can have at
/// compile time is found then); the bytecode is emitted from the IR when
/// the program is first run, so that the many expressions of a class that
/// a run never reaches cost no emission. Once emitted, the code is frozen
/// and shared by every thread that runs the program.
pub struct Program {
    src: Arc<str>,
    ir: Arc<ir::Expr>,
    chunk: OnceLock<Arc<Chunk>>,
    /// The expression as machine code (see [`Program::native`]).
    native: jit::Tier<jit::Predicate>,
    /// The expression's truth as machine code (see [`Program::truth`]).
    truth: jit::Tier<jit::Predicate>,
}

/// Compiles a YAQL expression.
pub fn compile(src: &str, reg: &Registry, opts: CompileOptions) -> Result<Program, Error> {
    let lex = yaql::LexOptions {
        legacy: opts.legacy,
        murano: opts.murano,
    };
    let mut tree = yaql::flat::Flat::with_capacity(src.len());
    let root = yaql::parse_flat(src, lex, &mut tree)?;
    let ir = lower::Lowerer::new(reg)
        .legacy(opts.legacy)
        .lower_flat(&tree, root)?;
    Ok(Program::new(src, ir))
}

/// Compiles a YAQL expression in the language of an engine with its own
/// operator table (see [`yaql::table`]).
pub fn compile_with_operators(
    src: &str,
    reg: &Registry,
    opts: CompileOptions,
    table: &yaql::table::OpTable,
) -> Result<Program, Error> {
    let lex = yaql::LexOptions {
        legacy: opts.legacy,
        murano: opts.murano,
    };
    let mut tree = yaql::flat::Flat::with_capacity(src.len());
    let root = yaql::table::parse(src, table, lex, &mut tree)?;
    let ir = lower::Lowerer::new(reg)
        .legacy(opts.legacy)
        .lower_flat(&tree, root)?;
    Ok(Program::new(src, ir))
}

/// Compiles an expression already parsed from `src` (as [`compile`] does
/// after parsing): the MuranoPL IR keeps each expression's syntax tree so
/// that it is parsed once. `ast`'s spans must be offsets into `src`.
pub fn compile_parsed(
    src: &str,
    ast: &yaql::ast::Expr,
    reg: &Registry,
    opts: CompileOptions,
) -> Result<Program, Error> {
    let ir = lower::Lowerer::new(reg).legacy(opts.legacy).lower(ast)?;
    Ok(Program::new(src, ir))
}

impl Program {
    fn new(src: &str, ir: ir::Expr) -> Program {
        Program {
            src: src.into(),
            ir: Arc::new(ir),
            chunk: OnceLock::new(),
            native: Default::default(),
            truth: Default::default(),
        }
    }
    /// The source text.
    pub fn source(&self) -> &str {
        &self.src
    }
    /// The IR.
    pub fn ir(&self) -> &ir::Expr {
        &self.ir
    }
    /// The bytecode.
    pub fn chunk(&self) -> &Arc<Chunk> {
        self.chunk
            .get_or_init(|| Arc::new(emit::Emitter::chunk(&self.ir)))
    }
    /// The expression as machine code ([`jit::Predicate`]), when it is a
    /// condition the JIT compiles and `mode` wants it by now: with
    /// [`jit::Mode::Auto`] after [`jit::Mode::HOT`] evaluations.
    pub fn native(&self, mode: jit::Mode) -> Option<&jit::Predicate> {
        self.native
            .get(mode, || jit::Predicate::compile(&self.ir).ok())
    }
    /// The expression's truth (what an `If` or `While` asks of it) as
    /// machine code ([`jit::Predicate::truth`]), when the JIT compiles it
    /// and `mode` wants it by now.
    pub fn truth(&self, mode: jit::Mode) -> Option<&jit::Predicate> {
        self.truth
            .get(mode, || jit::Predicate::truth(&self.ir).ok())
    }
    /// Evaluates with `$` bound to `data`. The result may hold lazy
    /// sequences; see `finalize` in the stdlib for output conversion.
    pub fn eval(&self, env: &Env, data: Value) -> Result<Value, Error> {
        let _budget =
            runtime::budget::Budget::start(env.options().time_budget, env.options().max_memory);
        // The evaluation's generator (shared with an enclosing one's).
        let _rng = runtime::rand::Scope::enter(env.options().seed);
        vm::interp::run(env, self.chunk(), &Frame::root(data))
    }
    /// Evaluates in a given context.
    pub fn eval_in(&self, env: &Env, ctx: &Arc<Frame>) -> Result<Value, Error> {
        let _budget =
            runtime::budget::Budget::start(env.options().time_budget, env.options().max_memory);
        let _rng = runtime::rand::Scope::enter(env.options().seed);
        vm::interp::run(env, self.chunk(), ctx)
    }
}

/// Compiles MuranoPL expression `y` from its syntax tree (no parsing),
/// with errors worded as the engine words them: for a
/// [`crate::murano::ir::Role::Template`] the compiler's kind with the
/// message ``file:line:col: <message> in `src` ``, for a
/// [`crate::murano::ir::Role::Contract`] `DslContractSyntaxError` with
/// ``file:line:col: <message> in contract `src` ``, and for destination
/// parts the compiler's error as it is.
pub fn compile_yaql(y: &Yaql, reg: &Registry, opts: CompileOptions) -> Result<Program, Error> {
    compile_parsed(&y.src, &y.ast, reg, opts).map_err(|e| y.wrap_error(e))
}
