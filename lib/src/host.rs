//! Host functions: Rust closures (or, through the C ABI, C callbacks)
//! that YAQL calls by name, in an [`Engine`](crate::Engine)'s evaluations
//! ([`Engine::define`](crate::Engine::define)) and in the MuranoPL code
//! of a catalogue made with them
//! ([`Catalogue::with_host_functions`](crate::Catalogue::with_host_functions)).
//!
//! A catalogue compiles its classes against a function registry, whose
//! overloads are plain function pointers; a host function is a closure.
//! So every host function is registered with one native, [`call_host`],
//! and the function itself as the overload's data, which the native
//! receives on each call (`Cx::data`): the closure lives as long as the
//! registries and compiled code that can call it.

use std::sync::Arc;

use runtime::ctx::Frame;
use runtime::registry::{kw, var, Args, Cx, Registry, Ty};
use runtime::{Env, Error, Value};

/// A function the host defines for YAQL code
/// ([`Engine::define`](crate::Engine::define)): the
/// call's positional arguments (`None`: left out, as in `f(1,,3)`) and
/// keyword arguments in, a value or an error out. It may be called from
/// every thread that evaluates with the engine, or runs code of a
/// catalogue that sees it.
pub type HostFunction =
    Arc<dyn Fn(&[Option<Value>], &[(Arc<str>, Value)]) -> Result<Value, Error> + Send + Sync>;

/// A [`HostFunction`] as YAQL code.
pub(crate) struct HostCode {
    pub(crate) name: Arc<str>,
    pub(crate) f: HostFunction,
}

impl HostCode {
    /// Calls the function with plain values: lazy sequences drained
    /// (within the iterator limit).
    fn call(
        &self,
        env: &Env,
        args: impl IntoIterator<Item = Option<Value>>,
        kwargs: impl IntoIterator<Item = (Arc<str>, Value)>,
    ) -> runtime::Result<Value> {
        let mut plain = Vec::new();
        for a in args {
            plain.push(a.map(|v| stdlib::finalize(env, v)).transpose()?);
        }
        let mut kw = Vec::new();
        for (k, v) in kwargs {
            kw.push((k, stdlib::finalize(env, v)?));
        }
        (self.f)(&plain, &kw)
    }
}

impl runtime::value::Invoke for HostCode {
    fn invoke(
        &self,
        env: &Env,
        _ctx: &Arc<Frame>,
        args: &[Value],
        kwargs: &[(Arc<str>, Value)],
    ) -> runtime::Result<Value> {
        self.call(env, args.iter().cloned().map(Some), kwargs.iter().cloned())
    }
    fn invoke_partial(
        &self,
        env: &Env,
        _ctx: &Arc<Frame>,
        args: &[Option<Value>],
        kwargs: &[(Arc<str>, Value)],
    ) -> runtime::Result<Value> {
        self.call(env, args.iter().cloned(), kwargs.iter().cloned())
    }
    fn describe(&self) -> String {
        format!("<host function {}>", self.name)
    }
}

/// The host function as a YAQL value (a lambda).
pub(crate) fn lambda(code: Arc<dyn runtime::value::Invoke>) -> Value {
    Value::Lambda(Arc::new(runtime::value::Closure {
        code,
        ctx: Arc::new(Frame::default()),
    }))
}

// ---- the registries -----------------------------------------------------

/// The native of every host function: calls the [`HostCode`] the overload
/// carries.
fn call_host(cx: &Cx, args: Args) -> runtime::Result<Value> {
    let code = cx.data.and_then(|d| d.downcast_ref::<HostCode>());
    // Only `natives` registers this native, always with its code.
    let code =
        code.ok_or_else(|| Error::new("HostFunctionError", "a host function without code"))?;
    code.call(cx.env, args.rest.into_iter().map(Some), args.kw)
}

