//! YAQL contexts: a chain of frames holding positional lambda arguments
//! (`$1`, `$2`, ... with `$` = `$1`), named variables and user functions.

use std::any::Any;
use std::sync::Arc;

use smallvec::SmallVec;

use crate::value::Value;

/// One frame of a context chain.
#[derive(Default)]
pub struct Frame {
    /// Positional arguments: `args[0]` is `$1` (and `$`).
    pub args: SmallVec<[Value; 2]>,
    /// Named variables (`$name`), newest last.
    pub vars: SmallVec<[(Arc<str>, Value); 1]>,
    /// Functions defined with `def` in this frame.
    pub funcs: SmallVec<[(Arc<str>, Value); 0]>,
    /// True when this frame or an ancestor defines functions.
    pub has_funcs: bool,
    /// The enclosing frame.
    pub parent: Option<Arc<Frame>>,
    /// Typed data the host attaches to this frame, invisible to YAQL code
    /// (MuranoPL: the class whose code runs, the object a contract checks
    /// for); see [`Frame::scopes`].
    pub scope: Option<Scope>,
}

/// Host data attached to a frame.
pub type Scope = Arc<dyn Any + Send + Sync>;

impl Frame {
    /// The root frame with `$` bound to `data`.
    pub fn root(data: Value) -> Arc<Frame> {
        let mut f = Frame::default();
        f.args.push(data);
        Arc::new(f)
    }
    /// A child frame of `parent` with positional arguments.
    pub fn child(parent: &Arc<Frame>, args: &[Value]) -> Frame {
        Frame {
            args: args.iter().cloned().collect(),
            vars: SmallVec::new(),
            funcs: SmallVec::new(),
            has_funcs: parent.has_funcs,
            parent: Some(parent.clone()),
            scope: None,
        }
    }
    /// The host data of this frame and its ancestors, nearest first.
    pub fn scopes(&self) -> impl Iterator<Item = &Scope> {
        let mut f: Option<&Frame> = Some(self);
        std::iter::from_fn(move || {
            while let Some(frame) = f {
                f = frame.parent.as_deref();
                if let Some(s) = &frame.scope {
                    return Some(s);
                }
            }
            None
        })
    }
    /// Looks up `$n` (1-based).
    pub fn arg(self: &Arc<Frame>, n: usize) -> Value {
        let mut f: &Frame = self;
        loop {
            if let Some(v) = f.args.get(n - 1) {
                return v.clone();
            }
            // a named variable called "1" (let(1 => ...) is impossible, but
            // `let` with positional args stores them as args too).
            match &f.parent {
                Some(p) => f = p,
                None => return Value::Null,
            }
        }
    }
    /// Looks up `$name`; unknown names are null, as in the reference.
    pub fn var(self: &Arc<Frame>, name: &str) -> Value {
        let mut f: &Frame = self;
        loop {
            if let Some((_, v)) = f.vars.iter().rev().find(|(k, _)| &**k == name) {
                return v.clone();
            }
            match &f.parent {
                Some(p) => f = p,
                None => return Value::Null,
            }
        }
    }
    /// Looks up a user function and the frame that defines it.
    pub fn func_home(self: &Arc<Frame>, name: &str) -> Option<(Value, Arc<Frame>)> {
        if !self.has_funcs {
            return None;
        }
        let mut f: &Arc<Frame> = self;
        loop {
            if let Some((_, v)) = f.funcs.iter().rev().find(|(k, _)| &**k == name) {
                return Some((v.clone(), f.clone()));
            }
            f = f.parent.as_ref()?;
        }
    }
    /// Calls a user function found in `home` (see [`Frame::func_home`]).
    /// Its body runs in the frame that defines it, as yaql's `def`
    /// registers the function into the context its lambda then runs in:
    /// the body sees itself (recursion) and the functions defined beside
    /// it. The frame is a child of the lambda's own context, so the body
    /// sees everything that context does.
    pub fn call_func(
        env: &crate::Env,
        f: &Value,
        home: &Arc<Frame>,
        args: &[Value],
        kwargs: &[(Arc<str>, Value)],
    ) -> crate::Result<Value> {
        match f {
            Value::Lambda(c) => c.code.invoke(env, home, args, kwargs),
            other => Ok(other.clone()),
        }
    }
    /// Looks up a user function defined with `def`.
    pub fn func(self: &Arc<Frame>, name: &str) -> Option<Value> {
        if !self.has_funcs {
            return None;
        }
        let mut f: &Frame = self;
        loop {
            if let Some((_, v)) = f.funcs.iter().rev().find(|(k, _)| &**k == name) {
                return Some(v.clone());
            }
            match &f.parent {
                Some(p) => f = p,
                None => return None,
            }
        }
    }
}
