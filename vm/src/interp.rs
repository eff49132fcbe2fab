//! The interpreter loop.

use runtime::ErrorKind;
use std::cell::Cell;
use std::cmp::Ordering;
use std::sync::Arc;

use runtime::ctx::Frame;
use runtime::registry::{ArgIn, Cx};
use runtime::value::{num_cmp, Closure, Dict, Invoke};
use runtime::{num, Env, Error, Result, Value};
use smallvec::SmallVec;

use crate::bc::{ArgKind, CallSite, Chunk, Op};

/// Maximum nesting of evaluations (lambda calls inside lambda calls).
pub const MAX_DEPTH: u32 = 400;

// The evaluation depth of the code running on this OS thread. Safe as a
// thread-local because evaluation never migrates between OS threads; green
// threads get their own (the scheduler swaps it on every switch, see
// `coro::Scheduler::run_seeded`). Every evaluation puts back the depth it
// found, so it reads 0 again between runs.
thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// The current evaluation depth.
pub(crate) fn depth() -> u32 {
    DEPTH.with(|d| d.get())
}

/// Sets the evaluation depth, returning the previous one (green-thread
/// switches).
pub(crate) fn swap_depth(v: u32) -> u32 {
    DEPTH.with(|d| d.replace(v))
}

struct DepthGuard;

impl DepthGuard {
    fn enter() -> Result<DepthGuard> {
        DEPTH.with(|d| {
            let n = d.get();
            if n >= MAX_DEPTH {
                return Err(Error::new(
                    ErrorKind::RecursionError,
                    "maximum recursion depth exceeded",
                ));
            }
            d.set(n + 1);
            Ok(DepthGuard)
        })
    }
}

