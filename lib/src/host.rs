//! Host functions: Rust closures (or, through the C ABI, C callbacks)
//! that YAQL calls by name, in an [`Engine`](crate::Engine)'s evaluations
//! ([`Engine::define`](crate::Engine::define)) and in the MuranoPL code
//! of a catalogue made with them
//! ([`Catalogue::with_host_functions`](crate::Catalogue::with_host_functions)).
//!
//! A catalogue compiles its classes against a function registry, and a
//! registry holds plain function pointers; a host function is a closure.
//! So each host function a catalogue sees takes a slot of a process-wide
//! table ([`MAX_HOST_FUNCTIONS`] of them), with a function pointer of its
//! own that calls what the slot holds. The slot is the overload's: it is
//! freed when the last registry and compiled expression that can call the
//! overload is dropped (the overload's `*args` parameter holds the claim),
//! so no code can reach a slot after it is given to another function.

use std::sync::{Arc, RwLock};

use runtime::ctx::Frame;
use runtime::registry::{kw, var, Args, Cx, NativeFn, Registry, Ty};
use runtime::{Env, Error, Value};

/// A function the host defines for YAQL code
/// ([`Engine::define`](crate::Engine::define)): the
/// call's positional arguments (`None`: left out, as in `f(1,,3)`) and
/// keyword arguments in, a value or an error out. It may be called from
/// every thread that evaluates with the engine, or runs code of a
/// catalogue that sees it.
pub type HostFunction =
    Arc<dyn Fn(&[Option<Value>], &[(Arc<str>, Value)]) -> Result<Value, Error> + Send + Sync>;

/// How many host functions the catalogues of one process may see at once
/// (each catalogue's, counted once per catalogue; freed with it).
pub const MAX_HOST_FUNCTIONS: usize = ROWS * COLS;

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

// ---- the slots ----------------------------------------------------------

const ROWS: usize = 32;
const COLS: usize = 16;

/// What each slot holds (`None`: free).
static TABLE: RwLock<Vec<Option<HostFunction>>> = RwLock::new(Vec::new());

/// A slot taken by one host function; frees it when dropped. As YAQL code
/// it is the function itself.
struct Claim {
    slot: usize,
    code: HostCode,
}

impl Drop for Claim {
    fn drop(&mut self) {
        let mut t = TABLE.write().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = t.get_mut(self.slot) {
            *s = None;
        }
    }
}

impl runtime::value::Invoke for Claim {
    fn invoke(
        &self,
        env: &Env,
        ctx: &Arc<Frame>,
        args: &[Value],
        kwargs: &[(Arc<str>, Value)],
    ) -> runtime::Result<Value> {
        self.code.invoke(env, ctx, args, kwargs)
    }
    fn describe(&self) -> String {
        self.code.describe()
    }
}

/// Takes a free slot for `f`.
fn claim(name: &Arc<str>, f: &HostFunction) -> Result<Arc<Claim>, String> {
    let mut t = TABLE.write().unwrap_or_else(|e| e.into_inner());
    let slot = match t.iter().position(Option::is_none) {
        Some(i) => i,
        None if t.len() < MAX_HOST_FUNCTIONS => {
            t.push(None);
            t.len() - 1
        }
        None => {
            return Err(format!(
                "host function {name}: the catalogues of this process already see \
                 {MAX_HOST_FUNCTIONS} host functions (free some catalogues)"
            ))
        }
    };
    t[slot] = Some(f.clone());
    Ok(Arc::new(Claim {
        slot,
        code: HostCode {
            name: name.clone(),
            f: f.clone(),
        },
    }))
}

/// The native of every slot: calls what slot `slot` holds.
fn call_slot(slot: usize, cx: &Cx, args: Args) -> runtime::Result<Value> {
    let f = {
        let t = TABLE.read().unwrap_or_else(|e| e.into_inner());
        t.get(slot).cloned().flatten()
    };
    // Unreachable while the overload lives (it holds the claim).
    let f = f.ok_or_else(|| Error::new("HostFunctionError", "the host function is gone"))?;
    let code = HostCode { name: "".into(), f };
    code.call(cx.env, args.rest.into_iter().map(Some), args.kw)
}

fn slot<const I: usize>(cx: &Cx, args: Args) -> runtime::Result<Value> {
    call_slot(I, cx, args)
}

