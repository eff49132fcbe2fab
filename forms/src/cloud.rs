//! The cloud the dynamic UI lists its choices from: flavors, images and
//! networks of the simulated cloud, and murano-dashboard's rules for which
//! of them a field offers (muranodashboard/dynamic_ui/fields.py
//! `FlavorChoiceField`, `ImageChoiceField`, `NetworkChoiceField`, and
//! muranodashboard/common/net.py `get_available_networks`).
//!
//! Answers naming something this cloud does not have are taken as the
//! user's own cloud has them; answers naming something it has but the
//! field does not offer are refused as the dashboard refuses them.

use runtime::{Dict, Value};

/// A flavor: name, RAM (MB), disk (GB), vCPUs.
pub struct Flavor {
    /// Name.
    pub name: &'static str,
    /// RAM in MB.
    pub ram: i64,
    /// Disk in GB.
    pub disk: i64,
    /// vCPUs.
    pub vcpus: i64,
}

/// The flavors, smallest first.
pub const FLAVORS: &[Flavor] = &[
    Flavor {
        name: "m1.small",
        ram: 2048,
        disk: 20,
        vcpus: 1,
    },
    Flavor {
        name: "m1.medium",
        ram: 4096,
        disk: 40,
        vcpus: 2,
    },
    Flavor {
        name: "m1.large",
        ram: 8192,
        disk: 80,
        vcpus: 4,
    },
    Flavor {
        name: "m1.xlarge",
        ram: 16384,
        disk: 160,
        vcpus: 8,
    },
];

impl Flavor {
    /// Whether it meets a field's `requirements` (`min_memory_mb`,
    /// `min_disk`, `min_vcpus`).
    pub fn meets(&self, req: &Dict) -> bool {
        let get = |k: &str| match req.get(&Value::str(k)) {
            Some(Value::Int(i)) => *i,
            _ => 0,
        };
        self.ram >= get("min_memory_mb")
            && self.disk >= get("min_disk")
            && self.vcpus >= get("min_vcpus")
    }
}

/// An image registered for Murano (`murano_image_info` metadata).
pub struct Image {
    /// Name (what the image field's value is).
    pub name: &'static str,
    /// `murano_image_info.type`.
    pub murano_type: Option<&'static str>,
}

/// The images, in title order.
pub const IMAGES: &[Image] = &[
    Image {
        name: "ubuntu16.04-x64",
        murano_type: Some("linux"),
    },
    Image {
        name: "ubuntu16.04-x64-docker",
        murano_type: Some("linux.docker"),
    },
    Image {
        name: "ubuntu16.04-x64-kubernetes",
        murano_type: Some("linux.kubernetes"),
    },
    Image {
        name: "ws-2012-std",
        murano_type: Some("windows.2012"),
    },
];

impl Image {
    /// Whether an image field of `imageType` `wanted` offers it
    /// (`ImageChoiceField.update`): any image without a type asked; else
    /// an image of that type or of a subtype (`linux` offers
    /// `linux.docker`). An empty type offers nothing.
    pub fn offered_for(&self, wanted: Option<&str>) -> bool {
        let Some(wanted) = wanted else { return true };
        match self.murano_type {
            None => false,
            Some(t) => !wanted.is_empty() && (t == wanted || t.starts_with(&format!("{wanted}."))),
        }
    }
}

/// A network and its subnets.
pub struct Network {
    /// Name.
    pub name: &'static str,
    /// Subnets: name and CIDR.
    pub subnets: &'static [(&'static str, &'static str)],
    /// An external network (never offered).
    pub external: bool,
}

/// The project's networks.
pub const NETWORKS: &[Network] = &[
    Network {
        name: "private-net",
        subnets: &[("private-subnet", "10.0.0.0/24")],
        external: false,
    },
    Network {
        name: "public",
        subnets: &[("public-subnet", "172.24.4.0/24")],
        external: true,
    },
];

/// How a network field lists networks (its `filter`, `include_subnets`
/// and `murano_networks`).
pub struct NetworkQuery<'a> {
    /// A regular expression the network name must match from its start
    /// (Python's `re.match`), checked by the caller's regex engine.
    pub filter: Option<&'a str>,
    /// Offer each subnet (`[net, subnet]`) rather than each network
    /// (`[net, null]`).
    pub include_subnets: bool,
}

/// The `[network, subnet]` choices a network field offers besides
/// `Auto`, in order; `matches(pattern, name)` is `re.match`.
pub fn network_choices(
    q: &NetworkQuery,
    matches: &mut dyn FnMut(&str, &str) -> bool,
) -> Vec<(&'static str, Option<&'static str>)> {
    let mut out = Vec::new();
    for n in NETWORKS.iter().filter(|n| !n.external) {
        if let Some(f) = q.filter {
            if !matches(f, n.name) {
                continue;
            }
        }
        if q.include_subnets {
            out.extend(n.subnets.iter().map(|(s, _)| (n.name, Some(*s))));
        } else {
            out.push((n.name, None));
        }
    }
    out
}

/// Whether `name` is a network of this cloud.
pub fn known_network(name: &str) -> bool {
    NETWORKS.iter().any(|n| n.name == name)
}
