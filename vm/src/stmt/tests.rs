//! The interpreter's control-flow rules, against a host whose "programs"
//! are values: a string `$x` reads variable `x`, `!kind` fails with error
//! kind `kind`, anything else is itself.

use std::sync::Arc;

use runtime::{Error, ErrorKind, Location, Result, Value};

use super::ops::{Handler, HandlerKind, SOp, INVALID_RETHROW, NONE};
use super::{run, Clause, Code, ExprId, Host, Operand, Target, TargetRoot, Throw};

#[derive(Default)]
struct TestHost {
    vars: Vec<(Arc<str>, Value)>,
    /// Statements left before the budget runs out.
    budget: Option<usize>,
}

impl TestHost {
    fn var(&self, name: &str) -> Value {
        let v = self.vars.iter().rev().find(|(k, _)| &**k == name);
        v.map_or(Value::Null, |(_, v)| v.clone())
    }
}

impl Host for TestHost {
    type Program = Value;

    fn tick(&mut self) -> Result<()> {
        match &mut self.budget {
            Some(0) => Err(Error::new(
                ErrorKind::ExecutionLimitExceeded,
                "out of steps",
            )),
            Some(n) => {
                *n -= 1;
                Ok(())
            }
            None => Ok(()),
        }
    }

    fn eval(&mut self, code: &Code<Value>, o: &Operand) -> Result<Value> {
        let Operand::Expr(id) = o else {
            let Operand::Const(v) = o else { unreachable!() };
            return Ok(v.clone());
        };
        let p = code.program(*id);
        match p.as_str() {
            Some(s) if s.starts_with('$') => Ok(self.var(&s[1..])),
            Some(s) if s.starts_with('!') => {
                Err(Error::new(ErrorKind::from_name(s[1..].to_string()), "boom"))
            }
            _ => Ok(p.clone()),
        }
    }

    fn assign(&mut self, _: &Code<Value>, t: &Target, v: Value) -> Result<()> {
        let TargetRoot::Local(name) = &t.root else {
            unreachable!()
        };
        self.vars.push((name.clone(), v));
        Ok(())
    }

    fn bind(&mut self, name: &Arc<str>, v: Value) {
        self.vars.push((name.clone(), v));
    }

    fn parallel(&mut self, branches: &[Arc<Code<Value>>], _: usize) -> Result<()> {
        for b in branches {
            run(self, b)?;
        }
        Ok(())
    }

    fn catch(&mut self, e: &Error, clauses: &[Clause]) -> Result<Option<u32>> {
        let hit = clauses
            .iter()
            .find(|c| c.with.is_empty() || c.with.iter().any(|w| w == e.kind()));
        Ok(hit.map(|c| {
            if let Some(a) = &c.as_ {
                self.vars.push((a.clone(), Value::str(e.kind())));
            }
            c.target
        }))
    }

    fn throw(&mut self, code: &Code<Value>, t: &Throw) -> Error {
        match self.eval(code, &t.names) {
            Ok(v) => Error::new(
                ErrorKind::from_name(v.as_str().unwrap_or("?").to_string()),
                "thrown",
            ),
            Err(e) => e,
        }
    }

    fn invalid(&self, what: u32) -> Error {
        Error::new(
            ErrorKind::from_name("DslInvalidOperationError"),
            what.to_string(),
        )
    }
}

/// Code whose operand `i` is expression `ei` with program `programs[i]`,
/// and whose instruction `pc` is at line `pc + 1` of `t.yaml`.
fn code(ops: Vec<SOp>, programs: Vec<Value>) -> Code<Value> {
    let mut c = Code::new(programs.into());
    c.operands = (0..c.programs.len())
        .map(|i| Operand::Expr(ExprId::new(i)))
        .collect();
    c.pos = (0..ops.len())
        .map(|pc| Location {
            file: "t.yaml".into(),
            line: pc as u32 + 1,
            col: 3,
        })
        .collect();
    c.texts = (0..ops.len())
        .map(|pc| Arc::from(format!("s{pc}")))
        .collect();
    c.ops = ops;
    c
}

fn local(name: &str) -> Target {
    Target {
        root: TargetRoot::Local(name.into()),
        path: Vec::new(),
    }
}

fn catch_all(start: u32, end: u32, target: u32) -> Handler {
    let kind = HandlerKind::Catch(0);
    Handler {
        start,
        end,
        target,
        kind,
    }
}

