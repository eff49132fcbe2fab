//! Contract chains to Cranelift IR.
//!
//! The function built here has the signature `(items, n) -> index`: it
//! walks `n` [`Scalar`](super::Scalar)s from `items` and returns the index
//! of the first one it cannot show to pass, or `n`. Every step and every
//! operation of a predicate starts with a guard on the value's tag; a tag
//! it has no code for, or a failed check, leaves the loop at that index
//! (the "deopt" block) and the interpreter takes that value over.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    types, AbiParam, Block, Endianness, Function, InstBuilder, MemFlagsData, Signature,
    Value as Ssa,
};
use cranelift_codegen::isa::CallConv;
use cranelift_codegen::isa::TargetFrontendConfig;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};

use super::{tag, Step, Unsupported};
use crate::ir::{BinOp, Expr, Node, NodeId};
use runtime::Value;

/// The longest string constant compared inline (`$ = 'x'`, `in`).
const MAX_STR_CONST: usize = 64;

/// The largest integer constant a float compares with exactly.
const EXACT_IN_F64: i64 = 1 << 53;

/// The loop's signature in calling convention `cc`.
pub(super) fn signature(cc: CallConv) -> Signature {
    let mut s = Signature::new(cc);
    s.params.push(AbiParam::new(types::I64));
    s.params.push(AbiParam::new(types::I64));
    s.returns.push(AbiParam::new(types::I64));
    s
}

/// Builds the loop over `steps` into `func` (whose signature is
/// [`signature`]); true when the code reads strings' bytes or lengths (else
/// the caller may leave [`Scalar`](super::Scalar)'s `ptr` and `len` unset).
pub(super) fn build(
    func: &mut Function,
    fctx: &mut FunctionBuilderContext,
    target: TargetFrontendConfig,
    steps: &[Step<'_>],
) -> Result<bool, Unsupported> {
    let mut b = FunctionBuilder::new(func, fctx);
    let entry = b.create_block();
    let head = b.create_block();
    let body = b.create_block();
    let deopt = b.create_block();
    let done = b.create_block();
    let i = b.declare_var(types::I64);

    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let (items, n) = (b.block_params(entry)[0], b.block_params(entry)[1]);
    let zero = b.ins().iconst(types::I64, 0);
    b.def_var(i, zero);
    b.ins().jump(head, &[]);

    b.switch_to_block(head);
    let iv = b.use_var(i);
    let end = b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, iv, n);
    b.ins().brif(end, done, &[], body, &[]);

    b.switch_to_block(body);
    let iv = b.use_var(i);
    let offset = b
        .ins()
        .imul_imm_s(iv, std::mem::size_of::<super::Scalar>() as i64);
    let at = b.ins().iadd(items, offset);
    let item = load(&mut b, at);
    let mut g = Gen {
        b,
        deopt,
        item,
        reads_strings: false,
    };
    // Only scalars run here: a container or an object (whose class could
    // intercept the contract's methods) goes to the interpreter.
    let scalar =
        g.b.ins()
            .icmp_imm_s(IntCC::UnsignedLessThan, g.item.tag, tag::OTHER as i64);
    g.continue_if(scalar);
    for s in steps {
        g.step(s)?;
    }
    let iv = g.b.use_var(i);
    let next = g.b.ins().iadd_imm_s(iv, 1);
    g.b.def_var(i, next);
    g.b.ins().jump(head, &[]);

    g.b.switch_to_block(deopt);
    let iv = g.b.use_var(i);
    g.b.ins().return_(&[iv]);

    g.b.switch_to_block(done);
    g.b.ins().return_(&[n]);
    g.b.seal_all_blocks();
    let reads_strings = g.reads_strings;
    g.b.finalize(target);
    Ok(reads_strings)
}

/// Loads the fields of the scalar at `at`.
fn load(b: &mut FunctionBuilder<'_>, at: Ssa) -> Item {
    let flags = MemFlagsData::new()
        .with_notrap()
        .with_readonly()
        .with_aligned();
    let mut field = |k: i32| b.ins().load(types::I64, flags, at, 8 * k);
    Item {
        tag: field(0),
        bits: field(1),
        ptr: field(2),
        len: field(3),
    }
}

