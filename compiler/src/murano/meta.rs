//! How the meta objects attached along an inheritance graph merge: the
//! `Cardinality` / `Inherited` rule of murano's `meta.merge_providers`
//! (murano/dsl/meta.py), written once for reflection (`metadata()`) and the
//! schema generator.
//!
//! From the class asked about, the graph is walked depth first. The
//! class's own meta objects all count; a parent's only when its meta-class
//! is `Inherited` and no class nearer the start already has one of that
//! meta-class with cardinality `One` on the path. Two classes on different
//! paths each giving a `One` meta-class are an error; an object reached
//! twice (a diamond) is kept once.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use runtime::Error;

use super::Cardinality;

/// One meta object attached to a declaration.
#[derive(Clone, Debug)]
pub struct Attached<T> {
    /// Tells it apart from the other objects attached to declarations of
    /// the same class.
    pub id: String,
    /// Its meta-class.
    pub ty: Arc<str>,
    /// The meta-class's `Cardinality`.
    pub cardinality: Cardinality,
    /// The meta-class is `Inherited`.
    pub inherited: bool,
    /// The object.
    pub value: T,
}

impl<T> Attached<T> {
    /// True for a meta-class of cardinality `One`.
    pub fn one(&self) -> bool {
        self.cardinality == Cardinality::One
    }
}

/// The merged meta objects of `initial` and its ancestors, each with the
/// name of the class that carries it, in murano's order. `name` and
/// `parents` walk the graph; `producer` gives a class's own meta objects
/// (of the declaration asked about: the class, a method, a property).
pub fn merge_providers<C, T>(
    initial: &C,
    name: &dyn Fn(&C) -> Arc<str>,
    parents: &dyn Fn(&C) -> &[C],
    producer: &mut dyn FnMut(&C) -> Result<Vec<Attached<T>>, Error>,
) -> Result<Vec<(Arc<str>, Attached<T>)>, Error> {
    let g = Graph { name, parents };
    g.merger(
        &name(initial),
        std::slice::from_ref(initial),
        &HashSet::new(),
        producer,
        0,
    )
}

struct Graph<'a, C> {
    name: &'a dyn Fn(&C) -> Arc<str>,
    parents: &'a dyn Fn(&C) -> &[C],
}

impl<C> Graph<'_, C> {
    fn merger<T>(
        &self,
        initial: &Arc<str>,
        cls_list: &[C],
        skip: &HashSet<Arc<str>>,
        producer: &mut dyn FnMut(&C) -> Result<Vec<Attached<T>>, Error>,
        depth: usize,
    ) -> Result<Vec<(Arc<str>, Attached<T>)>, Error> {
        if depth > 200 {
            return Err(Error::value("inheritance too deep"));
        }
        let mut all: Vec<(Arc<str>, Attached<T>)> = Vec::new();
        for cls in cls_list {
            let cls_name = (self.name)(cls);
            let mut cls_skip = skip.clone();
            for item in producer(cls)? {
                if cls_name != *initial && (!item.inherited || skip.contains(&item.ty)) {
                    continue;
                }
                if item.one() {
                    cls_skip.insert(item.ty.clone());
                }
                all.push((cls_name.clone(), item));
            }
            let parents = (self.parents)(cls);
            all.extend(self.merger(initial, parents, &cls_skip, producer, depth + 1)?);
        }
        let mut result: Vec<(Arc<str>, Attached<T>)> = Vec::new();
        let mut types: HashMap<Arc<str>, Arc<str>> = HashMap::new();
        for (c, item) in all {
            if let Some(e) = types.get(&item.ty) {
                if *e != c {
                    return Err(Error::value(format!(
                        "Found more than one instance of Meta {} with Cardinality One",
                        item.ty
                    )));
                }
                continue;
            }
            if item.one() {
                types.insert(item.ty.clone(), c.clone());
            }
            if !result.iter().any(|(c2, i2)| *c2 == c && i2.id == item.id) {
                result.push((c, item));
            }
        }
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A class of a test graph: name, parents, own meta (type, one,
    /// inherited).
    struct C(&'static str, Vec<C>, Vec<(&'static str, bool, bool)>);

    fn merged(c: &C) -> Result<Vec<String>, Error> {
        let out = merge_providers(
            c,
            &|c: &C| Arc::from(c.0),
            &|c: &C| &c.1[..],
            &mut |c: &C| {
                Ok(c.2
                    .iter()
                    .enumerate()
                    .map(|(i, (ty, one, inherited))| Attached {
                        id: format!("{}#{i}", c.0),
                        ty: Arc::from(*ty),
                        cardinality: if *one {
                            Cardinality::One
                        } else {
                            Cardinality::Many
                        },
                        inherited: *inherited,
                        value: (),
                    })
                    .collect())
            },
        )?;
        Ok(out.iter().map(|(c, m)| format!("{c}:{}", m.ty)).collect())
    }

    #[test]
    fn a_one_meta_class_is_taken_from_the_nearest_class() {
        let base = || {
            C(
                "Base",
                vec![],
                vec![("T", true, true), ("M", false, true), ("N", true, false)],
            )
        };
        let child = C("Child", vec![base()], vec![("T", true, true)]);
        // The child's `T` hides the base's; `M` is inherited; `N` is not.
        assert_eq!(merged(&child).unwrap(), ["Child:T", "Base:M"]);
        // A diamond reaches the base twice: its objects are kept once.
        let a = C("A", vec![base()], vec![]);
        let b = C("B", vec![base()], vec![]);
        let d = C("D", vec![a, b], vec![]);
        assert_eq!(merged(&d).unwrap(), ["Base:T", "Base:M"]);
        // Two classes on different paths giving a `One` meta-class.
        let a = C("A", vec![], vec![("T", true, true)]);
        let b = C("B", vec![], vec![("T", true, true)]);
        let e = merged(&C("D", vec![a, b], vec![])).unwrap_err();
        assert!(
            e.message().contains("more than one instance of Meta T"),
            "{}",
            e.message()
        );
    }
}