#[test]
fn for_binds_each_item_and_jumps_out_when_done() {
    let list = Value::list(vec![Value::Int(1), Value::Int(2), Value::Int(3)]);
    let mut c = code(
        vec![
            SOp::IterInit { slot: 0, expr: 0 },
            SOp::IterNext {
                slot: 0,
                var: 0,
                done: 4,
            },
            SOp::Assign { target: 0, expr: 1 },
            SOp::Jump { to: 1 },
            SOp::Return { expr: 2 },
        ],
        vec![list, Value::str("$i"), Value::str("$last")],
    );
    c.names = vec!["i".into()];
    c.targets = vec![local("last")];
    c.nslots = 1;
    let mut h = TestHost::default();
    assert_eq!(run(&mut h, &c).unwrap(), Some(Value::Int(3)));
    let seen: Vec<_> = h
        .vars
        .iter()
        .filter(|(k, _)| &**k == "i")
        .map(|(_, v)| v.clone())
        .collect();
    assert_eq!(seen, vec![Value::Int(1), Value::Int(2), Value::Int(3)]);
}

#[test]
fn a_return_runs_the_finally_blocks_it_leaves_then_returns() {
    let mut c = code(
        vec![
            SOp::Return { expr: 0 },
            SOp::Assign { target: 0, expr: 1 },
            SOp::EndFinally { try_: 0 },
            SOp::Return { expr: 2 },
        ],
        vec![Value::Int(1), Value::Int(2), Value::Int(9)],
    );
    c.targets = vec![local("cleaned")];
    c.ntries = 1;
    c.handlers = vec![Handler {
        start: 0,
        end: 1,
        target: 1,
        kind: HandlerKind::Finally(0),
    }];
    let mut h = TestHost::default();
    assert_eq!(run(&mut h, &c).unwrap(), Some(Value::Int(1)));
    assert_eq!(h.var("cleaned"), Value::Int(2));
}

/// `Try: [!ValueError] Catch: With: <with> As: e -> Return $e`.
fn try_catch(with: &str) -> Code<Value> {
    let mut c = code(
        vec![
            SOp::Eval { expr: 0 },
            SOp::Jump { to: 5 },
            SOp::Catch {
                try_: 0,
                clauses: 0,
            },
            SOp::EndCatch { try_: 0 },
            SOp::Return { expr: 1 },
        ],
        vec![Value::str("!ValueError"), Value::str("$e")],
    );
    c.clauses = vec![vec![Clause {
        with: vec![with.to_string()],
        as_: Some("e".into()),
        target: 3,
    }]];
    c.ntries = 1;
    c.handlers = vec![catch_all(0, 1, 2)];
    c
}

#[test]
fn the_clause_the_host_picks_catches_the_error() {
    let c = try_catch("ValueError");
    let r = run(&mut TestHost::default(), &c).unwrap();
    assert_eq!(r, Some(Value::str("ValueError")));
}

#[test]
fn an_error_no_clause_catches_leaves_with_its_statement_position() {
    let c = try_catch("KeyError");
    let e = run(&mut TestHost::default(), &c).unwrap_err();
    assert_eq!(e.kind(), "ValueError");
    assert_eq!(
        e.location().map(ToString::to_string).as_deref(),
        Some("t.yaml:1:3")
    );
    // Left statement 0, then (uncaught at the dispatch) statement 2.
    assert_eq!(e.trace(), vec!["t.yaml:1:3", "t.yaml:3:3"]);
}

#[test]
fn running_out_of_budget_is_not_caught() {
    let mut c = try_catch("");
    c.clauses[0][0].with.clear();
    let mut h = TestHost {
        budget: Some(0),
        ..TestHost::default()
    };
    let e = run(&mut h, &c).unwrap_err();
    assert_eq!(*e.error_kind(), ErrorKind::ExecutionLimitExceeded);
    assert_eq!(e.location().map(|l| l.line), Some(1));
}

#[test]
fn rethrow_with_nothing_caught_is_the_hosts_invalid_operation() {
    let c = code(vec![SOp::Rethrow { try_: 0 }], vec![]);
    let mut c = c;
    c.ntries = 1;
    let e = run(&mut TestHost::default(), &c).unwrap_err();
    assert_eq!(e.kind(), "DslInvalidOperationError");
    assert_eq!(e.message(), INVALID_RETHROW.to_string());
}

#[test]
fn parallel_hands_its_branches_and_limit_to_the_host() {
    let mut branch = code(
        vec![SOp::Assign { target: 0, expr: 0 }],
        vec![Value::Int(5)],
    );
    branch.targets = vec![local("x")];
    let mut c = code(
        vec![
            SOp::Parallel {
                first: 0,
                count: 1,
                limit: NONE,
            },
            SOp::Return { expr: 0 },
        ],
        vec![Value::str("$x")],
    );
    c.subs = vec![Arc::new(branch)];
    assert_eq!(
        run(&mut TestHost::default(), &c).unwrap(),
        Some(Value::Int(5))
    );
}

#[test]
fn running_off_the_end_returns_nothing() {
    let c = code(vec![SOp::Eval { expr: 0 }], vec![Value::Int(1)]);
    assert_eq!(run(&mut TestHost::default(), &c).unwrap(), None);
}
