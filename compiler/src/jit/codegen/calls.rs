//! Library calls the generated code answers through a test prepared at
//! compile time or a loop of its own: `matches()` (and `=~`) of a constant
//! pattern, `startsWith()`/`endsWith()` of a string read, `containsKey()`,
//! and `in` and `len()` over a dict's `keys()` or `values()`.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, AbiParam, InstBuilder, Signature, Value as Ssa};
use std::sync::Arc;

use super::{library, unsupported, Gen, Item, Unsupported, Val};
use crate::ir::{BinOp, Call, Expr, Node, NodeId};
use runtime::registry::{Form, Overload};
use runtime::Value;

/// True for a call the library answers with a string test prepared from
/// a constant ([`runtime::registry::StrTest`]): `s.matches(pattern)`,
/// `s =~ pattern`.
pub(super) fn is_str_test(c: &Call) -> bool {
    matches!(
        (&*c.name, c.form),
        ("matches", Form::Method) | ("#operator_=~", Form::Function)
    ) && c.named.is_empty()
}

/// `recv.keys()` or `recv.values()` of the library (a dict's, nothing a
/// host or the engine added): the receiver and what the element helper
/// reads of it ([`super::super::elements`]).
pub(super) fn dict_view(e: &Expr, id: NodeId) -> Option<(NodeId, u64)> {
    let Node::Call(c) = &e[id] else {
        return None;
    };
    let kind = match &*c.name {
        "keys" => super::super::elements::KEYS,
        "values" => super::super::elements::VALUES,
        _ => return None,
    };
    match e.list(c.pos) {
        [recv] if c.form == Form::Method && c.named.is_empty() && library(c) => Some((*recv, kind)),
        _ => None,
    }
}

/// The one overload of `c` that a string and `pattern` bind, when it has
/// a string test and no other overload of the set could take them (the
/// others take a regex object); every overload the regex library's.
fn str_test_overload<'c>(c: &'c Call, pattern: &Value) -> Option<&'c Arc<Overload>> {
    let set = c.set.as_ref()?;
    let ours = |o: &Overload| o.id.starts_with("regex.");
    if !set.overloads.iter().all(|o| ours(o)) {
        return None;
    }
    let binds = |o: &Overload| {
        o.params.len() == 2
            && o.params[0].ty.accepts(&Value::str(""))
            && o.params[1].ty.accepts(pattern)
    };
    let mut it = set.overloads.iter().filter(|o| binds(o));
    let one = it.next()?;
    (it.next().is_none() && one.str_test.is_some()).then_some(one)
}

/// The signature of [`super::super::str_test`]: `(test, ptr, len) ->
/// 0 | 1 | 2`.
fn str_test_signature(cc: cranelift_codegen::isa::CallConv) -> Signature {
    let mut s = Signature::new(cc);
    for _ in 0..3 {
        s.params.push(AbiParam::new(types::I64));
    }
    s.returns.push(AbiParam::new(types::I8));
    s
}