impl Drop for DepthGuard {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

impl Invoke for Chunk {
    fn invoke(
        &self,
        env: &Env,
        ctx: &Arc<Frame>,
        args: &[Value],
        kwargs: &[(Arc<str>, Value)],
    ) -> Result<Value> {
        if args.is_empty() && kwargs.is_empty() {
            return run(env, self, ctx);
        }
        if let (Some(fast), [arg], []) = (&self.fast, args, kwargs) {
            if let Some(v) = fast.call(env, arg) {
                return Ok(v);
            }
        }
        let mut f = Frame::child(ctx, args);
        for (k, v) in kwargs {
            f.vars.push((k.clone(), v.clone()));
        }
        run(env, self, &Arc::new(f))
    }
    fn is_thunk(&self) -> bool {
        self.thunk
    }
}

#[inline]
fn is_num(v: &Value) -> bool {
    matches!(v, Value::Int(_) | Value::Float(_) | Value::BigInt(_))
}

/// Runs a chunk in a context.
pub fn run(env: &Env, chunk: &Chunk, ctx: &Arc<Frame>) -> Result<Value> {
    let _g = DepthGuard::enter()?;
    let mut stack: SmallVec<[Value; 16]> = SmallVec::new();
    let mut locals: SmallVec<[Value; 2]> = SmallVec::from_elem(Value::Null, chunk.nlocals as usize);
    let code = &chunk.code[..];
    let mut pc = 0usize;
    macro_rules! pop {
        () => {
            stack.pop().unwrap_or(Value::Null)
        };
    }
    macro_rules! fail {
        ($e:expr, $at:expr) => {{
            let e: Error = $e;
            return Err(match chunk.span_at($at) {
                Some(sp) => e.with_span(sp),
                None => e,
            });
        }};
    }
    // Pushes the result of an op, or fails with its error at `at`.
    macro_rules! push_or_fail {
        ($r:expr, $at:expr) => {
            match $r {
                Ok(v) => stack.push(v),
                Err(e) => fail!(e, $at),
            }
        };
    }
    loop {
        let at = pc;
        let Some((op, next)) = Op::decode(code, pc) else {
            fail!(Error::new(ErrorKind::InternalError, "bad bytecode"), at)
        };
        pc = next;
        match op {
            Op::Const { idx } => stack.push(chunk.consts[idx as usize].clone()),
            Op::Null {} => stack.push(Value::Null),
            Op::True {} => stack.push(Value::Bool(true)),
            Op::False {} => stack.push(Value::Bool(false)),
            Op::Arg { n } => stack.push(ctx.arg(n as usize)),
            Op::Var { name } => {
                let n = chunk.consts[name as usize].as_str().unwrap_or("");
                stack.push(ctx.var(n))
            }
            Op::Closure { chunk: i } => {
                let c = chunk.chunks[i as usize].clone();
                stack.push(Value::Lambda(Arc::new(Closure {
                    code: c,
                    ctx: ctx.clone(),
                })))
            }
            Op::List { n } => {
                let items: Vec<Value> = stack.drain(stack.len() - n as usize..).collect();
                stack.push(Value::list(items))
            }
            Op::Dict { n } => {
                let d = make_dict(&mut stack, n);
                stack.push(d)
            }
            Op::Pair {} => {
                let v = pop!();
                let k = pop!();
                stack.push(Value::Pair(Arc::new((k, v))))
            }
            Op::Call { site } => {
                let s = &chunk.sites[site as usize];
                let n = s.arity();
                let args: SmallVec<[Value; 6]> = stack.drain(stack.len() - n..).collect();
                push_or_fail!(call_site(env, ctx, s, args), at)
            }
            Op::Attr { site } => {
                // The emitter pushes the receiver, then the key constant.
                let key = pop!();
                let recv = pop!();
                push_or_fail!(attr(env, ctx, &chunk.sites[site as usize], recv, key), at)
            }
            Op::Add { site } => {
                let b = pop!();
                let a = pop!();
                push_or_fail!(add(env, ctx, chunk, site, a, b), at)
            }
            Op::Sub { site } | Op::Mul { site } | Op::Div { site } | Op::Mod { site } => {
                let b = pop!();
                let a = pop!();
                push_or_fail!(arith(env, ctx, chunk, op, site, a, b), at)
            }
            // Python equality is defined for every pair of values, so `=`
            // never needs its call site.
            Op::Eq { .. } | Op::Ne { .. } => {
                let b = pop!();
                let a = pop!();
                let eq = a == b;
                stack.push(Value::Bool(if matches!(op, Op::Eq { .. }) {
                    eq
                } else {
                    !eq
                }))
            }
            Op::Lt { site } | Op::Le { site } | Op::Gt { site } | Op::Ge { site } => {
                let b = pop!();
                let a = pop!();
                push_or_fail!(compare(env, ctx, chunk, op, site, a, b), at)
            }
            Op::In { site } => {
                let b = pop!();
                let a = pop!();
                push_or_fail!(contains(env, ctx, chunk, site, a, b), at)
            }
            Op::Neg { site } => {
                let a = pop!();
                push_or_fail!(neg(env, ctx, chunk, site, a), at)
            }
            Op::Not {} => {
                let a = pop!();
                stack.push(Value::Bool(!a.truthy()))
            }
            Op::JumpIfFalseKeep { target } => {
                if !stack.last().is_some_and(|v| v.truthy()) {
                    pc = target as usize;
                } else {
                    stack.pop();
                }
            }
            Op::JumpIfTrueKeep { target } => {
                if stack.last().is_some_and(|v| v.truthy()) {
                    pc = target as usize;
                } else {
                    stack.pop();
                }
            }
            Op::JumpIfNullKeep { target } => {
                if stack.last().is_none_or(|v| v.is_null()) {
                    pc = target as usize;
                }
            }
            Op::Jump { target } => pc = target as usize,
            Op::StoreLocal { slot } => locals[slot as usize] = pop!(),
            Op::LoadLocal { slot } => stack.push(locals[slot as usize].clone()),
            Op::Pop {} => {
                stack.pop();
            }
            Op::Return {} => return Ok(pop!()),
        }
    }
}

/// `Dict { n }`: the dict of the top `2 * n` values (key, value, ...).
#[inline(always)]
fn make_dict(stack: &mut SmallVec<[Value; 16]>, n: u32) -> Value {
    let mut d = Dict::default();
    let items: Vec<Value> = stack.drain(stack.len() - 2 * n as usize..).collect();
    let mut it = items.into_iter();
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        d.insert(k, v);
    }
    Value::dict(d)
}

/// `Attr`: `recv.key`, a dict's entry directly, else through the site.
#[inline(always)]
fn attr(env: &Env, ctx: &Arc<Frame>, s: &CallSite, recv: Value, key: Value) -> Result<Value> {
    if let (Value::Dict(d), Value::Str(_)) = (&recv, &key) {
        // Small dicts (most objects in data) are faster to scan
        // than to hash.
        if let Some(v) = runtime::value::get_interned(d, &key) {
            return Ok(v.clone());
        }
    }
    call2(env, ctx, s, recv, key)
}

/// `Add`: numbers and strings directly, else through the site.
#[inline(always)]
fn add(
    env: &Env,
    ctx: &Arc<Frame>,
    chunk: &Chunk,
    site: u32,
    mut a: Value,
    b: Value,
) -> Result<Value> {
    if let (Value::Str(x), Value::Str(y)) = (&mut a, &b) {
        env.guard_size(x.len() + y.len())?;
        // A string nothing else holds (the result of the operation before,
        // as in `$.name.toUpper() + '-' + str($.id)`) grows in place: one
        // allocation for the whole chain, not one per `+`.
        if let Some(s) = Arc::get_mut(x) {
            s.push_str(y);
            return Ok(a);
        }
        let mut s = String::with_capacity(x.len() + y.len());
        s.push_str(x);
        s.push_str(y);
        return Ok(Value::str(s));
    }
    match (&a, &b) {
        (Value::Int(x), Value::Int(y)) => match x.checked_add(*y) {
            Some(r) => Ok(Value::Int(r)),
            None => num::add(&a, &b),
        },
        (Value::Float(x), Value::Float(y)) => Ok(Value::Float(x + y)),
        _ if is_num(&a) && is_num(&b) => num::add(&a, &b),
        _ => call2(env, ctx, &chunk.sites[site as usize], a, b),
    }
}