/// The fields of the current scalar.
#[derive(Clone, Copy)]
struct Item {
    tag: Ssa,
    bits: Ssa,
    ptr: Ssa,
    len: Ssa,
}

/// What a tag's arm of a dispatch computes (see [`Gen::by_tag`]).
#[derive(Clone, Copy)]
enum Arm<'a> {
    /// A known answer.
    Const(bool),
    /// `bits <cc> c` as integers.
    Int(IntCC, i64),
    /// `bits <cc> c` as doubles.
    Float(FloatCC, f64),
    /// The string equals these bytes.
    StrEq(&'a [u8]),
    /// Truthiness: bits or length nonzero, or a nonzero double.
    BitsNonZero,
    LenNonZero,
    FloatNonZero,
}

/// Either side of a comparison.
#[derive(Clone, Copy)]
enum Operand<'a> {
    Dollar,
    Const(&'a Value),
}

struct Gen<'f> {
    b: FunctionBuilder<'f>,
    deopt: Block,
    item: Item,
    /// Some code reads a string's bytes or length.
    reads_strings: bool,
}

impl Gen<'_> {
    /// Goes on in a new block when `c` holds, else to the deopt block.
    fn continue_if(&mut self, c: Ssa) {
        let next = self.b.create_block();
        self.b.ins().brif(c, next, &[], self.deopt, &[]);
        self.b.switch_to_block(next);
    }

    /// True when the tag is one of `tags`.
    fn tag_in(&mut self, tags: &[u64]) -> Ssa {
        let mut acc = self.b.ins().iconst(types::I8, 0);
        for &t in tags {
            let c = self
                .b
                .ins()
                .icmp_imm_s(IntCC::Equal, self.item.tag, t as i64);
            acc = self.b.ins().bor(acc, c);
        }
        acc
    }

    fn step(&mut self, s: &Step<'_>) -> Result<(), Unsupported> {
        match s {
            Step::NotNull => {
                let ok = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::NotEqual, self.item.tag, tag::NULL as i64);
                self.continue_if(ok);
            }
            // The coercions keep these values as they are; any other value
            // would change (or fail): the interpreter does that.
            Step::Int => {
                let ok = self.tag_in(&[tag::NULL, tag::INT, tag::BIGINT]);
                self.continue_if(ok);
            }
            Step::String => {
                let ok = self.tag_in(&[tag::NULL, tag::STR]);
                self.continue_if(ok);
            }
            Step::Bool => {
                let ok = self.tag_in(&[tag::NULL, tag::BOOL]);
                self.continue_if(ok);
            }
            // `check()` lets null through without asking its predicate.
            Step::Check(e) => {
                let after = self.b.create_block();
                let test = self.b.create_block();
                let null = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::Equal, self.item.tag, tag::NULL as i64);
                self.b.ins().brif(null, after, &[], test, &[]);
                self.b.switch_to_block(test);
                let ok = self.cond(e, e.root)?;
                self.b.ins().brif(ok, after, &[], self.deopt, &[]);
                self.b.switch_to_block(after);
            }
        }
        Ok(())
    }

    /// The truthiness of node `id` as an `i8` 0 or 1.
    fn cond(&mut self, e: &Expr, id: NodeId) -> Result<Ssa, Unsupported> {
        match &e[id] {
            Node::Const(v) if is_scalar(v) => Ok(self.b.ins().iconst(types::I8, v.truthy() as i64)),
            Node::Arg(1) => Ok(self.by_tag(&[
                (tag::NULL, Arm::Const(false)),
                (tag::BOOL, Arm::BitsNonZero),
                (tag::INT, Arm::BitsNonZero),
                (tag::FLOAT, Arm::FloatNonZero),
                (tag::STR, Arm::LenNonZero),
                (tag::BIGINT, Arm::Const(true)),
            ])),
            Node::Not(x) => {
                let r = self.cond(e, *x)?;
                Ok(self.b.ins().icmp_imm_s(IntCC::Equal, r, 0))
            }
            Node::And(l, r) => self.short_circuit(e, *l, *r, true),
            Node::Or(l, r) => self.short_circuit(e, *l, *r, false),
            Node::Bin(BinOp::In, l, r, _, _) => self.member(e, *l, *r),
            Node::Bin(op, l, r, _, _) => {
                let (l, r) = (operand(e, *l)?, operand(e, *r)?);
                match (l, r) {
                    (Operand::Dollar, Operand::Const(c)) => self.compare(*op, c),
                    (Operand::Const(c), Operand::Dollar) => self.compare(mirror(*op)?, c),
                    _ => Err(unsupported("a comparison not between `$` and a constant")),
                }
            }
            Node::Call(c) => {
                let args = e.list(c.pos);
                let by_arg = args.len() == 1 && c.named.is_empty() && c.set.is_some();
                let tags: &[u64] = match &*c.name {
                    "isInteger" => &[tag::INT, tag::BIGINT],
                    "isNumber" => &[tag::INT, tag::BIGINT, tag::FLOAT],
                    "isString" => &[tag::STR],
                    "isBoolean" => &[tag::BOOL],
                    other => return Err(unsupported(&format!("function {other}()"))),
                };
                if !by_arg || !matches!(e[args[0]], Node::Arg(1)) {
                    return Err(unsupported(&format!("{}() of anything but `$`", c.name)));
                }
                Ok(self.tag_in(tags))
            }
            _ => Err(unsupported("this kind of expression")),
        }
    }

    /// `l and r` (`and_ = true`) or `l or r`, deciding on `l` first.
    fn short_circuit(
        &mut self,
        e: &Expr,
        l: NodeId,
        r: NodeId,
        and_: bool,
    ) -> Result<Ssa, Unsupported> {
        let lv = self.cond(e, l)?;
        let right = self.b.create_block();
        let join = self.b.create_block();
        let res = self.b.append_block_param(join, types::I8);
        if and_ {
            self.b.ins().brif(lv, right, &[], join, &[lv.into()]);
        } else {
            self.b.ins().brif(lv, join, &[lv.into()], right, &[]);
        }
        self.b.switch_to_block(right);
        let rv = self.cond(e, r)?;
        self.b.ins().jump(join, &[rv.into()]);
        self.b.switch_to_block(join);
        Ok(res)
    }

    /// `$ in [c1, c2, ...]` (a list literal or `list()` of constants):
    /// `$ = c1 or $ = c2 or ...`.
    fn member(&mut self, e: &Expr, l: NodeId, r: NodeId) -> Result<Ssa, Unsupported> {
        if !matches!(operand(e, l)?, Operand::Dollar) {
            return Err(unsupported("`in` with anything but `$` on the left"));
        }
        let items = match &e[r] {
            Node::List(items) => e.list(*items),
            Node::Call(c) if &*c.name == "list" && c.named.is_empty() && c.set.is_some() => {
                e.list(c.pos)
            }
            _ => return Err(unsupported("`in` over anything but a list of constants")),
        };
        let consts = items
            .iter()
            .map(|&i| match operand(e, i)? {
                Operand::Const(c) => Ok(c),
                Operand::Dollar => Err(unsupported("`$` inside an `in` list")),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let join = self.b.create_block();
        let res = self.b.append_block_param(join, types::I8);
        for c in consts {
            let eq = self.compare(BinOp::Eq, c)?;
            let next = self.b.create_block();
            self.b.ins().brif(eq, join, &[eq.into()], next, &[]);
            self.b.switch_to_block(next);
        }
        let no = self.b.ins().iconst(types::I8, 0);
        self.b.ins().jump(join, &[no.into()]);
        self.b.switch_to_block(join);
        Ok(res)
    }

    /// `$ <op> c` with Python's rules for the value kinds it has arms for.
    fn compare(&mut self, op: BinOp, c: &Value) -> Result<Ssa, Unsupported> {
        let arms = match op {
            BinOp::Eq => eq_arms(c)?,
            BinOp::Ne => {
                let eq = self.compare(BinOp::Eq, c)?;
                return Ok(self.b.ins().icmp_imm_s(IntCC::Equal, eq, 0));
            }
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => order_arms(op, c)?,
            _ => return Err(unsupported("arithmetic")),
        };
        Ok(self.by_tag(&arms))
    }

    /// Dispatches on the tag: each listed tag computes its arm; any other
    /// tag deopts.
    fn by_tag(&mut self, arms: &[(u64, Arm<'_>)]) -> Ssa {
        let join = self.b.create_block();
        let res = self.b.append_block_param(join, types::I8);
        for (t, arm) in arms {
            let here = self.b.create_block();
            let next = self.b.create_block();
            let is = self
                .b
                .ins()
                .icmp_imm_s(IntCC::Equal, self.item.tag, *t as i64);
            self.b.ins().brif(is, here, &[], next, &[]);
            self.b.switch_to_block(here);
            let r = self.arm(*arm);
            self.b.ins().jump(join, &[r.into()]);
            self.b.switch_to_block(next);
        }
        self.b.ins().jump(self.deopt, &[]);
        self.b.switch_to_block(join);
        res
    }

    fn arm(&mut self, arm: Arm<'_>) -> Ssa {
        let Item { bits, len, .. } = self.item;
        match arm {
            Arm::Const(k) => self.b.ins().iconst(types::I8, k as i64),
            Arm::Int(cc, c) => self.b.ins().icmp_imm_s(cc, bits, c),
            Arm::Float(cc, c) => {
                let f = self.b.ins().bitcast(types::F64, MemFlagsData::new(), bits);
                let k = self.b.ins().f64const(c);
                self.b.ins().fcmp(cc, f, k)
            }
            Arm::BitsNonZero => self.b.ins().icmp_imm_s(IntCC::NotEqual, bits, 0),
            Arm::LenNonZero => {
                self.reads_strings = true;
                self.b.ins().icmp_imm_s(IntCC::NotEqual, len, 0)
            }
            // Python: NaN is truthy (`NaN != 0`), hence "unordered or not
            // equal".
            Arm::FloatNonZero => {
                let f = self.b.ins().bitcast(types::F64, MemFlagsData::new(), bits);
                let z = self.b.ins().f64const(0.0);
                self.b.ins().fcmp(FloatCC::NotEqual, f, z)
            }
            Arm::StrEq(s) => {
                self.reads_strings = true;
                self.str_eq(s)
            }
        }
    }

    /// The current string equals `s`: the lengths, then the bytes, eight
    /// at a time, read inside the string only.
    fn str_eq(&mut self, s: &[u8]) -> Ssa {
        let Item { ptr, len, .. } = self.item;
        let same_len = self.b.ins().icmp_imm_s(IntCC::Equal, len, s.len() as i64);
        if s.is_empty() {
            return same_len;
        }
        let bytes = self.b.create_block();
        let join = self.b.create_block();
        let res = self.b.append_block_param(join, types::I8);
        self.b
            .ins()
            .brif(same_len, bytes, &[], join, &[same_len.into()]);
        self.b.switch_to_block(bytes);
        let flags = MemFlagsData::new()
            .with_notrap()
            .with_readonly()
            .with_endianness(Endianness::Little);
        let mut acc = self.b.ins().iconst(types::I8, 1);
        let mut off = 0;
        while off < s.len() {
            let width = [8, 4, 2, 1]
                .into_iter()
                .find(|w| off + w <= s.len())
                .unwrap_or(1);
            let ty = match width {
                8 => types::I64,
                4 => types::I32,
                2 => types::I16,
                _ => types::I8,
            };
            let mut chunk = [0u8; 8];
            chunk[..width].copy_from_slice(&s[off..off + width]);
            let want = u64::from_le_bytes(chunk) as i64;
            let got = self.b.ins().load(ty, flags, ptr, off as i32);
            let c = self.b.ins().icmp_imm_s(IntCC::Equal, got, want);
            acc = self.b.ins().band(acc, c);
            off += width;
        }
        self.b.ins().jump(join, &[acc.into()]);
        self.b.switch_to_block(join);
        res
    }
}

fn unsupported(what: &str) -> Unsupported {
    Unsupported(format!("the JIT does not compile {what}"))
}

fn is_scalar(v: &Value) -> bool {
    matches!(
        v,
        Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_)
    )
}

fn operand(e: &Expr, id: NodeId) -> Result<Operand<'_>, Unsupported> {
    match &e[id] {
        Node::Arg(1) => Ok(Operand::Dollar),
        Node::Const(v) if is_scalar(v) => match v {
            Value::Str(s) if s.len() > MAX_STR_CONST => Err(unsupported("a long string constant")),
            _ => Ok(Operand::Const(v)),
        },
        _ => Err(unsupported("an operand other than `$` or a constant")),
    }
}

/// `c <op> $` as `$ <mirror> c`.
fn mirror(op: BinOp) -> Result<BinOp, Unsupported> {
    Ok(match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::Le => BinOp::Ge,
        BinOp::Gt => BinOp::Lt,
        BinOp::Ge => BinOp::Le,
        BinOp::Eq | BinOp::Ne => op,
        _ => return Err(unsupported("arithmetic")),
    })
}

