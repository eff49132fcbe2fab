//! Plans: what the machine code of a class's property contracts can pass
//! on values read in place, without engine values.
//!
//! A caller holding records in another form (Python dicts) walks each with
//! an [`ObjectPlan`] through a [`View`] of its data. A record the plan
//! shows to pass has no violation: it is exactly a record for which
//! [`crate::model::check_properties`] finds none on its first, compiled
//! pass (every contract [`Contract::holds`]). Anything else — a value a
//! chain cannot pass, a coercion, an expression contract, a container
//! under a chain, a key the plan does not know — is "ask": the caller
//! checks that record the full way, so answers and messages are the
//! checker's.

use std::sync::Arc;

use compiler::jit::{Borrowed, Native};
use compiler::murano::ir::LinkKind;
use compiler::murano::PropertyUsage;
use runtime::Value;

use super::check::{intercepted, length_error, native_of, Check, DictKey};
use super::Contract;
use crate::class::Class;
use crate::executor::Executor;

/// A record, or a value in it, as the caller holds it.
pub trait View: Sized {
    /// The value as a compiled chain reads it; `None` when it is of a kind
    /// the caller cannot describe (only the checker can say). A list or a
    /// dict is [`Borrowed::List`] or [`Borrowed::Dict`] with its length.
    fn read(&self) -> Option<Borrowed<'_>>;
    /// Of a dict: the value of key `slot` ([`ObjectPlan::keys`]),
    /// `Some(None)` when it has no such key; `None` when the caller cannot
    /// tell (only the checker can say).
    fn field(&self, slot: usize) -> Option<Option<Self>>;
    /// Of a list: item `i`.
    fn item(&self, i: usize) -> Option<Self>;
    /// Of a list of `n` items: true when `chain` passes every one (a
    /// caller may read them in batches).
    fn items_pass(&self, n: usize, chain: &Native) -> bool {
        (0..n).all(|i| {
            self.item(i).is_some_and(|x| {
                x.read()
                    .is_some_and(|b| scalar(b) && chain.passes_borrowed(b))
            })
        })
    }
}

/// True for a value a chain reads as a scalar (what it passes is then
/// all there is to it).
pub fn scalar(b: Borrowed<'_>) -> bool {
    !matches!(b, Borrowed::List(_) | Borrowed::Dict(_) | Borrowed::Other)
}

/// What a plan does with one value.
enum Plan {
    /// Any scalar (`$`, no contract).
    Any,
    /// A chain's machine code, on a scalar.
    Chain(Native),
    /// A list contract of one item contract.
    List {
        item: Box<Plan>,
        min: i64,
        max: Option<i64>,
    },
    /// A dict contract of fixed keys: each key's plan, and whether a
    /// missing key (null) passes.
    Dict(Vec<Entry>),
    /// Only the checker can say.
    Ask,
}

/// A key of a dict contract, or a property, in a plan.
struct Entry {
    /// The key's slot in [`ObjectPlan::keys`].
    slot: usize,
    /// What its value must meet when present.
    plan: Plan,
    /// A missing key passes.
    absent: bool,
}

/// The plan of a class's property contracts for records checked in place
/// ([`crate::model::check_properties`]).
pub struct ObjectPlan {
    keys: Vec<Arc<str>>,
    /// The keys as engine strings (a property's as the class holds it),
    /// for reading engine dicts without making a key.
    key_values: Vec<Value>,
    /// No part of the plan is [`Plan::Ask`] or a `class()` chain (which
    /// only a host can pass): on engine values the plan then decides
    /// what the checker's compiled pass decides.
    complete: bool,
    props: Vec<Entry>,
    /// The properties' keys as the class holds them (interned).
    names: Vec<Value>,
    /// Whether each property has a default.
    defaults: Vec<bool>,
}

/// What building a plan shares: the executor (for the catalogue's JIT
/// mode and extension methods), whether to compile chains now, and the
/// keys met so far.
struct Build<'a> {
    ex: &'a Executor,
    compile: bool,
    keys: Vec<Arc<str>>,
    key_values: Vec<Value>,
    complete: bool,
}