/// What a catalogue compiles against when its code sees the host
/// functions `hosts`: the engine's registries with each host function
/// first (it takes precedence over a standard-library or engine function
/// of its name, as in [`Engine::define`](crate::Engine::define)).
pub(crate) fn natives(hosts: &[(Arc<str>, HostFunction)]) -> engine::Natives {
    let codes: Vec<Arc<HostCode>> = (hosts.iter())
        .map(|(name, f)| {
            let (name, f) = (name.clone(), f.clone());
            Arc::new(HostCode { name, f })
        })
        .collect();
    let with_hosts = |base: Arc<Registry>, legacy: bool| {
        let mut r = Registry::new();
        r.set_any_form(legacy);
        r.group("host");
        for c in &codes {
            let params = vec![
                var("args", Ty::Any).nullable(),
                kw("kwargs", Ty::Any).nullable(),
            ];
            r.function(&c.name, params, call_host).data(c.clone());
        }
        r.merge_from(&base);
        Arc::new(r)
    };
    let both = |base: fn(bool) -> Arc<Registry>| [false, true].map(|l| with_hosts(base(l), l));
    engine::Natives {
        murano: both(engine::murano_registry),
        contracts: both(engine::contract_registry),
        compile_contract: |t, reg, opts, mode| {
            engine::contracts::Contract::compile(t, reg, opts, mode).map(engine::ContractCode::new)
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(v: &Option<Value>) -> i64 {
        v.as_ref().and_then(Value::as_i64).unwrap_or(0)
    }

    /// Each host function calls its own closure, before the standard
    /// library's function of the same name; the registries keep the
    /// closures alive, and drop them with themselves.
    #[test]
    fn host_functions_call_their_own_closure_and_live_with_the_registry() {
        let twice: HostFunction = Arc::new(|a, _| Ok(Value::Int(2 * int(&a[0]))));
        let len: HostFunction =
            Arc::new(|a, kw| Ok(Value::Int(100 + a.len() as i64 + kw.len() as i64)));
        let n = natives(&[("twice".into(), twice.clone()), ("len".into(), len.clone())]);
        assert!(Arc::strong_count(&twice) > 1);
        {
            let reg = n.murano[0].clone();
            let env = Env::new(reg.clone(), Default::default());
            let eval = |expr: &str| {
                let p = compiler::compile(expr, &reg, Default::default())?;
                p.eval(&env, Value::Null)
            };
            assert_eq!(eval("twice(21)").unwrap().as_i64(), Some(42));
            assert_eq!(eval("len([1, 2, 3], x => 1)").unwrap().as_i64(), Some(102));
            assert_eq!(eval("twice(len(1))").unwrap().as_i64(), Some(202));
            // A left-out argument binds no overload.
            let e = eval("twice(1,,3)").unwrap_err();
            assert!(e.message().contains("twice"), "{}", e.message());
            // The method form is still the standard library's.
            assert_eq!(eval("[1, 2, 3].len()").unwrap().as_i64(), Some(3));
            // The contract registry too.
            assert!(n.contracts[1].get("twice").is_some());
        }
        drop(n);
        assert_eq!((Arc::strong_count(&twice), Arc::strong_count(&len)), (1, 1));
    }

    /// Contracts that call a host function, compiled to machine code when
    /// they are built (the JIT leaves the call to the interpreter).
    #[test]
    fn contracts_call_host_functions_with_the_jit_on() {
        let dir = std::env::temp_dir().join(format!("muranopl-host-jit-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("Classes")).unwrap();
        std::fs::write(
            dir.join("manifest.yaml"),
            "Format: 1.4\nType: Library\nFullName: ex.J\nClasses:\n  ex.J: J.yaml\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("Classes/J.yaml"),
            "Name: ex.J\nProperties:\n  n:\n    Contract: $.int().check(twice($) > 10)\n",
        )
        .unwrap();
        let mut engine = crate::Engine::new(Default::default());
        engine.define("twice", Arc::new(|a, _| Ok(Value::Int(2 * int(&a[0])))));
        let cat = crate::Catalogue::load(std::slice::from_ref(&dir), &[], true).unwrap();
        let cat = cat.with_host_functions(&engine);
        cat.set_jit(compiler::jit::Mode::Always);
        let check = |n: i64| {
            let m = format!(r#"{{"?": {{"id": "j", "type": "ex.J"}}, "n": {n}}}"#);
            let v = cat.validate(&runtime::json::from_tagged_str(&m).unwrap());
            assert!(v.error.is_none(), "{:?}", v.error);
            v.violations.len()
        };
        for _ in 0..3 {
            assert_eq!((check(6), check(5)), (0, 1));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
