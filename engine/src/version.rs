//! Versions and type strings: SemVer versions with missing parts taken as
//! zero, murano's version specs (`>=1.0,<2`, `=1.2`, `1.2.*`), the type
//! strings `Name/version@package` of object models, and full names.

use semver::Version;
use std::fmt;

/// Parses a version with missing SemVer parts taken as zero (`1` ->
/// `1.0.0`, `1.3` -> `1.3.0`).
pub fn parse_version(text: &str) -> std::result::Result<Version, String> {
    let t = text.trim();
    let (core, rest) = match t.find(['-', '+']) {
        Some(i) => t.split_at(i),
        None => (t, ""),
    };
    let parts: Vec<&str> = core.split('.').collect();
    if parts.is_empty()
        || parts.len() > 3
        || parts
            .iter()
            .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(format!("invalid version \"{text}\""));
    }
    let mut full = parts.join(".");
    for _ in parts.len()..3 {
        full.push_str(".0");
    }
    full.push_str(rest);
    Version::parse(&full).map_err(|e| format!("invalid version \"{text}\": {e}"))
}

/// One comparison of a version spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bound {
    /// `>=`, `<`, `>`, `<=`, `==`, `!=`.
    pub op: &'static str,
    /// The version compared with.
    pub version: Version,
}

/// A murano version spec (`Require` values): comparisons that must all
/// hold. Normalised as murano normalises them: a spec without a patch part
/// names a range (`1.2` = `>=1.2.0,<1.3.0-0`, `==1` = `>=1.0.0,<2.0.0-0`);
/// an empty spec is `0` (any 0.x version).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionSpec {
    /// The spec as written.
    pub text: String,
    /// The normalised comparisons.
    pub bounds: Vec<Bound>,
}

impl fmt::Display for VersionSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .bounds
            .iter()
            .map(|b| format!("{}{}", b.op, b.version))
            .collect();
        if parts.is_empty() {
            f.write_str("*")
        } else {
            f.write_str(&parts.join(","))
        }
    }
}

impl VersionSpec {
    /// Parses a spec (`None` or empty = `0`).
    pub fn parse(text: Option<&str>) -> std::result::Result<VersionSpec, String> {
        let raw = text.unwrap_or("").to_string();
        let mut t: String = raw.chars().filter(|c| !c.is_whitespace()).collect();
        if t.is_empty() {
            t = "0".into();
        }
        let mut bounds = Vec::new();
        for item in t.split(',') {
            let (op, ver) = if item == "*" {
                continue;
            } else if let Some(v) = item.strip_prefix(">=") {
                (">=", v)
            } else if let Some(v) = item.strip_prefix("<=") {
                ("<=", v)
            } else if let Some(v) = item.strip_prefix("==") {
                ("==", v)
            } else if let Some(v) = item.strip_prefix("!=") {
                ("!=", v)
            } else if let Some(v) = item.strip_prefix('>') {
                (">", v)
            } else if let Some(v) = item.strip_prefix('<') {
                ("<", v)
            } else if let Some(v) = item.strip_prefix('=') {
                ("==", v)
            } else if item.starts_with(|c: char| c.is_ascii_digit()) {
                ("==", item)
            } else {
                return Err(format!("invalid version spec \"{raw}\""));
            };
            let ver = ver.trim_end_matches(".*");
            let partial = {
                let core = ver.split(['-', '+']).next().unwrap_or("");
                let n = core.split('.').count();
                if n > 3 {
                    return Err(format!("invalid version spec \"{raw}\""));
                }
                (n < 3).then_some(n)
            };
            let v =
                parse_version(ver).map_err(|e| format!("invalid version spec \"{raw}\": {e}"))?;
            let Some(nparts) = partial else {
                bounds.push(Bound { op, version: v });
                continue;
            };
            // murano's normalize_version_spec for specs without a patch.
            let increment = |v: &Version| {
                if nparts == 1 {
                    Version::new(v.major + 1, 0, 0)
                } else {
                    Version::new(v.major, v.minor + 1, 0)
                }
            };
            let extend = |v: Version| {
                let mut v = v;
                v.pre = semver::Prerelease::new("0").expect("valid");
                v
            };
            match op {
                ">" => bounds.push(Bound {
                    op: ">=",
                    version: extend(increment(&v)),
                }),
                ">=" => bounds.push(Bound {
                    op: ">=",
                    version: v,
                }),
                "<" => bounds.push(Bound {
                    op: "<",
                    version: extend(v),
                }),
                "<=" => bounds.push(Bound {
                    op: "<",
                    version: extend(increment(&v)),
                }),
                "!=" => {
                    // Outside [v, next): kept as a single "not in range".
                    bounds.push(Bound {
                        op: "!<",
                        version: extend(v.clone()),
                    });
                    bounds.push(Bound {
                        op: "!>=",
                        version: extend(increment(&v)),
                    });
                }
                _ => {
                    let next = extend(increment(&v));
                    bounds.push(Bound {
                        op: ">=",
                        version: v,
                    });
                    bounds.push(Bound {
                        op: "<",
                        version: next,
                    });
                }
            }
        }
        Ok(VersionSpec { text: raw, bounds })
    }

    /// True when `v` satisfies every comparison.
    pub fn matches(&self, v: &Version) -> bool {
        let mut not_lo = None;
        let mut ok = true;
        for b in &self.bounds {
            ok &= match b.op {
                ">=" => v >= &b.version,
                ">" => v > &b.version,
                "<" => v < &b.version,
                "<=" => v <= &b.version,
                "==" => v == &b.version,
                "!=" => v != &b.version,
                "!<" => {
                    not_lo = Some(v < &b.version);
                    true
                }
                "!>=" => not_lo.take().unwrap_or(false) || v >= &b.version,
                _ => false,
            };
        }
        ok
    }
}

/// Splits a type string `Name[/version][@package]`.
pub fn parse_type_string(t: &str) -> (String, Option<String>, Option<String>) {
    let (rest, pkg) = match t.split_once('@') {
        Some((r, p)) => (r, Some(p.trim().to_string()).filter(|p| !p.is_empty())),
        None => (t, None),
    };
    let (name, ver) = match rest.split_once('/') {
        Some((n, v)) => (n, Some(v.trim().to_string()).filter(|v| !v.is_empty())),
        None => (rest, None),
    };
    (name.trim().to_string(), ver, pkg)
}

/// The type string `Name[/version][@package]` (the inverse of
/// [`parse_type_string`]; empty parts are left out).
pub fn type_spec(name: &str, version: Option<&str>, package: Option<&str>) -> String {
    let mut spec = name.to_string();
    if let Some(v) = version.filter(|v| !v.is_empty()) {
        spec = format!("{spec}/{v}");
    }
    if let Some(p) = package.filter(|p| !p.is_empty()) {
        spec = format!("{spec}@{p}");
    }
    spec
}

/// True for a valid package or class full name (`^[\w.]+$`, no dot at
/// either end).
pub fn valid_full_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && !name.ends_with('.')
        && name
            .chars()
            .all(|c| c == '.' || c == '_' || c.is_alphanumeric())
}
