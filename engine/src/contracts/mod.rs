//! Contracts: property and argument templates compiled once per class into
//! checkers that coerce as the reference does (`int()`, `string()`,
//! `bool()`, `notNull()`, `check()`, `class()`, `template()`, `owned()`,
//! `notOwned()`, list and dict forms).
//!
//! The contract IR ([`compiler::murano::ir::Contract`]) is the only
//! representation of a contract: this module keeps, per IR node, only what
//! running it needs (compiled programs, machine code, resolved class
//! names). By concern:
//!
//! * [`check`](self::check): the checker built from the IR and the hot
//!   path that runs it (machine code, quick list passes, the steps of a
//!   chain);
//! * [`reach`](self::reach): what a contract needs besides the value
//!   ([`Reach`]), read from the IR;
//! * [`methods`](self::methods): the contract methods as YAQL functions
//!   (`$.int()`, `$.class(...)`, ...), and the coercions the checker shares
//!   with them.

mod check;
mod methods;
pub mod plan;
#[cfg(test)]
mod plan_tests;
mod reach;
#[cfg(test)]
mod tests;

use runtime::ErrorKind;
use std::sync::Arc;

use compiler::jit;
use compiler::murano::ir::{self, Yaql};
use compiler::murano::{LoadOptions, Template};
use compiler::CompileOptions;
use runtime::ctx::Frame;
use runtime::registry::Registry;
use runtime::value::ObjRef;
use runtime::{Env, Error, Result, Value};

use crate::executor::Executor;
pub use check::TierCoverage;
use check::{At, Check};
pub use compiler::jit::Borrowed;
pub use methods::register;

/// A compiled contract: the checker built from the contract's IR
/// ([`compiler::murano::ir::lower_contract`]).
#[derive(Clone)]
pub struct Contract {
    check: Check,
    /// The IR's decision: the value stays an object definition.
    template: bool,
    /// What checking a value needs besides the value.
    reach: Reach,
    /// The function and method names its expressions call.
    names: Arc<[Arc<str>]>,
}

/// What a contract needs besides the value it checks, decided from its IR.
/// Streaming validation ([`crate::stream`]) checks objects apart from the
/// model they belong to, so it takes only contracts that need no more than
/// the value and the classes of the objects it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reach {
    /// The value alone: coercions, and predicates over `$` that call the
    /// YAQL library only.
    Value,
    /// The value and the classes of the objects it names: `class()` first,
    /// then only `notNull()`.
    Classes,
    /// Anything else (`$this`, engine functions, `template()`, `owned()`,
    /// other methods).
    Execution,
}

impl Contract {
    /// Each part of the contract that runs code (chains, expression
    /// contracts), and whether the compiled tier takes it or why not.
    pub fn tier_coverage(&self) -> Vec<TierCoverage> {
        let mut out = Vec::new();
        self.check.tier_coverage(&mut out);
        out
    }

    /// Compiles a contract template: lowers it to the IR, compiling each
    /// expression as it is made (errors are `DslContractSyntaxError`s), and
    /// builds the checker from the IR's forms. With [`jit::Mode::Always`]
    /// its chains are compiled to machine code now.
    pub fn compile(
        t: &Template,
        reg: &Registry,
        opts: CompileOptions,
        mode: jit::Mode,
    ) -> Result<Contract> {
        let mut programs = Vec::new();
        let lopts = LoadOptions {
            legacy: opts.legacy,
        };
        let c = ir::lower_contract_with(t, lopts, &mut |y: &Yaql| {
            programs.push(Arc::new(compiler::compile_yaql(y, reg, opts)?));
            Ok(())
        })?;
        let compile_part = |y: &Yaql, part: &compiler::yaql::ast::Expr| {
            compiler::compile_parsed(&y.src, part, reg, opts)
                .ok()
                .map(Arc::new)
        };
        let mut names = Vec::new();
        let check = Check::of(&c, &programs, &compile_part);
        check.chains_at_load(mode);
        Ok(Contract {
            check,
            template: c.is_template(),
            reach: reach::reach(&c, reg, &mut names),
            names: names.into(),
        })
    }

