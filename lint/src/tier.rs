//! What the compiled tier (Cranelift) takes of a package: every part of
//! its classes' contracts that runs code (property and argument contract
//! chains and expressions) and every condition of its method bodies
//! (`If`, `While`, `Switch` cases, `Match` values), compiled to machine
//! code or interpreted with the reason (`muranopl package check
//! --jit-coverage`).

use engine::contracts::TierCoverage;

use crate::check::CheckReport;

/// One part of a contract, or a condition of a method body, and what the
/// tier does with it.
pub struct Part {
    /// The class declaring it.
    pub class: String,
    /// `property NAME`, `method NAME argument NAME` or `method NAME
    /// condition`.
    pub what: String,
    /// A condition of a method body (else a contract part).
    pub condition: bool,
    /// Where, its source, compiled or why not.
    pub tier: TierCoverage,
}

/// The parts of the contracts of every class the package compiled, in
/// class order, then properties, then methods by name.
pub fn coverage(report: &CheckReport) -> Vec<Part> {
    let Some((_, ex)) = &report.compiled else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for name in &report.ok {
        let Ok(class) = ex.class(name) else { continue };
        let mut push = |what: String, code: &engine::ContractCode| {
            for tier in engine::contracts::Contract::of(code).tier_coverage() {
                out.push(Part {
                    class: name.clone(),
                    what: what.clone(),
                    condition: false,
                    tier,
                });
            }
        };
        for p in &class.props {
            push(format!("property {}", p.name), &p.contract);
        }
        let mut methods: Vec<_> = (class.methods.values())
            .filter(|m| *m.class == *class.key)
            .collect();
        methods.sort_by(|a, b| a.name.cmp(&b.name));
        for m in &methods {
            for a in &m.args {
                push(
                    format!("method {} argument {}", m.name, a.name),
                    &a.contract,
                );
            }
        }
        for m in &methods {
            for tier in m.body.condition_coverage() {
                out.push(Part {
                    class: name.clone(),
                    what: format!("method {} condition", m.name),
                    condition: true,
                    tier,
                });
            }
        }
    }
    out
}

/// The share compiled of the parts `which` takes: (compiled, all).
pub fn share_of(parts: &[Part], which: impl Fn(&Part) -> bool) -> (usize, usize) {
    let parts: Vec<&Part> = parts.iter().filter(|p| which(p)).collect();
    let compiled = parts.iter().filter(|p| p.tier.compiled.is_ok()).count();
    (compiled, parts.len())
}

/// The share compiled: (compiled, all).
pub fn share(parts: &[Part]) -> (usize, usize) {
    let compiled = parts.iter().filter(|p| p.tier.compiled.is_ok()).count();
    (compiled, parts.len())
}