/// `Sub`, `Mul`, `Div`, `Mod`: numbers directly, else through the site.
#[inline(always)]
fn arith(
    env: &Env,
    ctx: &Arc<Frame>,
    chunk: &Chunk,
    op: Op,
    site: u32,
    a: Value,
    b: Value,
) -> Result<Value> {
    if is_num(&a) && is_num(&b) {
        match op {
            Op::Sub { .. } => num::sub(&a, &b),
            Op::Mul { .. } => num::mul(&a, &b),
            Op::Div { .. } => num::div(&a, &b),
            _ => num::modulo(&a, &b),
        }
    } else {
        call2(env, ctx, &chunk.sites[site as usize], a, b)
    }
}

/// `Lt`, `Le`, `Gt`, `Ge`: numbers and strings directly, else through the
/// site.
#[inline(always)]
fn compare(
    env: &Env,
    ctx: &Arc<Frame>,
    chunk: &Chunk,
    op: Op,
    site: u32,
    a: Value,
    b: Value,
) -> Result<Value> {
    let ord = if is_num(&a) && is_num(&b) {
        Some(num_cmp(&a, &b))
    } else if let (Value::Str(x), Value::Str(y)) = (&a, &b) {
        Some(Some(x.as_str().cmp(y.as_str())))
    } else {
        None
    };
    match ord {
        Some(o) => {
            let r = match (op, o) {
                (_, None) => false,
                (Op::Lt { .. }, Some(o)) => o == Ordering::Less,
                (Op::Le { .. }, Some(o)) => o != Ordering::Greater,
                (Op::Gt { .. }, Some(o)) => o == Ordering::Greater,
                (_, Some(o)) => o != Ordering::Less,
            };
            Ok(Value::Bool(r))
        }
        None => call2(env, ctx, &chunk.sites[site as usize], a, b),
    }
}

/// `In`: membership in a list directly, else through the site.
#[inline(always)]
fn contains(
    env: &Env,
    ctx: &Arc<Frame>,
    chunk: &Chunk,
    site: u32,
    a: Value,
    b: Value,
) -> Result<Value> {
    match &b {
        Value::List(l) if l.len() <= env.limit() => Ok(Value::Bool(l.contains(&a))),
        _ => call2(env, ctx, &chunk.sites[site as usize], a, b),
    }
}

/// `Neg`: numbers directly, else through the site.
#[inline(always)]
fn neg(env: &Env, ctx: &Arc<Frame>, chunk: &Chunk, site: u32, a: Value) -> Result<Value> {
    if is_num(&a) {
        num::neg(&a)
    } else {
        let mut args: SmallVec<[Value; 6]> = SmallVec::new();
        args.push(a);
        call_site(env, ctx, &chunk.sites[site as usize], args)
    }
}

fn call2(env: &Env, ctx: &Arc<Frame>, s: &CallSite, a: Value, b: Value) -> Result<Value> {
    let mut args: SmallVec<[Value; 6]> = SmallVec::new();
    args.push(a);
    args.push(b);
    call_site(env, ctx, s, args)
}

