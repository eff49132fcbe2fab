//! Contract chains to Cranelift IR.
//!
//! The function built here has the signature `(items, n) -> index`: it
//! walks `n` [`Scalar`](super::Scalar)s from `items` and returns the index
//! of the first one it cannot show to pass, or `n`. Every step and every
//! operation of a predicate starts with a guard on the value's tag; a tag
//! it has no code for, or a failed check, leaves the loop at that index
//! (the "deopt" block) and the interpreter takes that value over.
//!
//! A predicate compiled alone ([`build_predicate`]) is a function
//! `(item, keys, field) -> 0 | 1 | 2`: false, true, or "ask the
//! interpreter". It may read fields of `$` (`$.x`) through the `field`
//! helper and do integer arithmetic, which deopts on overflow.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    types, AbiParam, Block, Endianness, Function, InstBuilder, MemFlagsData, SigRef, Signature,
    StackSlotData, StackSlotKind, Value as Ssa,
};
use cranelift_codegen::isa::CallConv;
use cranelift_codegen::isa::TargetFrontendConfig;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};

use super::abi::{tag, Step, Unsupported};
use crate::ir::{BinOp, Expr, Node, NodeId};
use crate::murano::ir::LinkKind;
use runtime::registry::Form;
use runtime::Value;
use std::sync::Arc;

/// The library's type tests and the tags each is true for.
pub(super) const TYPE_TESTS: [(&str, &[u64]); 6] = [
    ("isInteger", &[tag::INT, tag::BIGINT]),
    ("isNumber", &[tag::INT, tag::BIGINT, tag::FLOAT]),
    ("isString", &[tag::STR]),
    ("isBoolean", &[tag::BOOL]),
    ("isList", &[tag::LIST]),
    ("isDict", &[tag::DICT]),
];

/// The groups of the YAQL library's functions (see `stdlib::registry`):
/// a call compiles only when every overload it could pick is one of them,
/// not one a host or the engine added.
const LIBRARY: [&str; 7] = [
    "system",
    "common",
    "boolean",
    "strings",
    "math",
    "collections",
    "queries",
];

/// How many tag dispatches a function may make. Compile time grows faster
/// than the code: a hostile `$ in [0, 1, ..., 20000]` would take seconds
/// to compile and milliseconds to interpret, so a bigger function stays
/// interpreted.
const BUDGET: u32 = 256;

/// The longest string constant compared inline (`$ = 'x'`, `in`).
const MAX_STR_CONST: usize = 64;

/// The largest integer constant a float compares with exactly.
const EXACT_IN_F64: i64 = 1 << 53;

/// The loop's signature in calling convention `cc`: `(items, n, call,
/// class helper) -> index`.
pub(super) fn signature(cc: CallConv) -> Signature {
    let mut s = Signature::new(cc);
    for _ in 0..4 {
        s.params.push(AbiParam::new(types::I64));
    }
    s.returns.push(AbiParam::new(types::I64));
    s
}

/// The signature of the `class()` helper: `(call, step, i, value) ->
/// verdict`.
fn class_signature(cc: CallConv) -> Signature {
    let mut s = Signature::new(cc);
    for _ in 0..4 {
        s.params.push(AbiParam::new(types::I64));
    }
    s.returns.push(AbiParam::new(types::I8));
    s
}

/// How a chain's `class()` links call their helper: the call's context,
/// the helper's address and signature, and the item's index.
#[derive(Clone, Copy)]
struct Classes {
    call: Ssa,
    helper: Ssa,
    sig: SigRef,
    index: Ssa,
}

/// Builds the loop over `steps` into `func` (whose signature is
/// [`signature`]); true when the code reads strings' bytes or lengths (else
/// the caller may leave [`Scalar`](super::Scalar)'s `ptr` and `len` unset),
/// and what the code points to.
pub(super) fn build(
    func: &mut Function,
    fctx: &mut FunctionBuilderContext,
    target: TargetFrontendConfig,
    steps: &[Step<'_>],
) -> Result<(bool, super::Kept), Unsupported> {
    let func_cc = func.signature.call_conv;
    let mut b = FunctionBuilder::new(func, fctx);
    let entry = b.create_block();
    let head = b.create_block();
    let body = b.create_block();
    let deopt = b.create_block();
    let done = b.create_block();
    let i = b.declare_var(types::I64);

    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let params = b.block_params(entry).to_vec();
    let (items, n) = (params[0], params[1]);
    let class_sig = b.import_signature(class_signature(func_cc));
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
        fields: None,
        classes: Some(Classes {
            call: params[2],
            helper: params[3],
            sig: class_sig,
            index: iv,
        }),
        reads_strings: false,
        budget: BUDGET,
        kept: Vec::new(),
        reads: Vec::new(),
    };
    // Only scalars run here: a container or an object (whose class could
    // intercept the contract's methods) goes to the interpreter.
    let scalar =
        g.b.ins()
            .icmp_imm_s(IntCC::UnsignedLessThan, g.item.tag, tag::CONTAINER as i64);
    g.continue_if(scalar);
    for (k, s) in steps.iter().enumerate() {
        g.step(k, s)?;
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
    g.within_budget()?;
    let reads_strings = g.reads_strings;
    let kept = std::mem::take(&mut g.kept);
    g.b.finalize(target);
    Ok((reads_strings, kept))
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
        val: field(4),
    }
}

/// The fields of a scalar (see [`super::Scalar`]).
#[derive(Clone, Copy)]
struct Item {
    tag: Ssa,
    bits: Ssa,
    ptr: Ssa,
    len: Ssa,
    val: Ssa,
}

