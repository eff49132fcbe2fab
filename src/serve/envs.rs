//! Environments, configuration sessions and the services (applications)
//! edited in them, as murano keeps them (`murano/api/v1/environments.py`,
//! `sessions.py`, `services.py`, `murano/db/services/*.py`). Every
//! function runs inside the caller's transaction and either does all it
//! says or fails having written nothing.

use rusqlite::{params, OptionalExtension, Transaction};
use serde_json::{json, Map, Value as J};

use super::store::{json_col, new_id, now, Fail};
use super::traverse;

/// The tenant and user of every request: there is no Keystone.
pub const TENANT: &str = "offline";
pub const USER: &str = "offline";

/// Session states (`murano/services/states.py`).
pub mod state {
    pub const OPENED: &str = "opened";
    pub const DEPLOYING: &str = "deploying";
    pub const DEPLOYED: &str = "deployed";
    pub const DEPLOY_FAILURE: &str = "deploy failure";
    pub const DELETING: &str = "deleting";
    pub const DELETE_FAILURE: &str = "delete failure";
}

/// An environment row.
pub struct Env {
    pub id: String,
    pub name: String,
    pub tenant_id: String,
    pub version: i64,
    /// The deployed object model: `{"Objects", "ObjectsCopy"?, "Attributes"}`.
    pub description: J,
    pub networking: J,
    /// The simulated cloud's state between tasks (tagged JSON text).
    pub cloud: String,
    pub created: String,
    pub updated: String,
}

impl Env {
    /// murano's `Environment.to_dict()` with `status`.
    pub fn to_dict(&self, status: &str) -> J {
        json!({
            "id": self.id,
            "name": self.name,
            "tenant_id": self.tenant_id,
            "version": self.version,
            "networking": self.networking,
            "created": self.created,
            "updated": self.updated,
            "status": status,
        })
    }
}

/// A session row.
pub struct Sess {
    pub id: String,
    pub environment_id: String,
    pub user_id: String,
    pub state: String,
    pub version: i64,
    /// The model being edited.
    pub description: J,
    pub created: String,
    pub updated: String,
}

impl Sess {
    /// murano's `Session.to_dict()`.
    pub fn to_dict(&self) -> J {
        json!({
            "id": self.id,
            "environment_id": self.environment_id,
            "user_id": self.user_id,
            "state": self.state,
            "version": self.version,
            "created": self.created,
            "updated": self.updated,
        })
    }
}

const ENV_COLS: &str =
    "id, name, tenant_id, version, description, networking, cloud, created, updated";
const SESS_COLS: &str =
    "id, environment_id, user_id, state, version, description, created, updated";

fn env_row(r: &rusqlite::Row) -> rusqlite::Result<Env> {
    Ok(Env {
        id: r.get("id")?,
        name: r.get("name")?,
        tenant_id: r.get("tenant_id")?,
        version: r.get("version")?,
        description: json_col(r, "description")?,
        networking: json_col(r, "networking")?,
        cloud: r.get("cloud")?,
        created: r.get("created")?,
        updated: r.get("updated")?,
    })
}

fn sess_row(r: &rusqlite::Row) -> rusqlite::Result<Sess> {
    Ok(Sess {
        id: r.get("id")?,
        environment_id: r.get("environment_id")?,
        user_id: r.get("user_id")?,
        state: r.get("state")?,
        version: r.get("version")?,
        description: json_col(r, "description")?,
        created: r.get("created")?,
        updated: r.get("updated")?,
    })
}

/// The environment `id`, if there is one.
pub fn find_env(tx: &Transaction, id: &str) -> Result<Option<Env>, Fail> {
    let sql = format!("SELECT {ENV_COLS} FROM environments WHERE id = ?1");
    Ok(tx.query_row(&sql, [id], env_row).optional()?)
}

/// The environment `id`; 404 when there is none.
pub fn env(tx: &Transaction, id: &str) -> Result<Env, Fail> {
    find_env(tx, id)?
        .ok_or_else(|| Fail::not_found(format!("Environment <EnvId {id}> is not found")))
}

