//! Forms: what a client needs to render and check a form for a MuranoPL
//! class.
//!
//! * [`schema`]: JSON Schema generated from class contracts and metadata
//!   and from model-builder methods, as Murano's `generate_schema` does.
//! * [`cloud`]: the flavors, images and networks the dynamic UI offers.
//! * [`ui`]: the dynamic UI of a package (`UI/ui.yaml`, murano-dashboard
//!   semantics): forms, fields, validators and the object model they build.
#![forbid(unsafe_code)]

pub mod cloud;
pub mod schema;
pub mod ui;