/// Performs the call described by `site` with the popped argument values.
pub fn call_site(
    env: &Env,
    ctx: &Arc<Frame>,
    s: &CallSite,
    mut vals: SmallVec<[Value; 6]>,
) -> Result<Value> {
    // Fast path: the overloads known at compile time are tried in order
    // on the evaluated positional values, as the general binder would try
    // them, while each is plain (see `Overload::is_plain`); the first that
    // binds runs. Only when nothing can intercept the call: no user
    // function of that name, no host that may handle a method call
    // (MuranoPL objects and extension methods), no yaql 0.2 rules. Anything else, including no
    // match (for the error), goes the general way.
    if let Some(set) = s.set.as_deref() {
        let legacy = env.options().legacy;
        if !legacy
            && s.named.is_empty()
            && (s.form == runtime::registry::Form::Function
                || env
                    .host()
                    .is_none_or(|h| vals.first().is_some_and(|r| !h.may_handle(r, &s.name))))
            && !(ctx.has_funcs && ctx.func(&s.name).is_some())
            && s.pos.iter().all(|k| *k == ArgKind::Val)
        {
            for ov in &set.overloads {
                if !ov.accepts_form(s.form) {
                    continue;
                }
                if !ov.is_plain() {
                    break;
                }
                if let Some(args) = ov.bind_plain(&mut vals, legacy) {
                    return (ov.f)(&Cx::new(env, ctx).for_overload(ov), args);
                }
            }
        }
    }
    let mut it = vals.into_iter();
    let mut conv = |k: ArgKind| -> ArgIn {
        match k {
            ArgKind::Skip => ArgIn::Skip,
            ArgKind::Val => ArgIn::Val(it.next().unwrap_or(Value::Null)),
            ArgKind::Thunk => match it.next() {
                Some(Value::Lambda(ref c)) => ArgIn::Thunk(c.clone()),
                Some(v) => ArgIn::Val(v),
                None => ArgIn::Skip,
            },
        }
    };
    let mut pos: SmallVec<[ArgIn; 6]> = s.pos.iter().map(|k| conv(*k)).collect();
    let mut named: SmallVec<[(Arc<str>, ArgIn); 2]> =
        s.named.iter().map(|(n, k)| (n.clone(), conv(*k))).collect();
    if s.form == runtime::registry::Form::Method && env.options().legacy {
        if let Some(ArgIn::Val(Value::Context(c))) = pos.first() {
            // yaql 0.2 `op_dot_context`: a method call on a context object
            // runs in that context, with its `$` as the receiver.
            let c = c.clone();
            pos[0] = ArgIn::Val(c.arg(1));
            let rebind = |a: &mut ArgIn| {
                if let ArgIn::Thunk(t) = a {
                    *a = ArgIn::Thunk(Arc::new(Closure {
                        code: t.code.clone(),
                        ctx: c.clone(),
                    }));
                }
            };
            pos.iter_mut().for_each(rebind);
            named.iter_mut().for_each(|(_, a)| rebind(a));
            let cx = Cx::new(env, &c);
            return env
                .registry()
                .call(&cx, &s.name, s.set.as_deref(), s.form, &pos, &named);
        }
    }
    if s.form == runtime::registry::Form::Method {
        if let (Some(host), Some(ArgIn::Val(recv))) = (env.host(), pos.first()) {
            let cx = Cx::new(env, ctx);
            if let Some(r) = host.call_method(&cx, recv, &s.name, &pos[1..], &named) {
                return r;
            }
            if matches!(recv, Value::Type(_)) {
                // A MuranoPL object without such a method: the reference
                // reports a method that does not match the receiver.
                let cx = Cx::new(env, ctx);
                return env
                    .registry()
                    .call(&cx, &s.name, s.set.as_deref(), s.form, &pos, &named)
                    .map_err(|e| {
                        if *e.error_kind() == ErrorKind::NoMethodRegisteredException {
                            runtime::registry::no_matching(&s.name, s.form)
                        } else {
                            e
                        }
                    });
            }
        }
    }
    if ctx.has_funcs {
        if let Some((f, home)) = ctx.func_home(&s.name) {
            return call_user(env, ctx, &f, &home, &pos, &named);
        }
    }
    let cx = Cx::new(env, ctx);
    let (ov, args) =
        env.registry()
            .resolve(&cx, &s.name, s.set.as_deref(), s.form, &pos, &named)?;
    // The callee holds the only reference to each argument it was given
    // (a query it may extend in place: see the library's `where`).
    drop((pos, named));
    (ov.f)(&cx.for_overload(ov), args)
}

fn call_user(
    env: &Env,
    ctx: &Arc<Frame>,
    f: &Value,
    home: &Arc<Frame>,
    pos: &[ArgIn],
    named: &[(Arc<str>, ArgIn)],
) -> Result<Value> {
    let cx = Cx::new(env, ctx);
    let mut args = Vec::with_capacity(pos.len());
    for a in pos {
        args.push(match a {
            ArgIn::Val(v) => Some(v.clone()),
            ArgIn::Thunk(c) => Some(c.call(env, &[])?),
            ArgIn::Skip => None,
        });
    }
    let mut kw = Vec::new();
    for (n, a) in named {
        kw.push((
            n.clone(),
            match a {
                ArgIn::Val(v) => v.clone(),
                ArgIn::Thunk(c) => c.call(env, &[])?,
                ArgIn::Skip => Value::Null,
            },
        ));
    }
    match f {
        // `f(, 1)`: the function fills what the call left out.
        Value::Lambda(c) if args.iter().any(Option::is_none) => {
            c.code.invoke_partial(cx.env, home, &args, &kw)
        }
        _ => {
            let args: Vec<Value> = args.into_iter().map(|a| a.unwrap_or(Value::Null)).collect();
            Frame::call_func(cx.env, f, home, &args, &kw)
        }
    }
}