/// The session `id`, if there is one.
pub fn find_session(tx: &Transaction, id: &str) -> Result<Option<Sess>, Fail> {
    let sql = format!("SELECT {SESS_COLS} FROM sessions WHERE id = ?1");
    Ok(tx.query_row(&sql, [id], sess_row).optional()?)
}

/// The sessions of an environment, newest version first (murano's
/// `get_sessions`).
pub fn sessions_of(tx: &Transaction, env_id: &str) -> Result<Vec<Sess>, Fail> {
    let sql = format!(
        "SELECT {SESS_COLS} FROM sessions WHERE environment_id = ?1 ORDER BY version DESC, seq DESC"
    );
    let mut st = tx.prepare(&sql)?;
    let rows = st.query_map([env_id], sess_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// murano's `EnvironmentServices.get_status`: from the newest session
/// back to the last one deployed.
pub fn status(tx: &Transaction, env: &Env) -> Result<&'static str, Fail> {
    let mut opened = false;
    for s in sessions_of(tx, &env.id)? {
        match s.state.as_str() {
            state::DEPLOYING => return Ok("deploying"),
            state::DELETING => return Ok("deleting"),
            state::DEPLOY_FAILURE => return Ok("deploy failure"),
            state::DELETE_FAILURE => return Ok("delete failure"),
            state::OPENED if s.version == env.version => opened = true,
            state::DEPLOYED => break,
            _ => {}
        }
    }
    Ok(if opened { "pending" } else { "ready" })
}

/// Whether another session of the environment deploys (or deletes) now.
pub fn busy(tx: &Transaction, env_id: &str) -> Result<bool, Fail> {
    let n: i64 = tx.query_row(
        "SELECT count(*) FROM sessions WHERE environment_id = ?1 AND state IN (?2, ?3)",
        params![env_id, state::DEPLOYING, state::DELETING],
        |r| r.get(0),
    )?;
    Ok(n > 0)
}

/// murano's `SessionServices.validate`: no newer deployment since the
/// session was opened, and no other deploying while it is open.
pub fn valid(tx: &Transaction, s: &Sess) -> Result<bool, Fail> {
    let Some(env) = find_env(tx, &s.environment_id)? else {
        return Ok(false);
    };
    if env.version > s.version {
        return Ok(false);
    }
    Ok(!(s.state == state::OPENED && busy(tx, &env.id)?))
}

/// `GET /v1/environments`.
pub fn list(tx: &Transaction) -> Result<J, Fail> {
    let sql = format!("SELECT {ENV_COLS} FROM environments WHERE tenant_id = ?1 ORDER BY seq");
    let mut st = tx.prepare(&sql)?;
    let envs: Vec<Env> = st.query_map([TENANT], env_row)?.collect::<Result<_, _>>()?;
    let mut out = Vec::with_capacity(envs.len());
    for e in &envs {
        out.push(e.to_dict(status(tx, e)?));
    }
    Ok(json!({ "environments": out }))
}

/// The name in `body`: a non-blank string of at most 255 characters.
fn name_of(body: &J) -> Result<String, Fail> {
    let name = match body.get("name") {
        Some(J::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(J::Null) | None => {
            return Err(Fail::bad(
                "Please, specify a name of the environment to create",
            ))
        }
        Some(J::String(_)) => return Err(Fail::bad("Environment name must not be blank")),
        Some(_) => return Err(Fail::bad("Environment name must be a string")),
    };
    if name.chars().count() > 255 {
        return Err(Fail::bad(
            "Environment name should be 255 characters maximum",
        ));
    }
    Ok(name)
}

fn name_taken(tx: &Transaction, name: &str, except: &str) -> Result<bool, Fail> {
    let n: i64 = tx.query_row(
        "SELECT count(*) FROM environments WHERE tenant_id = ?1 AND name = ?2 AND id != ?3",
        params![TENANT, name, except],
        |r| r.get(0),
    )?;
    Ok(n > 0)
}

/// `POST /v1/environments`: body `{"name", "defaultNetworks"?, ...}`;
/// the model is an `io.murano.Environment` with a default Neutron
/// network, as murano's `EnvironmentServices.create` makes it.
pub fn create(tx: &Transaction, body: &J) -> Result<J, Fail> {
    let J::Object(fields) = body else {
        return Err(Fail::bad("the body must be a JSON object"));
    };
    let name = name_of(body)?;
    if name_taken(tx, &name, "")? {
        return Err(Fail::conflict(
            "Environment with specified name already exists",
        ));
    }
    let id = new_id();
    let mut objects = Map::new();
    objects.insert("?".into(), json!({ "id": id }));
    for (k, v) in fields {
        if k != "region" && k != "?" {
            objects.insert(k.clone(), v.clone());
        }
    }
    if !objects.contains_key("defaultNetworks") {
        objects.insert(
            "defaultNetworks".into(),
            json!({
                "environment": {
                    "?": {"id": new_id(), "type": "io.murano.resources.NeutronNetwork"},
                    "name": format!("{name}-network"),
                },
                "flat": null,
            }),
        );
    }
    objects.insert(
        "?".into(),
        json!({"id": id, "type": "io.murano.Environment"}),
    );
    let description = json!({"Objects": objects, "Attributes": []});
    let t = now();
    tx.execute(
        "INSERT INTO environments (id, name, tenant_id, version, description, created, updated)
         VALUES (?1, ?2, ?3, 0, ?4, ?5, ?5)",
        params![id, name, TENANT, description.to_string(), t],
    )?;
    Ok(env(tx, &id)?.to_dict("ready"))
}

/// `PUT /v1/environments/{id}`: renames.
pub fn update(tx: &Transaction, id: &str, body: &J) -> Result<J, Fail> {
    let e = env(tx, id)?;
    let name = name_of(body)?;
    if name_taken(tx, &name, id)? {
        return Err(Fail::conflict(
            "Environment with specified name already exists",
        ));
    }
    let mut description = e.description.clone();
    if let Some(objects) = description.get_mut("Objects").and_then(J::as_object_mut) {
        objects.insert("name".into(), J::String(name.clone()));
    }
    tx.execute(
        "UPDATE environments SET name = ?2, description = ?3, updated = ?4 WHERE id = ?1",
        params![id, name, description.to_string(), now()],
    )?;
    let e = env(tx, id)?;
    Ok(e.to_dict(status(tx, &e)?))
}

/// The model the request sees: the session's when it names one that is
/// valid and not deployed yet, else the environment's (murano's
/// `get_environment_description`).
fn description(tx: &Transaction, e: &Env, session: Option<&Sess>) -> Result<J, Fail> {
    if let Some(s) = session {
        if valid(tx, s)? && s.state != state::DEPLOYED {
            return Ok(s.description.clone());
        }
    }
    Ok(e.description.clone())
}

/// The session a read names with `X-Configuration-Session`: 404 when it
/// is not there or belongs to another environment (murano's
/// `check_session`).
fn read_session(tx: &Transaction, env_id: &str, sid: Option<&str>) -> Result<Option<Sess>, Fail> {
    let Some(sid) = sid else { return Ok(None) };
    match find_session(tx, sid)? {
        Some(s) if s.environment_id == env_id => Ok(Some(s)),
        Some(_) => Err(Fail::not_found(format!(
            "Session <SessionId {sid}> is not tied with Environment <EnvId {env_id}>"
        ))),
        None => Err(Fail::not_found(format!(
            "Session <SessionId {sid}> is not found"
        ))),
    }
}

/// The services of a model (`Objects.services`) with each one's
/// `?.status` set to the environment's.
fn services_with_status(model: &J, status: &str) -> J {
    let mut services = model
        .get("Objects")
        .and_then(|o| o.get("services"))
        .cloned()
        .unwrap_or(json!([]));
    if let J::Array(list) = &mut services {
        for s in list.iter_mut() {
            if let Some(h) = s.get_mut("?").and_then(J::as_object_mut) {
                h.insert("status".into(), J::String(status.into()));
            }
        }
    }
    services
}

/// `GET /v1/environments/{id}`: the environment with its `services`.
pub fn show(tx: &Transaction, id: &str, sid: Option<&str>) -> Result<J, Fail> {
    let e = env(tx, id)?;
    let session = read_session(tx, id, sid)?;
    let status = status(tx, &e)?;
    let model = description(tx, &e, session.as_ref())?;
    let mut out = e.to_dict(status);
    out["services"] = services_with_status(&model, status);
    Ok(out)
}

/// `GET /v1/environments/{id}/lastStatus`: the newest report about each
/// service or an object in it.
pub fn last_status(tx: &Transaction, id: &str, sid: Option<&str>) -> Result<J, Fail> {
    let e = env(tx, id)?;
    let session = read_session(tx, id, sid)?;
    let model = description(tx, &e, session.as_ref())?;
    let mut out = Map::new();
    let services = services_with_status(&model, "");
    for s in services.as_array().into_iter().flatten() {
        let Some(sid) = s.get("?").and_then(|h| h.get("id")).and_then(J::as_str) else {
            continue;
        };
        let mut ids = Vec::new();
        object_ids(s, &mut ids);
        let last = super::tasks::last_report(tx, id, &ids)?;
        out.insert(sid.to_string(), last.unwrap_or(J::Null));
    }
    Ok(json!({ "lastStatuses": out }))
}

/// The ids of every object in `v` (murano's `build_entity_map`).
pub fn object_ids(v: &J, out: &mut Vec<String>) {
    match v {
        J::Object(m) => {
            if let Some(id) = m.get("?").and_then(|h| h.get("id")).and_then(J::as_str) {
                out.push(id.to_string());
            }
            m.values().for_each(|x| object_ids(x, out));
        }
        J::Array(l) => l.iter().for_each(|x| object_ids(x, out)),
        _ => {}
    }
}

/// `POST /v1/environments/{id}/configure`: opens a session on the
/// environment's model.
pub fn configure(tx: &Transaction, env_id: &str) -> Result<Sess, Fail> {
    let e = env(tx, env_id)?;
    if matches!(status(tx, &e)?, "deploying" | "deleting") {
        return Err(Fail::forbidden(format!(
            "Could not open session for environment <EnvId: {env_id}>, environment has deploying or deleting status."
        )));
    }
    open_session(tx, &e)
}

/// A new open session on `e`'s model.
pub fn open_session(tx: &Transaction, e: &Env) -> Result<Sess, Fail> {
    let id = new_id();
    let t = now();
    tx.execute(
        "INSERT INTO sessions (id, environment_id, user_id, state, version, description, created, updated)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)",
        params![id, e.id, USER, state::OPENED, e.version, e.description.to_string(), t],
    )?;
    find_session(tx, &id)?
        .ok_or_else(|| Fail::new(500, "DatabaseError", "the session was not kept"))
}

/// The session `sid` of environment `env_id`: 404 when it is not there
/// or belongs to another environment.
pub fn session_of(tx: &Transaction, env_id: &str, sid: &str) -> Result<Sess, Fail> {
    env(tx, env_id)?;
    match find_session(tx, sid)? {
        Some(s) if s.environment_id == env_id => Ok(s),
        Some(_) => Err(Fail::not_found(format!(
            "Session <SessionId {sid}> is not tied with Environment <EnvId {env_id}>"
        ))),
        None => Err(Fail::not_found(format!(
            "Session <SessionId {sid}> is not found"
        ))),
    }
}

/// `GET /v1/environments/{id}/sessions/{sid}`.
pub fn session_show(tx: &Transaction, env_id: &str, sid: &str) -> Result<J, Fail> {
    let s = session_of(tx, env_id, sid)?;
    if !valid(tx, &s)? {
        return Err(Fail::forbidden(format!(
            "Session <SessionId {sid}> is invalid"
        )));
    }
    Ok(s.to_dict())
}

/// `DELETE /v1/environments/{id}/sessions/{sid}`.
pub fn session_delete(tx: &Transaction, env_id: &str, sid: &str) -> Result<(), Fail> {
    let s = session_of(tx, env_id, sid)?;
    if s.state == state::DEPLOYING || s.state == state::DELETING {
        return Err(Fail::forbidden(format!(
            "Session <SessionId: {sid}> is in deploying state and could not be deleted"
        )));
    }
    tx.execute("DELETE FROM sessions WHERE id = ?1", [sid])?;
    Ok(())
}

/// The session a change names (murano's `verify_session`): 403 when the
/// request names none, or one that is unknown, of another environment,
/// invalid or deploying.
fn edit_session(tx: &Transaction, env_id: &str, sid: Option<&str>) -> Result<Sess, Fail> {
    let Some(sid) = sid else {
        return Err(Fail::forbidden(
            "Session is required for this call (X-Configuration-Session)",
        ));
    };
    let s = match find_session(tx, sid)? {
        Some(s) if s.environment_id == env_id => s,
        _ => {
            return Err(Fail::forbidden(format!(
                "Session <SessionId {sid}> is not found"
            )))
        }
    };
    if !valid(tx, &s)? {
        return Err(Fail::forbidden(format!(
            "Session <SessionId {sid}> is invalid"
        )));
    }
    if s.state != state::OPENED {
        return Err(Fail::forbidden(format!(
            "Session <SessionId {sid}> is already deployed or deployment is in progress"
        )));
    }
    Ok(s)
}

/// `GET /v1/environments/{id}/services[/{path}]`.
pub fn services_get(
    tx: &Transaction,
    env_id: &str,
    path: &str,
    sid: Option<&str>,
) -> Result<J, Fail> {
    let e = env(tx, env_id)?;
    let session = read_session(tx, env_id, sid)?;
    let model = description(tx, &e, session.as_ref())?;
    let status = status(tx, &e)?;
    let mut objects = model.get("Objects").cloned().unwrap_or(J::Null);
    if let J::Object(o) = &mut objects {
        o.insert("services".into(), services_with_status(&model, status));
    } else {
        return Ok(json!([]));
    }
    traverse::get(&services_path(path), &objects)
        .cloned()
        .ok_or_else(|| Fail::not_found(format!("nothing at {}", services_path(path))))
}

/// A change to the services of a session.
pub enum Edit {
    /// `POST`: appends an object (or the objects of a list).
    Post(J),
    /// `PUT`: sets the value at the path.
    Put(J),
    /// `DELETE`: removes the value at the path.
    Delete,
}

/// `/services` or `/services/PATH` (murano's `normalize_path`).
pub fn services_path(path: &str) -> String {
    let path = path.trim_matches('/');
    if path.is_empty() {
        "/services".into()
    } else {
        format!("/services/{path}")
    }
}

/// `POST`/`PUT`/`DELETE /v1/environments/{id}/services[/{path}]` with
/// `X-Configuration-Session`: changes the session's model. Answers the
/// data given (`null` for a delete).
pub fn services_edit(
    tx: &Transaction,
    env_id: &str,
    sid: Option<&str>,
    path: &str,
    edit: Edit,
) -> Result<J, Fail> {
    env(tx, env_id)?;
    let s = edit_session(tx, env_id, sid)?;
    let mut model = s.description.clone();
    let Some(objects) = model.get_mut("Objects").filter(|o| o.is_object()) else {
        return Err(Fail::forbidden("the environment is being deleted"));
    };
    if objects.get("services").is_none() {
        objects["services"] = json!([]);
    }
    let path = services_path(path);
    let (done, answer) = match edit {
        Edit::Post(data) => (traverse::insert(&path, data.clone(), objects), data),
        Edit::Put(data) => {
            if path == "/services" && !data.is_array() {
                return Err(Fail::bad("the services must be a list"));
            }
            (traverse::update(&path, data.clone(), objects), data)
        }
        Edit::Delete => (traverse::remove(&path, objects), J::Null),
    };
    if !done {
        return Err(Fail::not_found(format!("nothing at {path}")));
    }
    tx.execute(
        "UPDATE sessions SET description = ?2, updated = ?3 WHERE id = ?1",
        params![s.id, model.to_string(), now()],
    )?;
    Ok(answer)
}

/// `GET /v1/environments/{id}/model/{path}`: the model (`Objects`) or
/// the part of it at `path`.
pub fn model_get(tx: &Transaction, env_id: &str, path: &str, sid: Option<&str>) -> Result<J, Fail> {
    let e = env(tx, env_id)?;
    let session = read_session(tx, env_id, sid)?;
    let model = description(tx, &e, session.as_ref())?;
    let objects = model.get("Objects").cloned().unwrap_or(J::Null);
    traverse::get(path, &objects)
        .cloned()
        .ok_or_else(|| Fail::not_found(format!("nothing at /{}", path.trim_start_matches('/'))))
}

/// One JSON-patch change (`add`, `replace`, `remove`) of `target`; the
/// path's items of a list are named by index (or by `?.id`), `-` appends.
fn apply_change(target: &mut J, change: &J) -> Result<(), Fail> {
    let (Some(op), Some(path)) = (change["op"].as_str(), change["path"].as_str()) else {
        return Err(Fail::bad("every change needs \"op\" and \"path\""));
    };
    let value = change.get("value").cloned();
    let bad = || Fail::bad(format!("cannot {op} {path}"));
    match (op, value) {
        ("remove", _) => traverse::remove(path, target).then_some(()).ok_or_else(bad),
        ("replace", Some(v)) => {
            traverse::get(path, target).ok_or_else(bad)?;
            traverse::update(path, v, target)
                .then_some(())
                .ok_or_else(bad)
        }
        ("add", Some(v)) => {
            let (parent, key) = path.rsplit_once('/').ok_or_else(bad)?;
            match traverse::get_mut(parent, target).ok_or_else(bad)? {
                J::Array(list) if key == "-" => list.push(v),
                J::Array(list) => {
                    let i: usize = key.parse().map_err(|_| bad())?;
                    if i > list.len() {
                        return Err(bad());
                    }
                    list.insert(i, v);
                }
                J::Object(map) => {
                    map.insert(key.to_string(), v);
                }
                _ => return Err(bad()),
            }
            Ok(())
        }
        _ => Err(Fail::bad(format!(
            "the op must be add, replace (with a value) or remove, not {op}"
        ))),
    }
}

/// `PATCH /v1/environments/{id}/model/` + `X-Configuration-Session`: a
/// JSON patch (`[{"op", "path", "value"?}]`) of the session's model
/// (`Objects`); answers the model after it. All changes or none.
pub fn model_patch(
    tx: &Transaction,
    env_id: &str,
    sid: Option<&str>,
    patch: &J,
) -> Result<J, Fail> {
    env(tx, env_id)?;
    let s = edit_session(tx, env_id, sid)?;
    let Some(changes) = patch.as_array() else {
        return Err(Fail::bad("JSON-patch must be a list of changes"));
    };
    let mut model = s.description.clone();
    let Some(objects) = model.get_mut("Objects").filter(|o| o.is_object()) else {
        return Err(Fail::forbidden("the environment is being deleted"));
    };
    if objects.get("services").is_none() {
        objects["services"] = json!([]);
    }
    for change in changes {
        apply_change(objects, change)?;
    }
    if objects
        .get("?")
        .and_then(|h| h.get("type"))
        .and_then(J::as_str)
        != Some("io.murano.Environment")
    {
        return Err(Fail::bad(
            "the model's root must stay an io.murano.Environment",
        ));
    }
    let answer = objects.clone();
    tx.execute(
        "UPDATE sessions SET description = ?2, updated = ?3 WHERE id = ?1",
        params![s.id, model.to_string(), now()],
    )?;
    Ok(answer)
}
