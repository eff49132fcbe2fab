//! YAQL evaluation: [`Engine`], the standard library with options and the
//! host's functions.

use runtime::{json, Env, Error, Options, Value};

use compiler::{CompileOptions, Program};

use crate::host::{self, HostFunction};

/// A YAQL engine: the standard library plus options, and the host's
/// functions ([`Engine::define`]).
pub struct Engine {
    env: Env,
    copts: CompileOptions,
    /// The host's functions as values, bound in every evaluation's root
    /// context.
    funcs: Vec<(std::sync::Arc<str>, Value)>,
    /// The same functions, for the catalogues that see them
    /// ([`crate::Catalogue::with_host_functions`]).
    hosts: Vec<(std::sync::Arc<str>, HostFunction)>,
}

impl Engine {
    /// An engine with the given options.
    pub fn new(options: Options) -> Engine {
        let legacy = options.legacy;
        Engine::with_syntax(options, legacy)
    }
    /// An engine whose syntax and library differ: the yaql 3 grammar over
    /// the yaql 0.2 library (`options.legacy`), as the reference evaluates
    /// a yaql 3 engine's expression in a context made by
    /// `yaql.legacy.create_context()`, or the other way round.
    pub fn with_syntax(options: Options, legacy_syntax: bool) -> Engine {
        let copts = CompileOptions {
            legacy: legacy_syntax,
            murano: false,
        };
        Engine {
            env: stdlib::env(options),
            copts,
            funcs: Vec::new(),
            hosts: Vec::new(),
        }
    }

    /// Defines the function `name` for the expressions this engine
    /// evaluates (`name(args)`), as a user function of their root context:
    /// it takes precedence over a standard-library function of that name.
    /// A later definition of a name replaces the earlier one. MuranoPL
    /// code sees the functions through a catalogue made with them
    /// ([`crate::Catalogue::with_host_functions`]).
    ///
    /// ```
    /// use muranopl::{Engine, Value};
    /// let mut engine = Engine::new(Default::default());
    /// engine.define("twice", std::sync::Arc::new(|args, _kw| {
    ///     Ok(Value::Int(2 * args[0].as_ref().and_then(|v| v.as_i64()).unwrap_or(0)))
    /// }));
    /// assert_eq!(engine.eval_json("$.select(twice($))", "[1, 2]").unwrap(), "[2, 4]");
    /// ```
    pub fn define(&mut self, name: &str, f: HostFunction) {
        let name: std::sync::Arc<str> = name.into();
        self.funcs.retain(|(n, _)| *n != name);
        self.hosts.retain(|(n, _)| *n != name);
        let code = host::HostCode {
            name: name.clone(),
            f: f.clone(),
        };
        self.funcs
            .push((name.clone(), host::lambda(std::sync::Arc::new(code))));
        self.hosts.push((name, f));
    }

    /// The host's functions ([`Engine::define`]), for the catalogues that
    /// see them.
    pub(crate) fn host_functions(&self) -> &[(std::sync::Arc<str>, HostFunction)] {
        &self.hosts
    }

    /// The names of the host's functions ([`Engine::define`]).
    pub fn defined(&self) -> impl Iterator<Item = &str> {
        self.funcs.iter().map(|(n, _)| &**n)
    }
    /// The evaluation environment.
    pub fn env(&self) -> &Env {
        &self.env
    }
    /// Compiles an expression.
    pub fn compile(&self, expr: &str) -> Result<Program, Error> {
        compiler::compile(expr, self.env.registry(), self.copts)
    }
    /// Evaluates a compiled expression and converts the result for output.
    /// A condition evaluated often enough ([`Options::jit`]) runs as
    /// machine code when the JIT compiles it ([`jit::Predicate`](crate::jit::Predicate)); yaql
    /// 0.2 (legacy) engines always interpret.
    pub fn eval(&self, prog: &Program, data: Value) -> Result<Value, Error> {
        self.eval_with(prog, data, &[])
    }