impl Build<'_> {
    /// The slot of `key` (a string value).
    fn slot(&mut self, key: &Value) -> Option<usize> {
        let s = key.as_str()?;
        Some(match self.keys.iter().position(|k| &**k == s) {
            Some(i) => i,
            None => {
                self.keys.push(s.into());
                // Interned: a dict loaded on this thread answers it by
                // pointer.
                self.key_values.push(Value::Str(runtime::value::intern(s)));
                self.keys.len() - 1
            }
        })
    }

    fn plan(&mut self, c: &Check) -> Plan {
        let plan = self.plan_of(c);
        if matches!(plan, Plan::Ask) {
            self.complete = false;
        }
        plan
    }

    fn plan_of(&mut self, c: &Check) -> Plan {
        match c {
            Check::Any => Plan::Any,
            Check::Chain { steps, tier, .. } => {
                if intercepted(self.ex, steps, &Value::Null) {
                    return Plan::Ask;
                }
                if steps
                    .iter()
                    .any(|s| matches!(s.kind, LinkKind::Class { .. }))
                {
                    self.complete = false;
                }
                let mode = self.ex.catalog().jit();
                let native = if self.compile && mode != compiler::jit::Mode::Off {
                    tier.now(|| native_of(steps))
                } else {
                    tier.get(mode, || native_of(steps))
                };
                native.map_or(Plan::Ask, |n| Plan::Chain(n.clone()))
            }
            Check::List(cs, min, max) => match &cs[..] {
                [item] => Plan::List {
                    item: Box::new(self.plan(item)),
                    min: *min,
                    max: *max,
                },
                _ => Plan::Ask,
            },
            Check::Dict(items) => {
                let mut entries = Vec::with_capacity(items.len());
                for (k, c) in items {
                    let DictKey::Const(key @ Value::Str(_)) = k else {
                        return Plan::Ask;
                    };
                    let Some(slot) = self.slot(key) else {
                        return Plan::Ask;
                    };
                    if entries.iter().any(|e: &Entry| e.slot == slot) {
                        return Plan::Ask;
                    }
                    entries.push(Entry {
                        slot,
                        plan: self.plan(c),
                        absent: c.holds(self.ex, &runtime::value::NULL),
                    });
                }
                Plan::Dict(entries)
            }
            Check::Const(_) | Check::Expr(..) => Plan::Ask,
        }
    }
}

impl ObjectPlan {
    /// The plan of `class`'s property contracts, its chains compiled now
    /// when `compile` (and the JIT is on), else only if the JIT mode has
    /// compiled them by now; `None` when no record could pass it (package
    /// configuration, configuration properties, a property named twice).
    pub fn of(ex: &Executor, class: &Arc<Class>, compile: bool) -> Option<ObjectPlan> {
        let mut b = Build {
            ex,
            compile,
            keys: Vec::new(),
            key_values: Vec::new(),
            complete: true,
        };
        let mut props: Vec<Entry> = Vec::new();
        let mut names = Vec::new();
        let mut defaults = Vec::new();
        for (cls, p) in class.init_order() {
            if !cls.package.configs.is_empty() || p.usage == PropertyUsage::Config {
                return None;
            }
            let contract = Contract::of(&p.contract);
            let slot = b.slot(&p.key)?;
            if props.iter().any(|e| e.slot == slot) {
                return None;
            }
            // As `model::all_hold` decides a property that is not given,
            // or a runtime one (whose given value is not read: such a
            // record is the checker's).
            let runtime = p.usage == PropertyUsage::Runtime;
            let absent = if runtime && !p.has_default {
                true
            } else {
                p.default.is_none() && contract.holds(ex, &runtime::value::NULL)
            };
            let plan = if runtime {
                b.complete = false;
                Plan::Ask
            } else {
                b.plan(&contract.check)
            };
            props.push(Entry { slot, plan, absent });
            names.push(p.key.clone());
            defaults.push(p.default.is_some() || p.has_default);
        }
        Some(ObjectPlan {
            keys: b.keys,
            key_values: b.key_values,
            complete: b.complete,
            props,
            names,
            defaults,
        })
    }

