//! Watching an execution run: a [`Tracer`] installed on an executor
//! ([`crate::Executor::set_tracer`]) hears of each statement as it starts
//! and of each method as it is entered and left, with the green thread
//! and the virtual clock. Without one an execution pays a test of a
//! field per statement and per call.

use std::sync::Arc;

use runtime::ctx::Frame;
use runtime::{Env, Error, Location, Value};

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceKind {
    /// A statement starts.
    Statement,
    /// A method is entered, with its arguments.
    Enter,
    /// A method returns, with its result.
    Exit,
    /// An exception leaves a method.
    Raise,
}

impl TraceKind {
    /// The event's name in traces: `statement`, `enter`, `exit`, `raise`.
    pub fn name(self) -> &'static str {
        match self {
            TraceKind::Statement => "statement",
            TraceKind::Enter => "enter",
            TraceKind::Exit => "exit",
            TraceKind::Raise => "raise",
        }
    }
}

/// One event of a trace.
pub struct TraceEvent<'a> {
    /// What happened.
    pub kind: TraceKind,
    /// Where: the statement, or the method's declaration.
    pub at: Option<&'a Location>,
    /// The green thread (0: the main one).
    pub thread: u64,
    /// The virtual clock, in seconds.
    pub clock: f64,
    /// The class and method running.
    pub class: &'a str,
    /// The method.
    pub method: &'a str,
    /// A statement's source text.
    pub text: Option<&'a str>,
    /// A method's arguments (enter) or result (exit).
    pub value: Option<&'a Value>,
    /// The exception (raise).
    pub error: Option<&'a Error>,
    /// A statement's frame (`$this`, the method's variables) and the
    /// environment to evaluate in, when the tracer wants them
    /// ([`Tracer::wants_frame`]): what a breakpoint inspects.
    pub frame: Option<(&'a Arc<Frame>, &'a Env)>,
}

/// Hears the events of an execution.
pub trait Tracer: Send + Sync {
    /// One event.
    fn event(&self, e: &TraceEvent<'_>);
    /// True when statement events should carry their frame (which costs
    /// building it).
    fn wants_frame(&self) -> bool {
        false
    }
}
