//! Property access through contracts (reads, writes, statics and their
//! defaults) and the exceptions `Throw` raises.

use std::sync::Arc;

use compiler::murano::PropertyUsage;
use runtime::value::ObjRef;
use runtime::{Dict, Error, ErrorKind, Result, Value};

use crate::class::{Class, ContractCode, Prop};
use crate::contracts::Contract;
use crate::executor::{Executor, MURANO_EXCEPTION};

impl Contract {
    /// The contract a class holds as [`ContractCode`] (the catalogue
    /// compiles a class's contracts with [`Contract::compile`]).
    #[inline]
    pub fn of(code: &ContractCode) -> &Contract {
        code.get::<Contract>()
            .expect("a class's contracts are compiled by Contract::compile")
    }
}

impl Executor {
    /// Assigns static property `name` of `class` (or of the ancestor
    /// declaring it), checked and coerced by its contract, as murano's
    /// `set_static_property` transforms it.
    pub fn set_static(&self, class: &Arc<Class>, name: &str, v: Value) -> Result<()> {
        let Some((decl, prop)) = class.find_prop(name) else {
            self.static_set(&class.key, name, v);
            return Ok(());
        };
        let decl = self.class(&decl.key)?;
        let env = self.env(decl.package.legacy).clone();
        let ctx = self.class_ctx(&decl, Value::Type(decl.type_ref.clone()));
        let v = Contract::of(&prop.contract).check(self, &env, &ctx, v, None, &prop.name)?;
        self.static_set(&decl.key, name, v);
        Ok(())
    }
}

impl Executor {
    // ---- properties ---------------------------------------------------

    /// Reads `obj.name`. `inside` is true when the reader is a method of
    /// the object's own class hierarchy (`$this.x`, `$.x`).
    pub fn get_property(&self, r: &ObjRef, name: &str, inside: bool) -> Result<Value> {
        let class = self.class_of(r)?;
        let Some((decl, prop)) = class.find_prop(name) else {
            // Undeclared ("private") properties: set from inside the object,
            // one per declaring class of the method that set them.
            // As murano's `MuranoObject.get_property`
            // (murano/dsl/murano_object.py): code of a class the object is
            // an instance of reads its own private value, or finds it
            // uninitialized; other code cannot read it.
            if !inside {
                return Err(Error::new(
                    ErrorKind::PropertyReadError,
                    format!(
                        "Property \"{name}\" in class \"{}\" cannot be read",
                        class.name
                    ),
                ));
            }
            let key = self.private_key(name);
            return match self.with_obj(r, |o| o.props.get(&key).cloned())? {
                Some(v) => Ok(v),
                None => Err(Error::new(
                    ErrorKind::UninitializedPropertyAccessError,
                    format!(
                        "Access to uninitialized property \"{name}\" in class \"{}\" is forbidden",
                        self.caller()
                            .as_deref()
                            .and_then(|k| k.split('/').next())
                            .unwrap_or(&*class.name)
                    ),
                )),
            };
        };
        if prop.usage == PropertyUsage::Static {
            let v = self.static_get(&decl.key, name);
            return self.static_value(decl, prop, v);
        }
        let v = self.with_obj(r, |o| o.props.get(&Value::str(name)).cloned())?;
        match v {
            Some(v) => Ok(v),
            None => Err(Error::new(
                ErrorKind::UninitializedPropertyAccessError,
                format!(
                    "Access to uninitialized property \"{name}\" in class \"{}\" is forbidden",
                    class.name
                ),
            )),
        }
    }

    pub(crate) fn static_value(
        &self,
        decl: &Class,
        prop: &Prop,
        v: Option<Value>,
    ) -> Result<Value> {
        if let Some(v) = v {
            return Ok(v);
        }
        let decl = &self.class(&decl.key)?;
        // Initialise from the default on first read.
        let legacy = decl.package.legacy;
        let env = self.env(legacy).clone();
        let ctx = self.class_ctx(decl, Value::Type(decl.type_ref.clone()));
        let raw = match &prop.default {
            Some(t) => t.eval(&env, &ctx)?,
            None => Value::Null,
        };
        let v = Contract::of(&prop.contract).check(self, &env, &ctx, raw, None, &prop.name)?;
        self.static_set(&decl.key, &prop.name, v.clone());
        Ok(v)
    }