impl Gen<'_> {
    /// Link `k`, `template()`: null passes when the engine says it does
    /// (its arguments known to evaluate) through the chain's helper;
    /// anything else deopts (an object definition is the interpreter's: a
    /// new object id, the properties coerced).
    pub(super) fn template_step(&mut self, k: usize) -> Result<(), Unsupported> {
        let c = self
            .classes
            .ok_or_else(|| unsupported("template() outside a chain"))?;
        let null = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, self.item.tag, super::tag::NULL as i64);
        self.continue_if(null);
        let same = self.host_passes(c, k);
        self.continue_if(same);
        Ok(())
    }

    /// Asks the chain's helper about the item at link `k`: true when it
    /// passes as it is.
    fn host_passes(&mut self, c: super::Classes, k: usize) -> Ssa {
        let step = self.b.ins().iconst(types::I64, k as i64);
        let call =
            self.b
                .ins()
                .call_indirect(c.sig, c.helper, &[c.call, step, c.index, self.item.val]);
        let r = self.b.inst_results(call)[0];
        self.b.ins().icmp_imm_s(IntCC::Equal, r, 1)
    }

    /// Link `k`, `owned()` or `notOwned()`: a scalar passes as it is (only
    /// an object is owned or not); the object a `class()` link made of an
    /// id (tag OTHER) is the engine's to judge through the chain's helper,
    /// which passes it or deopts.
    pub(super) fn owned_step(&mut self, k: usize) -> Result<(), Unsupported> {
        let c = self
            .classes
            .ok_or_else(|| unsupported("owned() outside a chain"))?;
        let ask = self.b.create_block();
        let join = self.b.create_block();
        let object = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, self.item.tag, super::tag::OTHER as i64);
        self.b.ins().brif(object, ask, &[], join, &[]);
        self.switch_to(ask);
        let same = self.host_passes(c, k);
        self.b.ins().brif(same, join, &[], self.deopt, &[]);
        self.switch_to(join);
        Ok(())
    }

    /// `s.matches(pattern)` or `s =~ pattern` of a value read and a
    /// constant pattern: the library's own test, prepared (the pattern
    /// compiled) now and called on the string; anything but a string, and
    /// what the test cannot answer, deopts.
    pub(super) fn str_test(&mut self, e: &Expr, c: &Call) -> Result<Ssa, Unsupported> {
        let [recv, pattern] = e.list(c.pos) else {
            return Err(unsupported("this call of matches()"));
        };
        let Node::Const(pattern @ Value::Str(_)) = &e[*pattern] else {
            return Err(unsupported("matches() of anything but a constant pattern"));
        };
        let overload =
            str_test_overload(c, pattern).ok_or_else(|| unsupported("this call of matches()"))?;
        let prepare = overload.str_test.expect("checked");
        let test =
            prepare(pattern).ok_or_else(|| unsupported("a pattern that does not compile"))?;
        let Val::Item(it) = self.value(e, *recv)? else {
            return Err(unsupported("matches() of anything but a value read"));
        };
        let is_str = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, it.tag, super::tag::STR as i64);
        self.continue_if(is_str);
        self.reads_strings = true;
        let test = Arc::new(test);
        let at = Arc::as_ptr(&test) as i64;
        self.kept.push(test);
        let cc = self.b.func.signature.call_conv;
        let sig = self.b.import_signature(str_test_signature(cc));
        let helper = super::super::str_test as super::super::StrTestFn as usize as i64;
        let helper = self.b.ins().iconst(types::I64, helper);
        let test = self.b.ins().iconst(types::I64, at);
        let call = self
            .b
            .ins()
            .call_indirect(sig, helper, &[test, it.ptr, it.len]);
        let r = self.b.inst_results(call)[0];
        let decided = self.b.ins().icmp_imm_s(IntCC::UnsignedLessThan, r, 2);
        self.continue_if(decided);
        Ok(r)
    }

    /// `recv.startsWith(prefix)` (or `endsWith(suffix)`) of two values
    /// read: whether the string's first (last) bytes are the other's;
    /// anything but two strings deopts (the interpreter's error).
    pub(super) fn starts_with_read(
        &mut self,
        e: &Expr,
        c: &Call,
        recv: NodeId,
        prefix: NodeId,
    ) -> Result<Ssa, Unsupported> {
        let (Val::Item(s), Val::Item(p)) = (self.value(e, recv)?, self.value(e, prefix)?) else {
            return Err(unsupported("startsWith() of anything but values read"));
        };
        let both = self.tag_in(s, &[super::tag::STR]);
        let p_str = self.tag_in(p, &[super::tag::STR]);
        let both = self.b.ins().band(both, p_str);
        self.continue_if(both);
        self.reads_strings = true;
        let fits = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, s.len, p.len);
        let bytes = self.b.create_block();
        let join = self.b.create_block();
        let res = self.b.append_block_param(join, types::I8);
        self.b.ins().brif(fits, bytes, &[], join, &[fits.into()]);
        self.switch_to(bytes);
        // A suffix's bytes start `p.len` before the end.
        let from = if &*c.name == "endsWith" {
            let end = self.b.ins().iadd(s.ptr, s.len);
            self.b.ins().isub(end, p.len)
        } else {
            s.ptr
        };
        let same = self.bytes_at(from, p.ptr, p.len);
        self.b.ins().jump(join, &[same.into()]);
        self.switch_to(join);
        Ok(res)
    }

    /// `needle in dict.keys()` (or `.values()`) of values read: whether a
    /// key (value) of the dict equals `needle`, compared as `in` over a
    /// list read compares ([`Gen::items_equal`]); anything but a dict
    /// deopts (the interpreter's error).
    pub(super) fn member_of_view(
        &mut self,
        e: &Expr,
        needle: Item,
        dict: NodeId,
        kind: u64,
    ) -> Result<Ssa, Unsupported> {
        if self.fields.is_none() {
            return Err(unsupported("`in` over keys() or values() here"));
        }
        let Val::Item(d) = self.value(e, dict)? else {
            return Err(unsupported(
                "keys() or values() of anything but a value read",
            ));
        };
        self.reads_strings = true;
        self.scan_of(d, kind, false, |g, x| Ok(g.items_equal(needle, x)))
    }

    /// `dict.containsKey(key)` of a dict read and a key read or constant:
    /// whether a key equals it (the dict's lookup agrees with `=` on the
    /// keys: equal values hash alike), compared as `in` compares; anything
    /// but a dict deopts (the interpreter's error).
    pub(super) fn contains_key(&mut self, e: &Expr, c: &Call) -> Result<Ssa, Unsupported> {
        let [dict, key] = e.list(c.pos) else {
            return Err(unsupported("this call of containsKey()"));
        };
        if self.fields.is_none() {
            return Err(unsupported("containsKey() here"));
        }
        let Val::Item(d) = self.value(e, *dict)? else {
            return Err(unsupported("containsKey() of anything but a value read"));
        };
        let keys = super::super::elements::KEYS;
        match self.value(e, *key)? {
            Val::Item(k) => {
                self.reads_strings = true;
                self.scan_of(d, keys, false, |g, x| Ok(g.items_equal(k, x)))
            }
            Val::Const(k) => self.scan_of(d, keys, false, |g, x| g.compare(x, BinOp::Eq, k)),
            Val::Int(_) => Err(unsupported("containsKey() of arithmetic")),
        }
    }

    /// `len(dict.keys())` (or `.values()`) of a dict read: its length;
    /// anything but a dict deopts.
    pub(super) fn len_of_view<'e>(
        &mut self,
        e: &'e Expr,
        view: NodeId,
    ) -> Result<Val<'e>, Unsupported> {
        let (dict, _) = dict_view(e, view).expect("checked by the caller");
        let Val::Item(d) = self.value(e, dict)? else {
            return Err(unsupported(
                "keys() or values() of anything but a value read",
            ));
        };
        let is_dict = self.tag_in(d, &[super::tag::DICT]);
        self.continue_if(is_dict);
        Ok(Val::Int(d.len))
    }
}