/// The signature of an expression: `(item, keys, field, out, element,
/// vars, probe) -> status`.
pub(super) fn expr_signature(cc: CallConv) -> Signature {
    let mut s = Signature::new(cc);
    for _ in 0..7 {
        s.params.push(AbiParam::new(types::I64));
    }
    s.returns.push(AbiParam::new(types::I64));
    s
}

/// The signature of the `field` helper: `(probe, value, key, kind, out)
/// -> found`.
fn field_signature(cc: CallConv) -> Signature {
    let mut s = Signature::new(cc);
    for _ in 0..5 {
        s.params.push(AbiParam::new(types::I64));
    }
    s.returns.push(AbiParam::new(types::I8));
    s
}

/// The signature of the `element` helper: `(container, index, out, kind)
/// -> found`.
fn element_signature(cc: CallConv) -> Signature {
    let mut s = Signature::new(cc);
    for _ in 0..4 {
        s.params.push(AbiParam::new(types::I64));
    }
    s.returns.push(AbiParam::new(types::I8));
    s
}

/// What an expression function computes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Output {
    /// A condition: returns 0 or 1 (2: deopt).
    Condition,
    /// A number: written to `out` as an int or float scalar; returns 0
    /// (2: deopt).
    Number,
}

/// The names an expression reads: fields (in the order of the `keys` it
/// is called with) and variables (in the order of the `vars` scalars).
pub(super) struct Names {
    pub(super) fields: Vec<Arc<String>>,
    pub(super) vars: Vec<Arc<String>>,
    /// What the code points to ([`Gen::kept`]).
    pub(super) kept: super::Kept,
}

/// Builds expression `e` into `func` (whose signature is
/// [`expr_signature`]); returns the names it reads.
pub(super) fn build_expr(
    func: &mut Function,
    fctx: &mut FunctionBuilderContext,
    target: TargetFrontendConfig,
    e: &Expr,
    output: Output,
) -> Result<Names, Unsupported> {
    let cc = func.signature.call_conv;
    let mut b = FunctionBuilder::new(func, fctx);
    let entry = b.create_block();
    let deopt = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let params = b.block_params(entry).to_vec();
    let item = load(&mut b, params[0]);
    let sig = b.import_signature(field_signature(cc));
    let element_sig = b.import_signature(element_signature(cc));
    let mut g = Gen {
        b,
        deopt,
        item,
        classes: None,
        fields: Some(Fields {
            keys: params[1],
            helper: params[2],
            element: params[4],
            vars: params[5],
            probe: params[6],
            sig,
            element_sig,
            names: Vec::new(),
            var_names: Vec::new(),
        }),
        reads_strings: true,
        budget: BUDGET,
        kept: Vec::new(),
        reads: Vec::new(),
    };
    let r = match output {
        Output::Condition => {
            let r = g.cond(e, e.root)?;
            g.b.ins().uextend(types::I64, r)
        }
        Output::Number => {
            let n = g.num(e, e.root)?;
            g.store_num(n, params[3]);
            g.b.ins().iconst(types::I64, 0)
        }
    };
    g.b.ins().return_(&[r]);
    g.b.switch_to_block(deopt);
    let two = g.b.ins().iconst(types::I64, 2);
    g.b.ins().return_(&[two]);
    g.b.seal_all_blocks();
    g.within_budget()?;
    let kept = std::mem::take(&mut g.kept);
    let names = match g.fields.take() {
        Some(f) => Names {
            fields: f.names,
            vars: f.var_names,
            kept,
        },
        None => Names {
            fields: Vec::new(),
            vars: Vec::new(),
            kept,
        },
    };
    g.b.finalize(target);
    Ok(names)
}

/// How a predicate reads `$.name`: the keys' base address, the helper's
/// address and signature, and the names read so far.
struct Fields {
    keys: Ssa,
    helper: Ssa,
    /// The helper reading a list's items (its signature `element_sig`).
    element: Ssa,
    element_sig: SigRef,
    /// The scalars of the variables read (`$name`), in `var_names` order.
    vars: Ssa,
    /// The call's probe, passed on to the field helper (objects).
    probe: Ssa,
    sig: SigRef,
    names: Vec<Arc<String>>,
    var_names: Vec<Arc<String>>,
}

/// A number whose kind is known at run time: `float` (an `i8`) says
/// whether `f` (an `f64`) or `i` (an `i64`) holds it.
#[derive(Clone, Copy)]
struct Num {
    float: Ssa,
    i: Ssa,
    f: Ssa,
}

/// A value an expression computes.
#[derive(Clone, Copy)]
enum Val<'a> {
    /// Any scalar, as the item's fields.
    Item(Item),
    /// An integer (its guards passed).
    Int(Ssa),
    /// A scalar constant.
    Const(&'a Value),
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

struct Gen<'f> {
    b: FunctionBuilder<'f>,
    deopt: Block,
    /// `$`.
    item: Item,
    /// Field reads (predicates only).
    fields: Option<Fields>,
    /// `class()` links (chains only).
    classes: Option<Classes>,
    /// Some code reads a string's bytes or length.
    reads_strings: bool,
    /// Tag dispatches and string comparisons left before the function is
    /// too big to be worth compiling (see [`BUDGET`]).
    budget: u32,
    /// What the code points to and must outlive it (prepared string
    /// tests: `matches()` of a constant pattern).
    kept: super::Kept,
    /// The field reads the current block is dominated by
    /// ([`reads::Read`]).
    reads: Vec<reads::Read>,
}

