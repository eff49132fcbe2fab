//! Reads of a record's fields made once: a field the code has read is not
//! read again (through the field helper) where that first read dominates.
//!
//! An expression names a field as often as it tests it
//! (`isInteger($.get(port)) and $.port > 0 and $.port < 65536`): each
//! name was a call of the field helper. The code generator now keeps the
//! reads it made while the blocks it emits are dominated by the block of
//! each read: a block entered from [`Gen::continue_if`] or from the
//! operand before it in an `and`/`or` chain ([`Gen::chain_next`]). Any
//! other block (a join, a loop) forgets them all ([`Gen::switch_to`]).
//! Dict values do not change while the code runs, so a read made once
//! stands for every later one of the same key on the same value.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{Block, InstBuilder, Value as Ssa};
use runtime::Value;

use super::{Gen, Item};

/// A field read the code made: of `base` (a value's SSA), key `k` of the
/// code's keys, with `default` when `$.get(name, default)` (else `$.x`);
/// the helper's status and what it read.
pub(super) struct Read {
    base: Ssa,
    k: usize,
    default: Option<Value>,
    status: Ssa,
    item: Item,
}

impl Gen<'_> {
    /// Goes on in `block`, which the current block does not dominate (a
    /// join, a loop's head or exit): the reads made so far are forgotten.
    pub(super) fn switch_to(&mut self, block: Block) {
        self.reads.clear();
        self.b.switch_to_block(block);
    }

    /// Goes on in `block`, entered only from the current block: what was
    /// read stays read.
    pub(super) fn chain_next(&mut self, block: Block) {
        self.b.switch_to_block(block);
    }

    /// The value of key `k` of `base` read by `kind` (`default` of a
    /// `$.get`), when an earlier read answers it: a field read (`$.x`,
    /// which deopts when the key is missing) answers every later read of
    /// the key, and a `$.get` answers a later one with the same default,
    /// or a field read once its status shows the key found.
    pub(super) fn read_before(
        &mut self,
        base: Ssa,
        k: usize,
        kind: u64,
        default: Option<&Value>,
    ) -> Option<Item> {
        if !cacheable(kind) {
            return None;
        }
        let r = self.reads.iter().find(|r| r.base == base && r.k == k)?;
        let (item, status) = (r.item, r.status);
        match (&r.default, default) {
            (None, _) => Some(item),
            // The same default, strictly (`1` is not `1.0` or `true`).
            (Some(d), Some(want))
                if std::mem::discriminant(d) == std::mem::discriminant(want) && d == want =>
            {
                Some(item)
            }
            (Some(_), None) => {
                let found = self.b.ins().icmp_imm_s(IntCC::Equal, status, 1);
                self.continue_if(found);
                Some(item)
            }
            _ => None,
        }
    }

    /// Keeps a read just made (see [`Gen::read_before`]).
    pub(super) fn remember_read(
        &mut self,
        base: Ssa,
        k: usize,
        kind: u64,
        default: Option<&Value>,
        status: Ssa,
        item: Item,
    ) {
        if cacheable(kind) {
            self.reads.push(Read {
                base,
                k,
                default: default.cloned(),
                status,
                item,
            });
        }
    }
}

/// Field reads of dicts (`$.x`, `$.get(x)`); an object's property or
/// attribute goes through the engine every time.
fn cacheable(kind: u64) -> bool {
    kind == super::super::read::FIELD || kind == super::super::read::GET
}