    /// Writes `obj.name = v` through the property's contract.
    pub fn set_property(
        &self,
        r: &Arc<ObjRef>,
        name: &str,
        v: Value,
        inside: bool,
        caller: Option<&Arc<Class>>,
    ) -> Result<()> {
        let class = self.class_of(r)?;
        let Some((decl, prop)) = class.find_prop(name) else {
            if !inside {
                return Err(Error::new(
                    ErrorKind::PropertyWriteError,
                    format!("Property '{name}' of class {} is private", class.name),
                ));
            }
            let key = match caller {
                Some(c) => Value::str(format!("{}::{name}", c.key)),
                None => self.private_key(name),
            };
            return self.with_obj(r, |o| {
                o.props.insert(key, v);
            });
        };
        if !inside {
            return Err(Error::new(
                ErrorKind::NoWriteAccessError,
                format!("Property '{name}' is not writable from outside"),
            ));
        }
        if matches!(prop.usage, PropertyUsage::In | PropertyUsage::Const)
            && self.with_obj(r, |o| o.initialized)?
        {
            return Err(Error::new(
                ErrorKind::NoWriteAccessError,
                format!("Property \"{name}\" is immutable to the caller"),
            ));
        }
        let legacy = decl.package.legacy;
        let env = self.env(legacy).clone();
        let decl = &self.class(&decl.key)?;
        let ctx = self.class_ctx(decl, Value::Object(r.clone()));
        let v = Contract::of(&prop.contract).check(self, &env, &ctx, v, Some(r), &prop.name)?;
        if prop.usage == PropertyUsage::Static {
            self.static_set(&decl.key, name, v);
            return Ok(());
        }
        self.with_obj(r, |o| {
            o.props.insert(Value::str(name), v);
        })
    }

    /// The storage key of an undeclared property for the class whose method
    /// is running (set by [`Executor::set_caller`]).
    fn private_key(&self, name: &str) -> Value {
        Value::str(format!("{}::{name}", self.caller().unwrap_or_default()))
    }
}

impl Executor {
    // ---- exceptions ---------------------------------------------------

    /// Makes the error a `Throw` raises: an `io.murano.Exception` object
    /// carried by an error of kind [`MURANO_EXCEPTION`].
    pub fn throw(
        &self,
        names: Vec<String>,
        message: String,
        extra: Value,
        cause: Option<Value>,
    ) -> Error {
        let obj = match self.exception(&names, &message, extra, cause) {
            Ok(o) => o,
            Err(e) => return e,
        };
        Error::new(MURANO_EXCEPTION, message).with_data(obj)
    }

    fn exception(
        &self,
        names: &[String],
        message: &str,
        extra: Value,
        cause: Option<Value>,
    ) -> Result<Value> {
        let class = self.class("io.murano.Exception")?;
        let r = self.create(&class, None, None);
        self.with_obj(&r, |o| {
            o.props.insert(
                Value::str("name"),
                Value::str(names.first().cloned().unwrap_or_default()),
            );
            o.props.insert(Value::str("message"), Value::str(message));
            o.props.insert(Value::str("extra"), extra);
            o.props
                .insert(Value::str("cause"), cause.unwrap_or(Value::Null));
            o.props.insert(Value::str("stackTrace"), Value::Null);
            o.props.insert(Value::str("nativeException"), Value::Null);
            o.attrs.insert(
                Value::str("#names"),
                Value::list(names.iter().map(|n| Value::str(n.as_str())).collect()),
            );
            o.initialized = true;
        })?;
        Ok(Value::Object(r))
    }

    /// The exception object a `Catch` with `As` binds for an error, its
    /// `stackTrace` an `io.murano.StackTrace` of the frames the error left
    /// (set once: a rethrown exception keeps the trace of its first catch).
    pub fn exception_object(&self, e: &Error, names: &[String]) -> Result<Value> {
        let obj = match e.data() {
            Some(v @ Value::Object(_)) => v.clone(),
            _ => self.exception(names, e.message(), Value::dict(Dict::default()), None)?,
        };
        if let Value::Object(r) = &obj {
            if self.get_property(r, "stackTrace", true)?.is_null() {
                let trace = self.stack_trace(e)?;
                self.with_obj(r, |o| {
                    o.props.insert(Value::str("stackTrace"), trace);
                })?;
            }
        }
        Ok(obj)
    }

    /// An `io.murano.StackTrace` of the error's frames, outermost first,
    /// each a dict as murano's `compose_stack_frame`
    /// (murano/dsl/principal_objects/stack_trace.py) makes it:
    /// `instruction`, `location` (`file`, `line`, `column`), `methodName`,
    /// `typeName`.
    fn stack_trace(&self, e: &Error) -> Result<Value> {
        let frames = e
            .stack_frames()
            .into_iter()
            .map(|f| {
                let mut d = Dict::default();
                let (instr, loc) = match f.statement {
                    Some((at, text)) => {
                        let mut l = Dict::default();
                        l.insert(Value::str("file"), Value::str(&*at.file));
                        l.insert(Value::str("line"), Value::Int(at.line.into()));
                        l.insert(Value::str("column"), Value::Int(at.col.into()));
                        (Value::str(&*text), Value::dict(l))
                    }
                    None => (Value::Null, Value::Null),
                };
                let (ty, m) = match f.method {
                    Some((t, m)) => (Value::str(&*t), Value::str(&*m)),
                    None => (Value::Null, Value::Null),
                };
                d.insert(Value::str("instruction"), instr);
                d.insert(Value::str("location"), loc);
                d.insert(Value::str("methodName"), m);
                d.insert(Value::str("typeName"), ty);
                Value::dict(d)
            })
            .collect();
        let class = self.class("io.murano.StackTrace")?;
        let r = self.create(&class, None, None);
        self.with_obj(&r, |o| {
            o.props.insert(Value::str("frames"), Value::list(frames));
            o.initialized = true;
        })?;
        Ok(Value::Object(r))
    }
}