impl Gen<'_> {
    /// `Err` when the function grew past [`BUDGET`].
    fn within_budget(&self) -> Result<(), Unsupported> {
        if self.budget == 0 {
            return Err(unsupported("a function this big"));
        }
        Ok(())
    }

    /// The address of a new stack slot for one scalar (a helper's `out`).
    fn scalar_slot(&mut self) -> Ssa {
        let size = std::mem::size_of::<super::Scalar>() as u32;
        let data = StackSlotData::new(StackSlotKind::ExplicitSlot, size, 3);
        let slot = self.b.create_sized_stack_slot(data);
        self.b.ins().stack_addr(types::I64, slot, 0)
    }

    /// Goes on in a new block when `c` holds, else to the deopt block.
    fn continue_if(&mut self, c: Ssa) {
        let next = self.b.create_block();
        self.b.ins().brif(c, next, &[], self.deopt, &[]);
        self.chain_next(next);
    }

    /// True when the tag of `it` is one of `tags`.
    fn tag_in(&mut self, it: Item, tags: &[u64]) -> Ssa {
        let mut acc = self.b.ins().iconst(types::I8, 0);
        for &t in tags {
            let c = self.b.ins().icmp_imm_s(IntCC::Equal, it.tag, t as i64);
            acc = self.b.ins().bor(acc, c);
        }
        acc
    }

    /// Link `k` of the chain, `s`.
    fn step(&mut self, k: usize, s: &Step<'_>) -> Result<(), Unsupported> {
        match s.link {
            // The engine's helper answers: as it is, as another value (an
            // object: no scalar the code may read further), or deopt.
            LinkKind::Class { .. } => {
                let c = self
                    .classes
                    .ok_or_else(|| unsupported("class() outside a chain"))?;
                let step = self.b.ins().iconst(types::I64, k as i64);
                let call = self.b.ins().call_indirect(
                    c.sig,
                    c.helper,
                    &[c.call, step, c.index, self.item.val],
                );
                let r = self.b.inst_results(call)[0];
                let ok = self.b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
                self.continue_if(ok);
                let became = self.b.ins().icmp_imm_s(IntCC::Equal, r, 2);
                let other = self.b.ins().iconst(types::I64, tag::OTHER as i64);
                let null = self.b.ins().iconst(types::I64, 0);
                let it = self.item;
                self.item = Item {
                    tag: self.b.ins().select(became, other, it.tag),
                    bits: self.b.ins().select(became, null, it.bits),
                    ptr: self.b.ins().select(became, null, it.ptr),
                    len: self.b.ins().select(became, null, it.len),
                    val: self.b.ins().select(became, null, it.val),
                };
            }
            LinkKind::Owned | LinkKind::NotOwned => self.owned_step(k)?,
            LinkKind::Template { .. } => self.template_step(k)?,
            LinkKind::NotNull => {
                let ok = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::NotEqual, self.item.tag, tag::NULL as i64);
                self.continue_if(ok);
            }
            // The coercions keep these values as they are; any other value
            // would change (or fail): the interpreter does that.
            LinkKind::Int => {
                let ok = self.tag_in(self.item, &[tag::NULL, tag::INT, tag::BIGINT]);
                self.continue_if(ok);
            }
            LinkKind::String => {
                let ok = self.tag_in(self.item, &[tag::NULL, tag::STR]);
                self.continue_if(ok);
            }
            LinkKind::Bool => {
                let ok = self.tag_in(self.item, &[tag::NULL, tag::BOOL]);
                self.continue_if(ok);
            }
            // `check()` asks its predicate about null too.
            LinkKind::Check { .. } => {
                let e = s
                    .predicate
                    .ok_or_else(|| Unsupported("check() without its compiled predicate".into()))?;
                let ok = self.cond(e, e.root)?;
                self.continue_if(ok);
            }
            other => return Err(Unsupported(format!("{}() is not compiled", other.method()))),
        }
        Ok(())
    }

    /// The truthiness of node `id` as an `i8` 0 or 1.
    fn cond(&mut self, e: &Expr, id: NodeId) -> Result<Ssa, Unsupported> {
        match &e[id] {
            Node::Not(x) => {
                let r = self.cond(e, *x)?;
                Ok(self.b.ins().icmp_imm_s(IntCC::Equal, r, 0))
            }
            Node::And(l, r) => self.short_circuit(e, *l, *r, true),
            Node::Or(l, r) => self.short_circuit(e, *l, *r, false),
            Node::Bin(BinOp::In, l, r, _, _) => self.member(e, *l, *r),
            Node::Bin(
                op @ (BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge),
                l,
                r,
                _,
                _,
            ) => {
                let (l, r) = (self.value(e, *l)?, self.value(e, *r)?);
                self.compare_vals(*op, l, r)
            }
            Node::Call(c)
                if matches!(&*c.name, "all" | "any")
                    && c.form == Form::Method
                    && self.fields.is_some()
                    && library(c)
                    && c.named.is_empty() =>
            {
                let [recv, lambda] = e.list(c.pos) else {
                    return Err(unsupported("this call of all() or any()"));
                };
                let (Val::Item(list), Node::Lambda(body)) = (self.value(e, *recv)?, &e[*lambda])
                else {
                    return Err(unsupported("all() or any() of anything but a value read"));
                };
                self.quantifier(e, list, *body, &*c.name == "all")
            }
            Node::Call(c) if calls::is_str_test(c) => self.str_test(e, c),
            // `bool(x)` is the truth of `x` (the library's `truthy()`).
            Node::Call(c)
                if &*c.name == "bool"
                    && c.form == Form::Function
                    && library(c)
                    && c.named.is_empty()
                    && e.list(c.pos).len() == 1 =>
            {
                self.cond(e, e.list(c.pos)[0])
            }
            Node::Call(c)
                if &*c.name == "containsKey"
                    && c.form == Form::Method
                    && library(c)
                    && c.named.is_empty() =>
            {
                self.contains_key(e, c)
            }
            Node::Call(c)
                if matches!(&*c.name, "startsWith" | "endsWith")
                    && c.form == Form::Method
                    && library(c)
                    && c.named.is_empty() =>
            {
                self.starts_with(e, c)
            }
            Node::Call(c) if TYPE_TESTS.iter().any(|(n, _)| **n == *c.name) => {
                let args = e.list(c.pos);
                let (_, tags) = TYPE_TESTS
                    .iter()
                    .find(|(n, _)| **n == *c.name)
                    .expect("matched");
                if args.len() != 1 || !c.named.is_empty() || !library(c) {
                    return Err(unsupported(&format!("this call of {}()", c.name)));
                }
                match self.value(e, args[0])? {
                    Val::Item(it) => Ok(self.tag_in(it, tags)),
                    _ => Err(unsupported(&format!(
                        "{}() of anything but a value read",
                        c.name
                    ))),
                }
            }
            _ => match self.value(e, id)? {
                Val::Const(v) => Ok(self.b.ins().iconst(types::I8, v.truthy() as i64)),
                Val::Int(x) => Ok(self.b.ins().icmp_imm_s(IntCC::NotEqual, x, 0)),
                Val::Item(it) => Ok(self.by_tag(
                    it,
                    &[
                        (tag::NULL, Arm::Const(false)),
                        (tag::BOOL, Arm::BitsNonZero),
                        (tag::INT, Arm::BitsNonZero),
                        (tag::FLOAT, Arm::FloatNonZero),
                        (tag::STR, Arm::LenNonZero),
                        (tag::BIGINT, Arm::Const(true)),
                    ],
                )),
            },
        }
    }

    /// `recv.startsWith(prefix)` (or `endsWith(suffix)`) of a value read
    /// and one constant: a string's first (last) bytes (anything but a
    /// string deopts: the interpreter's error).
    fn starts_with(&mut self, e: &Expr, c: &crate::ir::Call) -> Result<Ssa, Unsupported> {
        let [recv, prefix] = e.list(c.pos) else {
            return Err(unsupported("startsWith() of other than one prefix"));
        };
        let Node::Const(Value::Str(p)) = &e[*prefix] else {
            return self.starts_with_read(e, c, *recv, *prefix);
        };
        if p.len() > MAX_STR_CONST {
            return Err(unsupported("a long string constant"));
        }
        let Val::Item(it) = self.value(e, *recv)? else {
            return Err(unsupported("startsWith() of anything but a value read"));
        };
        let is_str = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, it.tag, tag::STR as i64);
        self.continue_if(is_str);
        self.reads_strings = true;
        let part = if &*c.name == "endsWith" {
            Part::Suffix
        } else {
            Part::Prefix
        };
        Ok(self.str_bytes(it, p.as_bytes(), part))
    }

    /// The value of node `id`: `$`, a field of a value (`$.x`), a scalar
    /// constant, or integer arithmetic.
    fn value<'e>(&mut self, e: &'e Expr, id: NodeId) -> Result<Val<'e>, Unsupported> {
        match &e[id] {
            Node::Arg(1) => Ok(Val::Item(self.item)),
            Node::Const(v) if is_scalar(v) => match v {
                Value::Str(s) if s.len() > MAX_STR_CONST => {
                    Err(unsupported("a long string constant"))
                }
                _ => Ok(Val::Const(v)),
            },
            // `$name`: read by the caller (as the interpreter would) into
            // a scalar of `vars`.
            Node::Var(name) if self.fields.is_some() => {
                let f = self.fields.as_mut().expect("checked");
                let k = match f.var_names.iter().position(|n| n == name) {
                    Some(k) => k,
                    None => {
                        f.var_names.push(name.clone());
                        f.var_names.len() - 1
                    }
                };
                let at = self
                    .b
                    .ins()
                    .iadd_imm_s(f.vars, (k * std::mem::size_of::<super::Scalar>()) as i64);
                Ok(Val::Item(load(&mut self.b, at)))
            }
            Node::Var(name) => Err(unsupported(&format!("variable ${name} here"))),
            Node::Attr(recv, name, _, _) if self.fields.is_some() => match self.value(e, *recv)? {
                Val::Item(it) => Ok(Val::Item(self.field(it, name, super::read::FIELD, None))),
                _ => Err(unsupported("a field of anything but a value read")),
            },
            Node::Call(c)
                if self.fields.is_some()
                    && (library(c) || engine_get_attr(c))
                    && c.named.is_empty() =>
            {
                self.call_value(e, c)
            }
            Node::Bin(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul), l, r, _, _) => {
                let (l, r) = (self.value(e, *l)?, self.value(e, *r)?);
                let (l, r) = (self.int(l)?, self.int(r)?);
                let (x, overflow) = match op {
                    BinOp::Add => self.b.ins().sadd_overflow(l, r),
                    BinOp::Sub => self.b.ins().ssub_overflow(l, r),
                    _ => self.b.ins().smul_overflow(l, r),
                };
                let ok = self.b.ins().icmp_imm_s(IntCC::Equal, overflow, 0);
                self.continue_if(ok);
                Ok(Val::Int(x))
            }
            Node::Bin(op @ (BinOp::Div | BinOp::Mod), l, r, _, _) => {
                let (l, r) = (self.value(e, *l)?, self.value(e, *r)?);
                let (l, r) = (self.int(l)?, self.int(r)?);
                Ok(Val::Int(self.int_div_mod(*op, l, r)))
            }
            Node::Call(c) => Err(unsupported(&format!("function {}()", c.name))),
            _ => Err(unsupported("this kind of expression")),
        }
    }

    /// The number node `id` computes: an int or float read or constant,
    /// or `+`, `-`, `*` of numbers with Python's rules (ints stay ints and
    /// deopt on overflow, where the reference goes to big integers; a float
    /// on either side makes a float).
    fn num(&mut self, e: &Expr, id: NodeId) -> Result<Num, Unsupported> {
        let int = |g: &mut Self, i: Ssa| {
            let float = g.b.ins().iconst(types::I8, 0);
            let f = g.b.ins().f64const(0.0);
            Num { float, i, f }
        };
        match &e[id] {
            Node::Const(Value::Int(k)) => {
                let i = self.b.ins().iconst(types::I64, *k);
                Ok(int(self, i))
            }
            Node::Const(Value::Float(x)) => {
                let float = self.b.ins().iconst(types::I8, 1);
                let i = self.b.ins().iconst(types::I64, 0);
                let f = self.b.ins().f64const(*x);
                Ok(Num { float, i, f })
            }
            Node::Bin(
                op @ (BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod),
                l,
                r,
                _,
                _,
            ) => {
                let (a, b) = (self.num(e, *l)?, self.num(e, *r)?);
                Ok(self.arith(*op, a, b))
            }
            _ => match self.value(e, id)? {
                Val::Item(it) => {
                    let ok = self.tag_in(it, &[tag::INT, tag::FLOAT]);
                    self.continue_if(ok);
                    let float = self
                        .b
                        .ins()
                        .icmp_imm_s(IntCC::Equal, it.tag, tag::FLOAT as i64);
                    let f = self
                        .b
                        .ins()
                        .bitcast(types::F64, MemFlagsData::new(), it.bits);
                    Ok(Num {
                        float,
                        i: it.bits,
                        f,
                    })
                }
                Val::Int(i) => Ok(int(self, i)),
                Val::Const(_) => Err(unsupported("arithmetic on a constant other than a number")),
            },
        }
    }

    /// `a <op> b` for numbers.
    fn arith(&mut self, op: BinOp, a: Num, b: Num) -> Num {
        let ints = self.b.create_block();
        let floats = self.b.create_block();
        let join = self.b.create_block();
        let float = self.b.append_block_param(join, types::I8);
        let i = self.b.append_block_param(join, types::I64);
        let f = self.b.append_block_param(join, types::F64);
        let any_float = self.b.ins().bor(a.float, b.float);
        self.b.ins().brif(any_float, floats, &[], ints, &[]);

        self.switch_to(ints);
        let x = if matches!(op, BinOp::Div | BinOp::Mod) {
            self.int_div_mod(op, a.i, b.i)
        } else {
            let (x, overflow) = match op {
                BinOp::Add => self.b.ins().sadd_overflow(a.i, b.i),
                BinOp::Sub => self.b.ins().ssub_overflow(a.i, b.i),
                _ => self.b.ins().smul_overflow(a.i, b.i),
            };
            let ok = self.b.ins().icmp_imm_s(IntCC::Equal, overflow, 0);
            self.continue_if(ok);
            x
        };
        let no = self.b.ins().iconst(types::I8, 0);
        let fz = self.b.ins().f64const(0.0);
        self.b.ins().jump(join, &[no.into(), x.into(), fz.into()]);

        self.switch_to(floats);
        let as_f64 = |g: &mut Self, n: Num| {
            let conv = g.b.ins().fcvt_from_sint(types::F64, n.i);
            g.b.ins().select(n.float, n.f, conv)
        };
        let (fa, fb) = (as_f64(self, a), as_f64(self, b));
        let y = match op {
            BinOp::Add => self.b.ins().fadd(fa, fb),
            BinOp::Sub => self.b.ins().fsub(fa, fb),
            BinOp::Div => {
                // A zero divisor is the interpreter's ZeroDivisionError.
                let zero = self.b.ins().f64const(0.0);
                let ok = self.b.ins().fcmp(FloatCC::NotEqual, fb, zero);
                self.continue_if(ok);
                self.b.ins().fdiv(fa, fb)
            }
            BinOp::Mod => {
                // Python's float modulo is the interpreter's.
                let no = self.b.ins().iconst(types::I8, 0);
                self.continue_if(no);
                fa
            }
            _ => self.b.ins().fmul(fa, fb),
        };
        let yes = self.b.ins().iconst(types::I8, 1);
        let iz = self.b.ins().iconst(types::I64, 0);
        self.b.ins().jump(join, &[yes.into(), iz.into(), y.into()]);

        self.switch_to(join);
        Num { float, i, f }
    }

    /// Writes number `n` to the scalar at `out` (its tag and bits).
    fn store_num(&mut self, n: Num, out: Ssa) {
        let fbits = self.b.ins().bitcast(types::I64, MemFlagsData::new(), n.f);
        let bits = self.b.ins().select(n.float, fbits, n.i);
        let float_tag = self.b.ins().iconst(types::I64, tag::FLOAT as i64);
        let int_tag = self.b.ins().iconst(types::I64, tag::INT as i64);
        let t = self.b.ins().select(n.float, float_tag, int_tag);
        let flags = MemFlagsData::new().with_notrap().with_aligned();
        self.b.ins().store(flags, t, out, 0);
        self.b.ins().store(flags, bits, out, 8);
    }

    /// The value of a library call: `recv.get(key[, default])` of a dict
    /// with a constant key and a scalar default; `len(v)` of a list or
    /// dict; and the engine's `obj.getAttr(key[, default])`, read through
    /// the call's [`super::Objects`].
    fn call_value<'e>(&mut self, e: &'e Expr, c: &crate::ir::Call) -> Result<Val<'e>, Unsupported> {
        let args = e.list(c.pos);
        match (&*c.name, c.form, args) {
            // `getAttr` only as the engine's (a MuranoPL object's
            // attribute), never one a class or host defines.
            (f @ ("get" | "getAttr"), Form::Method, [recv, key, rest @ ..])
                if rest.len() <= 1 && (f == "get") == library(c) =>
            {
                let Node::Const(Value::Str(name)) = &e[*key] else {
                    return Err(unsupported(&format!(
                        "{f}() of anything but a constant key"
                    )));
                };
                let default = match rest.first().map(|&d| &e[d]) {
                    None => &runtime::value::NULL,
                    Some(Node::Const(
                        v @ (Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_)),
                    )) => v,
                    Some(Node::Const(v @ Value::Str(s))) if s.is_empty() => v,
                    Some(_) => return Err(unsupported(&format!("{f}() with this default"))),
                };
                let kind = match f {
                    "get" => super::read::GET,
                    _ => super::read::ATTR,
                };
                match self.value(e, *recv)? {
                    Val::Item(it) => Ok(Val::Item(self.field(it, name, kind, Some(default)))),
                    _ => Err(unsupported(&format!("{f}() of anything but a value read"))),
                }
            }
            ("len", Form::Function, [arg]) if calls::dict_view(e, *arg).is_some() => {
                self.len_of_view(e, *arg)
            }
            ("len", Form::Function, [arg]) => match self.value(e, *arg)? {
                Val::Item(it) => {
                    let ok = self.tag_in(it, &[tag::LIST, tag::DICT, tag::STR]);
                    self.continue_if(ok);
                    self.reads_strings = true;
                    let is_str = self
                        .b
                        .ins()
                        .icmp_imm_s(IntCC::Equal, it.tag, tag::STR as i64);
                    let chars = self.str_chars(it);
                    Ok(Val::Int(self.b.ins().select(is_str, chars, it.len)))
                }
                _ => Err(unsupported("len() of anything but a value read")),
            },
            _ => Err(unsupported(&format!("function {}()", c.name))),
        }
    }

    /// `v` as an integer: a value read deopts unless it is one (a float,
    /// a big integer, a string take the interpreter's rules).
    fn int(&mut self, v: Val<'_>) -> Result<Ssa, Unsupported> {
        match v {
            Val::Int(x) => Ok(x),
            Val::Const(Value::Int(k)) => Ok(self.b.ins().iconst(types::I64, *k)),
            Val::Const(_) => Err(unsupported(
                "arithmetic on a constant other than an integer",
            )),
            Val::Item(it) => {
                let ok = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::Equal, it.tag, tag::INT as i64);
                self.continue_if(ok);
                Ok(it.bits)
            }
        }
    }

    /// Reads field `name` of `it` through the helper; a value that is not
    /// a dict deopts.
    fn field(&mut self, it: Item, name: &Arc<String>, kind: u64, default: Option<&Value>) -> Item {
        let f = self.fields.as_mut().expect("checked by the caller");
        let k = match f.names.iter().position(|n| n == name) {
            Some(k) => k,
            None => {
                f.names.push(name.clone());
                f.names.len() - 1
            }
        };
        let (keys, helper, sig, probe) = (f.keys, f.helper, f.sig, f.probe);
        if let Some(item) = self.read_before(it.val, k, kind, default) {
            return item;
        }
        let out = self.scalar_slot();
        let key = self
            .b
            .ins()
            .iadd_imm_s(keys, (k * std::mem::size_of::<Value>()) as i64);
        let how = self.b.ins().iconst(types::I64, kind as i64);
        let call = self
            .b
            .ins()
            .call_indirect(sig, helper, &[probe, it.val, key, how, out]);
        let r = self.b.inst_results(call)[0];
        match default {
            // `$.name`: a missing key is the interpreter's `KeyError`.
            None => {
                let found = self.b.ins().icmp_imm_s(IntCC::Equal, r, 1);
                self.continue_if(found);
            }
            // `$.get(name, default)`.
            Some(d) => {
                let dict = self.b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
                self.continue_if(dict);
                let missing = self.b.create_block();
                let join = self.b.create_block();
                let found = self.b.ins().icmp_imm_s(IntCC::Equal, r, 1);
                self.b.ins().brif(found, join, &[], missing, &[]);
                self.switch_to(missing);
                let s = super::Scalar::of(d, false);
                let flags = MemFlagsData::new().with_notrap().with_aligned();
                for (k, x) in [s.tag, s.bits, 0, 0, 0].into_iter().enumerate() {
                    let x = self.b.ins().iconst(types::I64, x as i64);
                    self.b.ins().store(flags, x, out, 8 * k as i32);
                }
                self.b.ins().jump(join, &[]);
                self.switch_to(join);
            }
        }
        let item = load(&mut self.b, out);
        self.remember_read(it.val, k, kind, default, r, item);
        item
    }

    /// `recv.all(body)` (`all_ = true`) or `recv.any(body)` over a list:
    /// the body is compiled with `$` each item in turn.
    fn quantifier(
        &mut self,
        e: &Expr,
        list: Item,
        body: NodeId,
        all_: bool,
    ) -> Result<Ssa, Unsupported> {
        self.scan(list, all_, |g, x| {
            let outer = std::mem::replace(&mut g.item, x);
            let r = g.cond(e, body);
            g.item = outer;
            r
        })
    }

    /// A loop over the items of `list` (a list, else deopt): `test` of
    /// each in turn, until one answers `!all_` (the answer); past the end,
    /// `all_`. `all` is `scan(list, true, ..)`, `any` `scan(list, false,
    /// ..)`.
    fn scan(
        &mut self,
        list: Item,
        all_: bool,
        test: impl FnOnce(&mut Self, Item) -> Result<Ssa, Unsupported>,
    ) -> Result<Ssa, Unsupported> {
        self.scan_of(list, super::elements::LIST, all_, test)
    }

    /// [`Gen::scan`] over the items of `list` of kind `kind` (one of
    /// [`super::elements`]: a list's items, a dict's keys or values);
    /// a container of another kind deopts.
    fn scan_of(
        &mut self,
        list: Item,
        kind: u64,
        all_: bool,
        test: impl FnOnce(&mut Self, Item) -> Result<Ssa, Unsupported>,
    ) -> Result<Ssa, Unsupported> {
        let want = match kind {
            super::elements::LIST => tag::LIST,
            _ => tag::DICT,
        };
        let is_list = self.b.ins().icmp_imm_s(IntCC::Equal, list.tag, want as i64);
        self.continue_if(is_list);
        let f = self.fields.as_ref().expect("checked by the caller");
        let (element, sig) = (f.element, f.element_sig);
        let head = self.b.create_block();
        let step = self.b.create_block();
        let exit = self.b.create_block();
        let i = self.b.append_block_param(head, types::I64);
        let res = self.b.append_block_param(exit, types::I8);
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b.ins().jump(head, &[zero.into()]);

        self.switch_to(head);
        let done = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, i, list.len);
        let end = self.b.ins().iconst(types::I8, all_ as i64);
        self.b.ins().brif(done, exit, &[end.into()], step, &[]);

        self.switch_to(step);
        let out = self.scalar_slot();
        let kind = self.b.ins().iconst(types::I64, kind as i64);
        let call = self
            .b
            .ins()
            .call_indirect(sig, element, &[list.val, i, out, kind]);
        let got = self.b.inst_results(call)[0];
        self.continue_if(got);
        let x = load(&mut self.b, out);
        let r = test(self, x)?;
        let next = self.b.ins().iadd_imm_s(i, 1);
        let decided = self.b.ins().iconst(types::I8, !all_ as i64);
        if all_ {
            self.b
                .ins()
                .brif(r, head, &[next.into()], exit, &[decided.into()]);
        } else {
            self.b
                .ins()
                .brif(r, exit, &[decided.into()], head, &[next.into()]);
        }
        self.switch_to(exit);
        Ok(res)
    }

    /// `l <op> r` for a comparison operator.
    fn compare_vals(&mut self, op: BinOp, l: Val<'_>, r: Val<'_>) -> Result<Ssa, Unsupported> {
        match (l, r) {
            (Val::Item(it), Val::Const(c)) => self.compare(it, op, c),
            (Val::Const(c), Val::Item(it)) => self.compare(it, mirror(op)?, c),
            (Val::Const(_), Val::Const(_)) => Err(unsupported("a comparison of constants")),
            (l, r) => {
                let (l, r) = (self.int(l)?, self.int(r)?);
                Ok(self.b.ins().icmp(int_cc(op)?, l, r))
            }
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
        // `a and b and c` parses as `(a and b) and c`: its operands are
        // taken in order, each in a block entered from the one before, so
        // that what an operand read stays read for the next ones
        // ([`reads`]); the first that decides goes to the join.
        let mut operands = vec![r];
        let mut left = l;
        while let (Node::And(l2, r2), true) | (Node::Or(l2, r2), false) = (&e[left], and_) {
            operands.push(*r2);
            left = *l2;
        }
        operands.push(left);
        operands.reverse();
        let join = self.b.create_block();
        let res = self.b.append_block_param(join, types::I8);
        let (last, init) = operands.split_last().expect("two operands at least");
        for &op in init {
            let v = self.cond(e, op)?;
            let next = self.b.create_block();
            if and_ {
                self.b.ins().brif(v, next, &[], join, &[v.into()]);
            } else {
                self.b.ins().brif(v, join, &[v.into()], next, &[]);
            }
            self.chain_next(next);
        }
        let v = self.cond(e, *last)?;
        self.b.ins().jump(join, &[v.into()]);
        self.switch_to(join);
        Ok(res)
    }

    /// `v in [c1, c2, ...]` (a list literal or `list()` of constants):
    /// `v = c1 or v = c2 or ...`.
    fn member(&mut self, e: &Expr, l: NodeId, r: NodeId) -> Result<Ssa, Unsupported> {
        let Val::Item(it) = self.value(e, l)? else {
            return Err(unsupported(
                "`in` with anything but a value read on the left",
            ));
        };
        if let Some((dict, kind)) = calls::dict_view(e, r) {
            return self.member_of_view(e, it, dict, kind);
        }
        let items = match &e[r] {
            Node::List(items) => e.list(*items),
            Node::Call(c) if &*c.name == "list" && c.named.is_empty() && library(c) => {
                e.list(c.pos)
            }
            _ if self.fields.is_some() => match self.value(e, r)? {
                Val::Item(list) => return self.member_of(it, list),
                _ => return Err(unsupported("`in` over a constant that is not a list")),
            },
            _ => return Err(unsupported("`in` over anything but a list of constants")),
        };
        let consts = items
            .iter()
            .map(|&i| match e[i] {
                Node::Const(ref c) if is_scalar(c) => Ok(c),
                _ => Err(unsupported("`in` over anything but a list of constants")),
            })
            .collect::<Result<Vec<_>, _>>()?;
        if consts.len() >= self.budget as usize {
            return Err(unsupported("a function this big"));
        }
        let join = self.b.create_block();
        let res = self.b.append_block_param(join, types::I8);
        for c in consts {
            let eq = self.compare(it, BinOp::Eq, c)?;
            let next = self.b.create_block();
            self.b.ins().brif(eq, join, &[eq.into()], next, &[]);
            self.switch_to(next);
        }
        let no = self.b.ins().iconst(types::I8, 0);
        self.b.ins().jump(join, &[no.into()]);
        self.switch_to(join);
        Ok(res)
    }

    /// `needle in list` of two values read: whether an item of `list` (a
    /// list, else deopt) equals `needle` ([`Gen::items_equal`]).
    fn member_of(&mut self, needle: Item, list: Item) -> Result<Ssa, Unsupported> {
        self.reads_strings = true;
        self.scan(list, false, |g, x| Ok(g.items_equal(needle, x)))
    }

    /// `$ <op> c` with Python's rules for the value kinds it has arms for.
    fn compare(&mut self, it: Item, op: BinOp, c: &Value) -> Result<Ssa, Unsupported> {
        let arms = match op {
            BinOp::Eq => eq_arms(c)?,
            BinOp::Ne => {
                let eq = self.compare(it, BinOp::Eq, c)?;
                return Ok(self.b.ins().icmp_imm_s(IntCC::Equal, eq, 0));
            }
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => order_arms(op, c)?,
            _ => return Err(unsupported("arithmetic")),
        };
        Ok(self.by_tag(it, &arms))
    }

    /// Dispatches on the tag: each listed tag computes its arm; any other
    /// tag deopts.
    fn by_tag(&mut self, it: Item, arms: &[(u64, Arm<'_>)]) -> Ssa {
        self.budget = self.budget.saturating_sub(1);
        let join = self.b.create_block();
        let res = self.b.append_block_param(join, types::I8);
        for (t, arm) in arms {
            let here = self.b.create_block();
            let next = self.b.create_block();
            let is = self.b.ins().icmp_imm_s(IntCC::Equal, it.tag, *t as i64);
            self.b.ins().brif(is, here, &[], next, &[]);
            self.switch_to(here);
            let r = self.arm(it, *arm);
            self.b.ins().jump(join, &[r.into()]);
            self.switch_to(next);
        }
        self.b.ins().jump(self.deopt, &[]);
        self.switch_to(join);
        res
    }

    fn arm(&mut self, it: Item, arm: Arm<'_>) -> Ssa {
        let Item { bits, len, .. } = it;
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
                self.str_bytes(it, s, Part::Whole)
            }
        }
    }

    /// The current string equals `s` (`whole`) or starts with it: the
    /// lengths, then the bytes, eight at a time, read inside the string
    /// only.
    fn str_bytes(&mut self, it: Item, s: &[u8], part: Part) -> Ssa {
        let Item { ptr, len, .. } = it;
        let cc = if part == Part::Whole {
            IntCC::Equal
        } else {
            IntCC::UnsignedGreaterThanOrEqual
        };
        let same_len = self.b.ins().icmp_imm_s(cc, len, s.len() as i64);
        if s.is_empty() {
            return same_len;
        }
        let bytes = self.b.create_block();
        let join = self.b.create_block();
        let res = self.b.append_block_param(join, types::I8);
        self.b
            .ins()
            .brif(same_len, bytes, &[], join, &[same_len.into()]);
        self.switch_to(bytes);
        // A suffix's bytes start `s.len()` before the end.
        let ptr = if part == Part::Suffix {
            let at = self.b.ins().iadd(ptr, len);
            self.b.ins().iadd_imm_s(at, -(s.len() as i64))
        } else {
            ptr
        };
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
        self.switch_to(join);
        res
    }
}