    /// The keys the plan reads, by slot (what [`View::field`] is asked).
    pub fn keys(&self) -> &[Arc<str>] {
        &self.keys
    }

    /// True when the plan shows that `record`, a dict of `len` entries of
    /// which `other` are not properties (a model's `?` header, checked by
    /// the caller), has no violation; false: check it the full way.
    pub fn holds<V: View>(&self, record: &V, len: usize, other: usize) -> bool {
        entries_hold(&self.props, record, len.checked_sub(other))
    }

    /// Whether the plan decides engine values as the checker's compiled
    /// pass does ([`ObjectPlan::properties_hold`]).
    pub fn complete(&self) -> bool {
        self.complete
    }

    /// Of a complete plan, on the properties `props` of a definition (keys
    /// that are no properties are not read): whether machine code shows
    /// that none has a violation, and bit `i` set when property `i` (of
    /// the first 64, in initialization order) has none. This is what
    /// [`crate::model::check_properties`]'s compiled pass decides, in one
    /// flat walk; anything else is checked the full way.
    pub fn properties_hold(&self, props: &runtime::Dict) -> (bool, u64) {
        let mut all = true;
        let mut bits = 0u64;
        for (i, e) in self.props.iter().enumerate() {
            let ok = match runtime::value::get_interned(props, &self.key_values[e.slot]) {
                Some(value) => e.plan.holds(&ValueView { value, plan: self }),
                None => e.absent,
            };
            all &= ok;
            if ok && i < 64 {
                bits |= 1 << i;
            }
        }
        (all, bits)
    }

    /// What the plan shows of each property of `record` (see
    /// [`ObjectPlan::holds`]): a record of which only some properties
    /// pass can be checked with those skipped
    /// ([`crate::model::check_properties_except`]), their values unread.
    pub fn passing<V: View>(&self, record: &V, len: usize, other: usize) -> Passing {
        let mut bits = 0u64;
        let mut found = 0;
        let mut all = true;
        for (i, e) in self.props.iter().enumerate() {
            let ok = match record.field(e.slot) {
                Some(Some(v)) => {
                    found += 1;
                    e.plan.holds(&v)
                }
                Some(None) => e.absent,
                None => false,
            };
            all &= ok;
            if ok && i < 64 {
                bits |= 1 << i;
            }
        }
        let only = len.checked_sub(other) == Some(found);
        Passing {
            all: all && only,
            only,
            bits,
        }
    }

    /// Of a property named `key`: its key as the class holds it, and
    /// whether `passing` shows it to pass.
    pub fn property(&self, passing: &Passing, key: &str) -> Option<(&Value, bool)> {
        let i = (self.props.iter()).position(|e| *self.keys[e.slot] == *key)?;
        Some((&self.names[i], i < 64 && passing.bits & (1 << i) != 0))
    }

    /// Each property, in initialization order: its slot in
    /// [`ObjectPlan::keys`], its key as the class holds it, whether
    /// `passing` shows it to pass, and whether it has a default (so that
    /// a record checked without its value must still give the key).
    pub fn properties<'a>(
        &'a self,
        passing: &'a Passing,
    ) -> impl Iterator<Item = (usize, &'a Value, bool, bool)> + 'a {
        (self.props.iter().zip(&self.names).zip(&self.defaults))
            .enumerate()
            .map(|(i, ((e, name), d))| {
                let ok = i < 64 && passing.bits & (1 << i) != 0;
                (e.slot, name, ok, *d)
            })
    }

    /// The keys of the properties `passing` shows to pass.
    pub fn passed_keys(&self, passing: &Passing) -> Vec<Value> {
        (self.names.iter().take(64).enumerate())
            .filter(|(i, _)| passing.bits & (1 << i) != 0)
            .map(|(_, k)| k.clone())
            .collect()
    }
}

/// What a plan shows of a record's properties ([`ObjectPlan::passing`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Passing {
    /// The record has no violation.
    pub all: bool,
    /// The record has no other keys than properties (and the `other`
    /// ones), as far as the plan could read.
    pub only: bool,
    /// Bit `i`: property `i` (of the first 64, in initialization order)
    /// meets its contract.
    bits: u64,
}