/// `$ = c` (Python's `==`) for each kind of `$`: a different scalar kind is
/// unequal, except where Python mixes kinds (`True == 1`, `1 == 1.0` for
/// big values), which deopts.
fn eq_arms(c: &Value) -> Result<Vec<(u64, Arm<'_>)>, Unsupported> {
    let unequal = |tags: &[u64]| {
        tags.iter()
            .map(|&t| (t, Arm::Const(false)))
            .collect::<Vec<_>>()
    };
    Ok(match c {
        Value::Int(k) => {
            let mut arms = vec![(tag::INT, Arm::Int(IntCC::Equal, *k))];
            if k.abs() <= EXACT_IN_F64 {
                arms.push((tag::FLOAT, Arm::Float(FloatCC::Equal, *k as f64)));
            }
            arms.extend(unequal(&[tag::NULL, tag::STR, tag::BIGINT]));
            arms
        }
        Value::Float(k) => {
            let mut arms = vec![(tag::FLOAT, Arm::Float(FloatCC::Equal, *k))];
            arms.extend(unequal(&[tag::NULL, tag::STR]));
            arms
        }
        Value::Str(s) => {
            let mut arms = vec![(tag::STR, Arm::StrEq(s.as_bytes()))];
            arms.extend(unequal(&[
                tag::NULL,
                tag::BOOL,
                tag::INT,
                tag::FLOAT,
                tag::BIGINT,
            ]));
            arms
        }
        Value::Bool(k) => {
            let mut arms = vec![(tag::BOOL, Arm::Int(IntCC::Equal, *k as i64))];
            arms.extend(unequal(&[tag::NULL, tag::STR]));
            arms
        }
        Value::Null => {
            let mut arms = vec![(tag::NULL, Arm::Const(true))];
            arms.extend(unequal(&[
                tag::BOOL,
                tag::INT,
                tag::FLOAT,
                tag::STR,
                tag::BIGINT,
            ]));
            arms
        }
        _ => return Err(unsupported("a comparison with a container")),
    })
}

/// `$ < c` and the like for numbers; any other kind of `$` deopts (the
/// interpreter raises or compares as the reference does).
fn order_arms(op: BinOp, c: &Value) -> Result<Vec<(u64, Arm<'_>)>, Unsupported> {
    let (icc, fcc) = match op {
        BinOp::Lt => (IntCC::SignedLessThan, FloatCC::LessThan),
        BinOp::Le => (IntCC::SignedLessThanOrEqual, FloatCC::LessThanOrEqual),
        BinOp::Gt => (IntCC::SignedGreaterThan, FloatCC::GreaterThan),
        _ => (IntCC::SignedGreaterThanOrEqual, FloatCC::GreaterThanOrEqual),
    };
    Ok(match c {
        Value::Int(k) => {
            let mut arms = vec![(tag::INT, Arm::Int(icc, *k))];
            if k.abs() <= EXACT_IN_F64 {
                arms.push((tag::FLOAT, Arm::Float(fcc, *k as f64)));
            }
            arms
        }
        Value::Float(k) => vec![(tag::FLOAT, Arm::Float(fcc, *k))],
        _ => return Err(unsupported("an ordering of anything but numbers")),
    })
}