/// What part of a string [`Gen::str_bytes`] compares.
#[derive(Clone, Copy, PartialEq)]
enum Part {
    Whole,
    Prefix,
    Suffix,
}

mod calls;
mod ops;
mod reads;

fn unsupported(what: &str) -> Unsupported {
    Unsupported(format!("the JIT does not compile {what}"))
}

fn is_scalar(v: &Value) -> bool {
    matches!(
        v,
        Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_)
    )
}

/// True for a call resolved, when compiled, to the YAQL library's
/// overloads only ([`LIBRARY`]).
pub(super) fn library(c: &crate::ir::Call) -> bool {
    c.set.as_ref().is_some_and(|s| {
        !s.overloads.is_empty()
            && s.overloads.iter().all(|o| {
                o.id.split_once('.')
                    .is_some_and(|(g, _)| LIBRARY.contains(&g))
            })
    })
}

/// True for `getAttr` resolved, when compiled, to the engine's only
/// (`murano` group: a MuranoPL object's attribute).
fn engine_get_attr(c: &crate::ir::Call) -> bool {
    &*c.name == "getAttr"
        && c.set.as_ref().is_some_and(|s| {
            !s.overloads.is_empty()
                && (s.overloads.iter()).all(|o| o.id.starts_with("murano.getAttr#"))
        })
}

/// The integer condition of a comparison operator.
fn int_cc(op: BinOp) -> Result<IntCC, Unsupported> {
    Ok(match op {
        BinOp::Eq => IntCC::Equal,
        BinOp::Ne => IntCC::NotEqual,
        BinOp::Lt => IntCC::SignedLessThan,
        BinOp::Le => IntCC::SignedLessThanOrEqual,
        BinOp::Gt => IntCC::SignedGreaterThan,
        BinOp::Ge => IntCC::SignedGreaterThanOrEqual,
        _ => return Err(unsupported("this operator")),
    })
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
        // A list or dict is unequal to null too (`$x = null` where `$x`
        // is a row).
        Value::Null => {
            let mut arms = vec![(tag::NULL, Arm::Const(true))];
            arms.extend(unequal(&[
                tag::BOOL,
                tag::INT,
                tag::FLOAT,
                tag::STR,
                tag::BIGINT,
                tag::LIST,
                tag::DICT,
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