    /// [`Engine::eval`] with the variables `vars` bound (`$name`).
    ///
    /// ```
    /// use muranopl::{Engine, Value};
    /// let engine = Engine::new(Default::default());
    /// let prog = engine.compile("$.where($ > $min)").unwrap();
    /// let data = muranopl::json::from_tagged_str("[1, 5, 9]").unwrap();
    /// let v = engine.eval_with(&prog, data, &[("min".into(), Value::Int(4))]).unwrap();
    /// assert_eq!(muranopl::json::to_tagged_string(&v), "[5, 9]");
    /// ```
    pub fn eval_with(
        &self,
        prog: &Program,
        data: Value,
        vars: &[(std::sync::Arc<str>, Value)],
    ) -> Result<Value, Error> {
        // One budget for the evaluation and the materialisation of its
        // lazy result.
        let opts = self.env.options();
        let _budget = runtime::budget::Budget::start(opts.time_budget, opts.max_memory);
        let _rng = runtime::rand::Scope::enter(opts.seed);
        if !vars.is_empty() || !self.funcs.is_empty() {
            let mut root = runtime::ctx::Frame::default();
            root.args.push(data);
            root.vars.extend(vars.iter().cloned());
            root.funcs.extend(self.funcs.iter().cloned());
            root.has_funcs = !root.funcs.is_empty();
            return self.eval_frame(prog, std::sync::Arc::new(root));
        }
        if !self.copts.legacy {
            if let Some(b) = prog
                .native(self.env.options().jit)
                .and_then(|p| p.eval(&data))
            {
                return Ok(Value::Bool(b));
            }
        }
        let v = prog.eval(&self.env, data)?;
        self.finish(v)
    }

    /// Evaluates a compiled expression in a root context built by the
    /// caller (`$`, variables and user functions, as an embedder's
    /// context supplies them) and converts the result for output. The
    /// engine's own host functions ([`Engine::define`]) are not bound
    /// here: the caller's frame says what is.
    ///
    /// ```
    /// use muranopl::{Engine, Frame, Value};
    /// let engine = Engine::new(Default::default());
    /// let prog = engine.compile("$ + $step").unwrap();
    /// let mut root = Frame::default();
    /// root.args.push(Value::Int(40));
    /// root.vars.push(("step".into(), Value::Int(2)));
    /// let v = engine.eval_frame(&prog, std::sync::Arc::new(root)).unwrap();
    /// assert_eq!(v.as_i64(), Some(42));
    /// ```
    pub fn eval_frame(
        &self,
        prog: &Program,
        root: std::sync::Arc<runtime::ctx::Frame>,
    ) -> Result<Value, Error> {
        let opts = self.env.options();
        let _budget = runtime::budget::Budget::start(opts.time_budget, opts.max_memory);
        let _rng = runtime::rand::Scope::enter(opts.seed);
        let v = prog.eval_in(&self.env, &root)?;
        self.finish(v)
    }

    /// Drains the lazy parts of a result, within the memory quota.
    fn finish(&self, v: Value) -> Result<Value, Error> {
        // A result whose lists are shared can print (and be walked)
        // exponentially larger than it is: bounded by the memory quota,
        // before and after its lazy parts are drained.
        self.check_size(&v)?;
        let v = stdlib::finalize(&self.env, v)?;
        self.check_size(&v)?;
        Ok(v)
    }

    /// The result's printed size against the memory quota (never below
    /// the default quota: a small quota such as the reference test
    /// suite's bounds what operations build, not what a result prints).
    fn check_size(&self, v: &Value) -> Result<(), Error> {
        let Some(q) = self.env.options().memory_quota else {
            return Ok(());
        };
        let max = q.max(runtime::DEFAULT_MEMORY_QUOTA);
        if json::longer_than(v, max) {
            return Err(Error::new(
                runtime::ErrorKind::MemoryQuotaExceededException,
                format!("the result would print longer than {max} bytes"),
            ));
        }
        Ok(())
    }
    /// Compiles and evaluates `expr` over tagged-JSON `data`, returning
    /// tagged JSON.
    pub fn eval_json(&self, expr: &str, data: &str) -> Result<String, Error> {
        let prog = self.compile(expr)?;
        let v = self.eval(&prog, json::from_tagged_str(data)?)?;
        Ok(json::to_tagged_string(&v))
    }
}
