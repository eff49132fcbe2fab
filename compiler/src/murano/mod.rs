//! The MuranoPL front end: YAML class files -> positioned trees -> class
//! declarations.
//!
//! Three layers:
//!
//! * [`yaml`] reads YAML text (several documents per file) with an
//!   event-level parser into a [`Node`] tree that keeps each scalar's style
//!   and tag and every node's file, line and column. It then gives scalars
//!   MuranoPL's meaning ([`Template`]): a plain, untagged scalar is first
//!   typed as PyYAML's `SafeLoader` types it (null, bool incl. `yes`/`no`,
//!   YAML 1.1 ints and floats), else it is a YAQL expression when it parses
//!   as one and is not just words, digits, spaces and dots, else a string.
//!   Quoted and block scalars are strings, `!!str` forces a string, `!yaql`
//!   forces an expression.
//! * [`decl`] turns each document's mapping into a [`ClassDecl`]: `Name`,
//!   `Namespaces`, `Extends`, `Properties`, `Methods`, `Import`, `Meta`,
//!   meta-class `Usage`/`Cardinality`/`Applies`/`Inherited`, with names
//!   resolved as murano's `NamespaceResolver` resolves them.
//! * [`ir`] gives method bodies and contracts a typed, printable and
//!   verified form: statements with assignment destinations read from
//!   YAQL syntax trees, and contract trees with their coercion chains.
//! * [`emit`] lowers method bodies from the IR to statement bytecode
//!   ([`emit::compile_body`]: `Body` node -> IR -> [`emit::Code`]).
//!
//! Bad input never panics: it is an [`Error`] whose message
//! starts with `file:line:col:` and whose span holds the byte offset.
//!
//! ```
//! use muranopl_compiler::murano::{load_classes, LoadOptions, TemplateKind};
//! let src = "Namespaces:\n  =: my.app\n  std: io.murano\nName: App\nExtends: std:Application\n\
//!            Properties:\n  port:\n    Contract: $.int().notNull()\n    Default: 80\n";
//! let classes = load_classes(src, "App.yaml", LoadOptions::default()).unwrap();
//! let app = &classes[0];
//! assert_eq!(app.name, "my.app.App");
//! assert_eq!(app.extends, ["io.murano.Application"]);
//! let port = &app.properties[0];
//! assert!(matches!(port.contract.kind, TemplateKind::Expr { .. }));
//! assert_eq!(port.contract.pos.to_string(), "App.yaml:8:15");
//! ```

pub mod decl;
pub mod emit;
pub mod ir;
mod lenient;
pub mod meta;
mod pos;
pub mod yaml;

#[cfg(test)]
mod tests;

pub use decl::{
    load_classes, ArgDecl, ArgUsage, Cardinality, ClassDecl, ClassUsage, MetaDecl, MetaTarget,
    MethodDecl, MethodScope, MethodUsage, NamespaceResolver, PropertyDecl, PropertyUsage,
};
pub use pos::Pos;
pub use yaml::{
    is_expression, load_documents, node_value, plain_value, LoadOptions, Node, NodeKind,
    ScalarStyle, Template, TemplateKind,
};
