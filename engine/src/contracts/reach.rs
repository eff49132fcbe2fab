//! What a contract needs besides the value it checks ([`Reach`]), read
//! from its IR, and the names its expressions call.

use std::sync::Arc;

use compiler::murano::ir::{self, ContractKind, LinkKind};
use runtime::registry::Registry;

use super::Reach;

/// The reach of an IR contract; collects the names its expressions call.
pub(super) fn reach(c: &ir::Contract, reg: &Registry, names: &mut Vec<Arc<str>>) -> Reach {
    match &c.kind {
        ContractKind::Any | ContractKind::Null | ContractKind::Const(_) => Reach::Value,
        ContractKind::List { items, .. } => items
            .iter()
            .map(|c| reach(c, reg, names))
            .max()
            .unwrap_or(Reach::Value),
        ContractKind::Dict(items) => items
            .iter()
            .map(|(k, v)| {
                let k = match k {
                    ir::DictKey::Const(_) => Reach::Value,
                    ir::DictKey::Contract(k) => reach(k, reg, names),
                };
                k.max(reach(v, reg, names))
            })
            .max()
            .unwrap_or(Reach::Value),
        ContractKind::Chain { links, .. } => chain_reach(links, reg, names),
        ContractKind::Expr(y) | ContractKind::Static(y) => {
            if value_only(&y.ast, reg, names) {
                Reach::Value
            } else {
                Reach::Execution
            }
        }
    }
}

fn chain_reach(links: &[ir::Link], reg: &Registry, names: &mut Vec<Arc<str>>) -> Reach {
    for l in links {
        names.push(l.kind.method().into());
    }
    let local =
        |e: &compiler::yaql::ast::Expr, names: &mut Vec<Arc<str>>| value_only(e, reg, names);
    if let Some((first, rest)) = links.split_first() {
        if let LinkKind::Class {
            name,
            default,
            version,
        } = &first.kind
        {
            // A version spec is not checked by the engine's `class()`: the
            // whole chain runs as YAQL.
            let plain = version.is_none()
                && local(&name.expr, names)
                && default.as_ref().is_none_or(|d| local(&d.expr, names))
                && rest.iter().all(|l| l.kind == LinkKind::NotNull);
            return if plain {
                Reach::Classes
            } else {
                Reach::Execution
            };
        }
    }
    let value = links.iter().all(|l| match &l.kind {
        LinkKind::Int | LinkKind::String | LinkKind::Bool | LinkKind::NotNull => true,
        LinkKind::Check {
            predicate, message, ..
        } => local(predicate, names) && message.as_ref().is_none_or(|m| local(m, names)),
        _ => false,
    });
    if value {
        Reach::Value
    } else {
        Reach::Execution
    }
}

/// True when `e` reads only `$` and calls only the YAQL library (no engine
/// or contract function); collects the names it calls.
fn value_only(e: &compiler::yaql::ast::Expr, reg: &Registry, names: &mut Vec<Arc<str>>) -> bool {
    use compiler::yaql::ast::{Arg, ExprKind as K};
    let call = |name: &str, names: &mut Vec<Arc<str>>| {
        names.push(name.into());
        reg.get(name).is_none_or(|set| {
            set.overloads
                .iter()
                .all(|o| !o.id.starts_with("murano.") && !o.id.starts_with("contracts."))
        })
    };
    let args = |a: &[Arg], names: &mut Vec<Arc<str>>| {
        a.iter().all(|a| match a {
            Arg::Pos(x) | Arg::Named(_, x) => value_only(x, reg, names),
            Arg::Mapping(k, x) => value_only(k, reg, names) && value_only(x, reg, names),
            Arg::Skip => true,
        })
    };
    match &e.kind {
        K::Lit(_) | K::Keyword(_) | K::NsName(..) => true,
        K::Var(v) => v.is_empty(),
        K::Call(name, a) => call(name, names) && args(a, names),
        K::Method(recv, name, a) => {
            call(name, names) && value_only(recv, reg, names) && args(a, names)
        }
        K::Op(name, xs) => call(name, names) && xs.iter().all(|x| value_only(x, reg, names)),
        K::Attr(recv, _) => value_only(recv, reg, names),
        K::Dot(a, b) | K::SafeDot(a, b) => value_only(a, reg, names) && value_only(b, reg, names),
        K::Index(recv, a) => value_only(recv, reg, names) && args(a, names),
        K::List(a) | K::Map(a) => args(a, names),
        K::Delegate(..) => false,
    }
}