    /// What checking a value needs besides the value.
    pub fn reach(&self) -> Reach {
        self.reach
    }

    /// The function and method names the contract's expressions call
    /// (extension methods of these names could intercept them).
    pub fn names(&self) -> &[Arc<str>] {
        &self.names
    }

    /// True for a `template()` contract (its value stays an object
    /// definition, not an object), as the IR decides it
    /// ([`ir::Contract::is_template`]).
    pub fn is_template(&self) -> bool {
        self.template
    }

    /// True when the contract's machine code alone shows that `v` meets it
    /// (false: check it with [`Contract::check`] to know).
    pub fn holds(&self, ex: &Executor, v: &Value) -> bool {
        self.check.holds(ex, v)
    }

    /// Checks and coerces `v`. `owner` is the object the value belongs to
    /// (for `class()`, `owned()`); `name` names the property or argument.
    pub fn check(
        &self,
        ex: &Executor,
        env: &Env,
        ctx: &Arc<Frame>,
        v: Value,
        owner: Option<&Arc<ObjRef>>,
        name: &str,
    ) -> Result<Value> {
        self.check
            .check_at(ex, env, ctx, v, owner, At::Top)
            .map_err(|e| named(e, name))
    }

    /// Of a list contract (`[c]`, `[c, min, max]`, `[c0, c1, ...]`): its
    /// length bounds; `None` for any other contract.
    pub fn list_bounds(&self) -> Option<(i64, Option<i64>)> {
        match &self.check {
            Check::List(_, min, max) => Some((*min, *max)),
            _ => None,
        }
    }

    /// The violation a list of `len` items is of a list contract's bounds,
    /// as [`Contract::check`] of the list reports it.
    pub fn length_violation(&self, len: usize, name: &str) -> Option<Error> {
        let Check::List(_, min, max) = &self.check else {
            return None;
        };
        check::length_error(len, *min, *max).map(|e| named(methods::violation(e), name))
    }

    /// True when machine code alone shows that item `i` of a list meets a
    /// list contract's item contract (see [`Contract::holds`]).
    pub fn item_holds(&self, ex: &Executor, i: usize, v: &Value) -> bool {
        match &self.check {
            Check::List(cs, ..) => check::item_contract(cs, i).holds(ex, v),
            _ => false,
        }
    }

    /// Checks item `i` of a list against a list contract's item contract:
    /// a violation reads as [`Contract::check`] of the whole list reports
    /// that item (when the length is within bounds and no item before it
    /// violates).
    pub fn check_item(
        &self,
        ex: &Executor,
        env: &Env,
        ctx: &Arc<Frame>,
        i: usize,
        v: Value,
        name: &str,
    ) -> Result<Value> {
        let Check::List(cs, ..) = &self.check else {
            return self.check(ex, env, ctx, v, None, name);
        };
        check::item_contract(cs, i)
            .check_at(ex, env, ctx, v, None, At::Index(&At::Top, i))
            .map_err(|e| named(e, name))
    }

    /// Whether an object of `class` meets item `i`'s contract of a list
    /// contract, when that contract is `class()` and `notNull()` steps
    /// alone (names resolved in `env` and `ctx`, as checking resolves
    /// them); `None` when the class alone cannot tell.
    pub fn item_takes_object(
        &self,
        env: &Env,
        ctx: &Arc<Frame>,
        i: usize,
        class: &crate::class::Class,
    ) -> Option<bool> {
        match &self.check {
            Check::List(cs, ..) => check::item_contract(cs, i).takes_object(env, ctx, class),
            _ => None,
        }
    }
}

/// A violation `e` of the value of property or argument `name`, named as
/// murano names it (`[name] message`).
fn named(e: Error, name: &str) -> Error {
    if *e.error_kind() == ErrorKind::ContractViolationException && !e.message().starts_with('[') {
        e.reworded(|m| {
            m.insert_str(0, "] ");
            m.insert_str(0, name);
            m.insert(0, '[');
        })
    } else {
        e
    }
}