impl Passing {
    /// Bit `i`: property `i` passes (of the first 64).
    pub fn bits(&self) -> u64 {
        self.bits
    }
}

/// True when every entry holds on dict `d` and `d` has no other key than
/// the entries' (its length `len`; `None`: it has more than it may).
fn entries_hold<V: View>(entries: &[Entry], d: &V, len: Option<usize>) -> bool {
    let Some(len) = len else {
        return false;
    };
    let mut found = 0;
    for e in entries {
        match d.field(e.slot) {
            Some(Some(v)) => {
                found += 1;
                if !e.plan.holds(&v) {
                    return false;
                }
            }
            Some(None) if e.absent => {}
            Some(None) | None => return false,
        }
    }
    // Any other key could hold what only the checker reads.
    found == len
}

impl Plan {
    // Inlined into the walks that call it (a call per property was a
    // tenth of a record's walk in the Python binding).
    #[inline(always)]
    fn holds<V: View>(&self, v: &V) -> bool {
        let Some(b) = v.read() else {
            return false;
        };
        match (self, b) {
            (Plan::Ask, _) | (_, Borrowed::Other) => false,
            (Plan::Any, b) => !matches!(b, Borrowed::List(_) | Borrowed::Dict(_)),
            (Plan::Chain(_), Borrowed::List(_) | Borrowed::Dict(_)) => false,
            (Plan::Chain(n), b) => n.passes_borrowed(b),
            (Plan::List { min, max, .. }, Borrowed::Null) => length_error(0, *min, *max).is_none(),
            (Plan::List { item, min, max }, Borrowed::List(n)) => {
                length_error(n, *min, *max).is_none()
                    && match &**item {
                        Plan::Chain(chain) => v.items_pass(n, chain),
                        item => (0..n).all(|i| v.item(i).is_some_and(|x| item.holds(&x))),
                    }
            }
            (Plan::Dict(entries), Borrowed::Null) => entries.iter().all(|e| e.absent),
            (Plan::Dict(entries), Borrowed::Dict(n)) => entries_hold(entries, v, Some(n)),
            (Plan::List { .. } | Plan::Dict(_), _) => false,
        }
    }
}

/// A view of engine values (for tests, and callers that hold them).
pub struct ValueView<'a> {
    value: &'a Value,
    plan: &'a ObjectPlan,
}

impl<'a> ValueView<'a> {
    /// `value`, whose dicts are read with the keys of `plan`.
    pub fn new(value: &'a Value, plan: &'a ObjectPlan) -> ValueView<'a> {
        ValueView { value, plan }
    }
}

impl View for ValueView<'_> {
    fn read(&self) -> Option<Borrowed<'_>> {
        Some(match self.value {
            Value::Null => Borrowed::Null,
            Value::Bool(b) => Borrowed::Bool(*b),
            Value::Int(i) => Borrowed::Int(*i),
            Value::BigInt(_) => Borrowed::BigInt,
            Value::Float(f) => Borrowed::Float(*f),
            Value::Str(s) => Borrowed::Str(s),
            Value::List(l) => Borrowed::List(l.len()),
            Value::Dict(d) => Borrowed::Dict(d.len()),
            _ => Borrowed::Other,
        })
    }

    fn field(&self, slot: usize) -> Option<Option<Self>> {
        let Value::Dict(d) = self.value else {
            return None;
        };
        let value = runtime::value::get_interned(d, &self.plan.key_values[slot]);
        Some(value.map(|value| ValueView {
            value,
            plan: self.plan,
        }))
    }

    fn item(&self, i: usize) -> Option<Self> {
        let Value::List(l) = self.value else {
            return None;
        };
        Some(ValueView {
            value: l.get(i)?,
            plan: self.plan,
        })
    }

    fn items_pass(&self, n: usize, chain: &Native) -> bool {
        // In batches: the machine code loops over the items itself.
        let Value::List(l) = self.value else {
            return false;
        };
        let scalars = l.iter().all(|value| {
            let v = ValueView {
                value,
                plan: self.plan,
            };
            v.read().is_some_and(scalar)
        });
        l.len() == n && scalars && chain.first_failing(l) == n
    }
}