macro_rules! row {
    ($r:literal) => {
        [
            slot::<{ $r * COLS }> as NativeFn,
            slot::<{ $r * COLS + 1 }> as NativeFn,
            slot::<{ $r * COLS + 2 }> as NativeFn,
            slot::<{ $r * COLS + 3 }> as NativeFn,
            slot::<{ $r * COLS + 4 }> as NativeFn,
            slot::<{ $r * COLS + 5 }> as NativeFn,
            slot::<{ $r * COLS + 6 }> as NativeFn,
            slot::<{ $r * COLS + 7 }> as NativeFn,
            slot::<{ $r * COLS + 8 }> as NativeFn,
            slot::<{ $r * COLS + 9 }> as NativeFn,
            slot::<{ $r * COLS + 10 }> as NativeFn,
            slot::<{ $r * COLS + 11 }> as NativeFn,
            slot::<{ $r * COLS + 12 }> as NativeFn,
            slot::<{ $r * COLS + 13 }> as NativeFn,
            slot::<{ $r * COLS + 14 }> as NativeFn,
            slot::<{ $r * COLS + 15 }> as NativeFn,
        ]
    };
}

/// One native per slot.
static NATIVES: [[NativeFn; COLS]; ROWS] = [
    row!(0),
    row!(1),
    row!(2),
    row!(3),
    row!(4),
    row!(5),
    row!(6),
    row!(7),
    row!(8),
    row!(9),
    row!(10),
    row!(11),
    row!(12),
    row!(13),
    row!(14),
    row!(15),
    row!(16),
    row!(17),
    row!(18),
    row!(19),
    row!(20),
    row!(21),
    row!(22),
    row!(23),
    row!(24),
    row!(25),
    row!(26),
    row!(27),
    row!(28),
    row!(29),
    row!(30),
    row!(31),
];

// ---- the registries -----------------------------------------------------

/// What a catalogue compiles against when its code sees the host
/// functions `hosts`: the engine's registries with each host function
/// first (it takes precedence over a standard-library or engine function
/// of its name, as in [`Engine::define`](crate::Engine::define)).
pub(crate) fn natives(hosts: &[(Arc<str>, HostFunction)]) -> Result<engine::Natives, String> {
    let claims = (hosts.iter())
        .map(|(name, f)| claim(name, f))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(natives_of(&claims))
}

fn natives_of(claims: &[Arc<Claim>]) -> engine::Natives {
    let with_hosts = |base: Arc<Registry>, legacy: bool| {
        let mut r = Registry::new();
        r.set_any_form(legacy);
        r.group("host");
        for c in claims {
            // Any arguments; the `*args` parameter's default (never used
            // by binding) holds the claim for as long as the overload
            // lives.
            let args = var("args", Ty::Any).nullable().default(lambda(c.clone()));
            r.function(
                &c.code.name,
                vec![args, kw("kwargs", Ty::Any).nullable()],
                NATIVES[c.slot / COLS][c.slot % COLS],
            );
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

    /// Whether `slot` holds `f` (a freed slot may be another test's).
    fn holds(slot: usize, f: &HostFunction) -> bool {
        let t = TABLE.read().unwrap();
        t[slot].as_ref().is_some_and(|g| Arc::ptr_eq(g, f))
    }

    /// Each slot's native calls its own function, before the standard
    /// library's of the same name; the slot is held while a registry can
    /// call it, and given out again once it is free.
    #[test]
    fn slots_call_their_own_function_and_free_with_the_registry() {
        let twice: HostFunction = Arc::new(|a, _| Ok(Value::Int(2 * int(&a[0]))));
        let len: HostFunction =
            Arc::new(|a, kw| Ok(Value::Int(100 + a.len() as i64 + kw.len() as i64)));
        let claims = vec![
            claim(&"twice".into(), &twice).unwrap(),
            claim(&"len".into(), &len).unwrap(),
        ];
        let slots: Vec<usize> = claims.iter().map(|c| c.slot).collect();
        assert_ne!(slots[0], slots[1]);
        let n = natives_of(&claims);
        drop(claims);
        assert!(holds(slots[0], &twice) && holds(slots[1], &len));
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
        assert!(!holds(slots[0], &twice) && !holds(slots[1], &len));
        let again = claim(&"again".into(), &twice).unwrap();
        assert!(holds(again.slot, &twice));
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
        let cat = cat.with_host_functions(&engine).unwrap();
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
