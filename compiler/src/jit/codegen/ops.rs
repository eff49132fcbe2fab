//! Scalar operations of the generated code that loop or branch on their
//! own: Python's integer `//` and `%`, a string's length in characters,
//! and equality of two scalars read (strings by their bytes).

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Value as Ssa};

use super::{tag, Gen, Item};
use crate::ir::BinOp;

impl Gen<'_> {
    /// The number of characters of the string in `it` (Python's `len()`:
    /// code points), counting the bytes that start one; 0 for anything
    /// else, whose `len` is its length.
    pub(super) fn str_chars(&mut self, it: Item) -> Ssa {
        let is_str = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, it.tag, tag::STR as i64);
        let zero = self.b.ins().iconst(types::I64, 0);
        let bytes = self.b.ins().select(is_str, it.len, zero);
        let head = self.b.create_block();
        let step = self.b.create_block();
        let exit = self.b.create_block();
        let i = self.b.append_block_param(head, types::I64);
        let n = self.b.append_block_param(head, types::I64);
        let res = self.b.append_block_param(exit, types::I64);
        self.b.ins().jump(head, &[zero.into(), zero.into()]);
        self.switch_to(head);
        let done = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, i, bytes);
        self.b.ins().brif(done, exit, &[n.into()], step, &[]);
        self.switch_to(step);
        let at = self.b.ins().iadd(it.ptr, i);
        let flags = MemFlagsData::new().with_notrap().with_readonly();
        let byte = self.b.ins().load(types::I8, flags, at, 0);
        // A continuation byte is 0b10xxxxxx.
        let top = self.b.ins().band_imm_u(byte, 0xC0);
        let starts = self.b.ins().icmp_imm_s(IntCC::NotEqual, top, 0x80);
        let starts = self.b.ins().uextend(types::I64, starts);
        let n2 = self.b.ins().iadd(n, starts);
        let i2 = self.b.ins().iadd_imm_s(i, 1);
        self.b.ins().jump(head, &[i2.into(), n2.into()]);
        self.switch_to(exit);
        res
    }

    /// Python's `a // b` (`/` of two integers) or `a % b` (`mod`): the
    /// quotient rounded down, the remainder with the divisor's sign. A
    /// zero divisor (the interpreter's ZeroDivisionError) and `MIN // -1`
    /// (a big integer) deopt.
    pub(super) fn int_div_mod(&mut self, op: BinOp, a: Ssa, b: Ssa) -> Ssa {
        let nonzero = self.b.ins().icmp_imm_s(IntCC::NotEqual, b, 0);
        self.continue_if(nonzero);
        let minus_one = self.b.ins().icmp_imm_s(IntCC::Equal, b, -1);
        if op == BinOp::Div {
            let min = self.b.ins().icmp_imm_s(IntCC::Equal, a, i64::MIN);
            let overflow = self.b.ins().band(min, minus_one);
            let ok = self.b.ins().icmp_imm_s(IntCC::Equal, overflow, 0);
            self.continue_if(ok);
        }
        // `x % -1` is 0, and `MIN % -1` would trap: divide by 1 instead.
        let one = self.b.ins().iconst(types::I64, 1);
        let d = self.b.ins().select(minus_one, one, b);
        let r = self.b.ins().srem(a, d);
        // Rounded toward zero; a remainder whose sign differs from the
        // divisor's moves one step down.
        let r_nonzero = self.b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
        let signs = self.b.ins().bxor(r, b);
        let differ = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, signs, 0);
        let adjust = self.b.ins().band(r_nonzero, differ);
        if op == BinOp::Mod {
            let moved = self.b.ins().iadd(r, b);
            return self.b.ins().select(adjust, moved, r);
        }
        let q = self.b.ins().sdiv(a, b);
        let down = self.b.ins().iadd_imm_s(q, -1);
        self.b.ins().select(adjust, down, q)
    }

    /// `a = b` of two scalars read, with Python's rules: strings by their
    /// bytes, `null` only to `null`, booleans and integers by value (`true
    /// = 1`), floats to floats; values of different kinds are unequal. An
    /// integer against a float, a big integer, a container or anything
    /// else deopts.
    pub(super) fn items_equal(&mut self, a: Item, b: Item) -> Ssa {
        let hard = |g: &mut Self, it: Item| {
            let big = g.tag_in(it, &[tag::BIGINT]);
            let other = g.b.ins().icmp_imm_u(
                IntCC::UnsignedGreaterThanOrEqual,
                it.tag,
                tag::CONTAINER as i64,
            );
            g.b.ins().bor(big, other)
        };
        let (ha, hb) = (hard(self, a), hard(self, b));
        let either = self.b.ins().bor(ha, hb);
        let easy = self.b.ins().icmp_imm_s(IntCC::Equal, either, 0);
        self.continue_if(easy);
        // Integers and booleans compare by value; an integer or boolean
        // against a float is the interpreter's.
        let int_like = |g: &mut Self, it: Item| g.tag_in(it, &[tag::INT, tag::BOOL]);
        let (ia, ib) = (int_like(self, a), int_like(self, b));
        let (fa, fb) = (self.tag_in(a, &[tag::FLOAT]), self.tag_in(b, &[tag::FLOAT]));
        let mixed1 = self.b.ins().band(ia, fb);
        let mixed2 = self.b.ins().band(fa, ib);
        let mixed = self.b.ins().bor(mixed1, mixed2);
        let plain = self.b.ins().icmp_imm_s(IntCC::Equal, mixed, 0);
        self.continue_if(plain);
        let strings = self.b.create_block();
        let scalars = self.b.create_block();
        let join = self.b.create_block();
        let res = self.b.append_block_param(join, types::I8);
        let (sa, sb) = (self.tag_in(a, &[tag::STR]), self.tag_in(b, &[tag::STR]));
        let both = self.b.ins().band(sa, sb);
        self.b.ins().brif(both, strings, &[], scalars, &[]);

        self.switch_to(strings);
        let same = self.bytes_equal(a, b);
        self.b.ins().jump(join, &[same.into()]);

        self.switch_to(scalars);
        let ints = self.b.ins().band(ia, ib);
        let same_int = self.b.ins().icmp(IntCC::Equal, a.bits, b.bits);
        let int_eq = self.b.ins().band(ints, same_int);
        let floats = self.b.ins().band(fa, fb);
        let (xa, xb) = (
            self.b
                .ins()
                .bitcast(types::F64, MemFlagsData::new(), a.bits),
            self.b
                .ins()
                .bitcast(types::F64, MemFlagsData::new(), b.bits),
        );
        // A NaN is the interpreter's (what it is equal to is its rule).
        let unordered = self.b.ins().fcmp(FloatCC::Unordered, xa, xb);
        let nan = self.b.ins().band(floats, unordered);
        let no_nan = self.b.ins().icmp_imm_s(IntCC::Equal, nan, 0);
        self.continue_if(no_nan);
        let same_float = self.b.ins().fcmp(FloatCC::Equal, xa, xb);
        let float_eq = self.b.ins().band(floats, same_float);
        let (na, nb) = (self.tag_in(a, &[tag::NULL]), self.tag_in(b, &[tag::NULL]));
        let nulls = self.b.ins().band(na, nb);
        let eq = self.b.ins().bor(int_eq, float_eq);
        let eq = self.b.ins().bor(eq, nulls);
        self.b.ins().jump(join, &[eq.into()]);
        self.switch_to(join);
        res
    }

    /// Whether the strings in `a` and `b` have the same bytes.
    fn bytes_equal(&mut self, a: Item, b: Item) -> Ssa {
        let compare = self.b.create_block();
        let exit = self.b.create_block();
        let res = self.b.append_block_param(exit, types::I8);
        let same_len = self.b.ins().icmp(IntCC::Equal, a.len, b.len);
        let no = self.b.ins().iconst(types::I8, 0);
        self.b
            .ins()
            .brif(same_len, compare, &[], exit, &[no.into()]);
        self.chain_next(compare);
        let same = self.bytes_at(a.ptr, b.ptr, a.len);
        self.b.ins().jump(exit, &[same.into()]);
        self.switch_to(exit);
        res
    }

    /// Whether the `n` bytes at `a` are those at `b`.
    pub(super) fn bytes_at(&mut self, a: Ssa, b: Ssa, n: Ssa) -> Ssa {
        let head = self.b.create_block();
        let step = self.b.create_block();
        let exit = self.b.create_block();
        let i = self.b.append_block_param(head, types::I64);
        let res = self.b.append_block_param(exit, types::I8);
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b.ins().jump(head, &[zero.into()]);
        self.switch_to(head);
        let done = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, i, n);
        let yes = self.b.ins().iconst(types::I8, 1);
        self.b.ins().brif(done, exit, &[yes.into()], step, &[]);
        self.switch_to(step);
        let flags = MemFlagsData::new().with_notrap().with_readonly();
        let (pa, pb) = (self.b.ins().iadd(a, i), self.b.ins().iadd(b, i));
        let ca = self.b.ins().load(types::I8, flags, pa, 0);
        let cb = self.b.ins().load(types::I8, flags, pb, 0);
        let same = self.b.ins().icmp(IntCC::Equal, ca, cb);
        let next = self.b.ins().iadd_imm_s(i, 1);
        let no = self.b.ins().iconst(types::I8, 0);
        self.b
            .ins()
            .brif(same, head, &[next.into()], exit, &[no.into()]);
        self.switch_to(exit);
        res
    }
}
