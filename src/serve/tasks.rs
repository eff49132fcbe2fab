//! Deployments and actions: murano's tasks (`murano/services/actions.py`,
//! `murano/common/server.py`, `murano/api/v1/deployments.py`). A deploy
//! or an action call records a task (a row of `deployments`) and hands a
//! [`Job`] to the engine; [`run`] runs it in the simulated cloud as
//! murano's engine runs a task (load the model, call the method, write the
//! model back); [`finish`] keeps what it did as murano's result endpoint
//! does: the model after it, its reports, its result, the session's
//! state.

use std::sync::Arc;

use rusqlite::{params, OptionalExtension, Transaction};
use serde_json::{json, Value as J};

use muranopl::Catalogue;
use runtime::json as tj;

use super::envs::{self, state, Env, Sess};
use super::store::{json_col, new_id, now, Fail};

/// Work for the engine: one task.
#[derive(Clone, Debug)]
pub struct Job {
    pub task_id: String,
    pub env_id: String,
    pub session_id: String,
    /// The model to run: `{"Objects", "ObjectsCopy"?, "Attributes"}`
    /// (`Objects` null when the environment is deleted).
    pub model: J,
    /// `{"object_id", "method", "args"}`; `None` for a deletion.
    pub action: Option<J>,
    /// The simulated cloud's state the task starts from (tagged JSON).
    pub cloud: String,
}

impl Job {
    fn deleting(&self) -> bool {
        self.action.is_none()
    }
}

/// What the engine did with a job.
pub struct Outcome {
    /// The model after the run (`None` when it could not be written).
    pub model: Option<J>,
    /// murano's task result: `{"result", "isException"}`.
    pub result: J,
    /// Status reports (`{level, entity, text}`).
    pub reports: Vec<J>,
    /// The lines the run logged.
    pub log: Vec<String>,
    /// The simulated cloud's state after the run (tagged JSON; `None`:
    /// unchanged).
    pub cloud: Option<String>,
}

impl Outcome {
    fn failed(&self) -> bool {
        self.result["isException"] == J::Bool(true)
    }
}

/// Records a task for `session` and returns its job: the session turns
/// `deploying` (or `deleting`), the task is scheduled with its first
/// status (murano's `ActionServices.submit_task`).
fn submit(tx: &Transaction, env: &Env, session: &Sess, action: Option<J>) -> Result<Job, Fail> {
    let deleting = action.is_none();
    let new_state = if deleting {
        state::DELETING
    } else {
        state::DEPLOYING
    };
    let t = now();
    tx.execute(
        "UPDATE sessions SET state = ?2, updated = ?3 WHERE id = ?1",
        params![session.id, new_state, t],
    )?;
    let task_id = new_id();
    let objects = session
        .description
        .get("Objects")
        .cloned()
        .unwrap_or(J::Null);
    tx.execute(
        "INSERT INTO deployments (id, environment_id, session_id, action, description, started, created, updated)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?6)",
        params![
            task_id,
            env.id,
            session.id,
            action.as_ref().map(J::to_string),
            objects.to_string(),
            t
        ],
    )?;
    let name = action
        .as_ref()
        .and_then(|a| a["method"].as_str())
        .unwrap_or("delete");
    add_status(
        tx,
        &task_id,
        None,
        &format!("Action {name} is scheduled"),
        "info",
    )?;
    Ok(Job {
        task_id,
        env_id: env.id.clone(),
        session_id: session.id.clone(),
        model: session.description.clone(),
        action,
        cloud: env.cloud.clone(),
    })
}

fn add_status(
    tx: &Transaction,
    task_id: &str,
    entity_id: Option<&str>,
    text: &str,
    level: &str,
) -> Result<(), Fail> {
    let t = now();
    tx.execute(
        "INSERT INTO statuses (id, task_id, entity_id, text, level, created, updated)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
        params![new_id(), task_id, entity_id, text, level, t],
    )?;
    Ok(())
}

/// `POST /v1/environments/{id}/sessions/{sid}/deploy`. `None` when the
/// session deletes an environment never deployed: it is gone at once.
pub fn deploy(tx: &Transaction, env_id: &str, sid: &str) -> Result<Option<Job>, Fail> {
    let s = envs::session_of(tx, env_id, sid)?;
    let e = envs::env(tx, env_id)?;
    if s.state == state::OPENED && envs::busy(tx, env_id)? {
        return Err(Fail::conflict(format!(
            "Environment <EnvId {env_id}> is being deployed: one deployment at a time"
        )));
    }
    if !envs::valid(tx, &s)? {
        return Err(Fail::forbidden(format!(
            "Session <SessionId {sid}> is invalid"
        )));
    }
    if s.state != state::OPENED {
        return Err(Fail::forbidden(format!(
            "Session <SessionId {sid}> is already deployed or deployment is in progress"
        )));
    }
    let objects = s.description.get("Objects").cloned().unwrap_or(J::Null);
    if objects.is_null() && s.description.get("ObjectsCopy").is_none() {
        tx.execute("DELETE FROM environments WHERE id = ?1", [env_id])?;
        return Ok(None);
    }
    let action =
        (!objects.is_null()).then(|| json!({"object_id": env_id, "method": "deploy", "args": {}}));
    submit(tx, &e, &s, action).map(Some)
}

/// `DELETE /v1/environments/{id}[?abandon=true]`: abandoning removes the
/// environment at once; deleting runs the deletion of what was deployed
/// (`None` when nothing was: the environment is gone at once).
pub fn delete_env(tx: &Transaction, env_id: &str, abandon: bool) -> Result<Option<Job>, Fail> {
    let e = envs::env(tx, env_id)?;
    if abandon {
        tx.execute("DELETE FROM environments WHERE id = ?1", [env_id])?;
        return Ok(None);
    }
    let s = envs::configure(tx, env_id)?;
    let mut model = s.description.clone();
    model["Objects"] = J::Null;
    tx.execute(
        "UPDATE sessions SET description = ?2 WHERE id = ?1",
        params![s.id, model.to_string()],
    )?;
    if model.get("ObjectsCopy").is_none() {
        tx.execute("DELETE FROM environments WHERE id = ?1", [env_id])?;
        return Ok(None);
    }
    let s = Sess {
        description: model,
        ..s
    };
    submit(tx, &e, &s, None).map(Some)
}

/// The object of `model` that publishes `action_id` in its `?._actions`,
/// and the action (murano's `ActionServices.find_action`).
fn find_action<'a>(model: &'a J, action_id: &str) -> Option<(&'a str, &'a J)> {
    match model {
        J::Array(l) => l.iter().find_map(|x| find_action(x, action_id)),
        J::Object(m) => {
            let head = m.get("?");
            let id = head.and_then(|h| h.get("id")).and_then(J::as_str);
            let action = head
                .and_then(|h| h.get("_actions"))
                .and_then(|a| a.get(action_id));
            if let (Some(id), Some(action)) = (id, action) {
                return Some((id, action));
            }
            m.values().find_map(|x| find_action(x, action_id))
        }
        _ => None,
    }
}

/// `POST /v1/environments/{id}/actions/{action_id}`: opens a session on
/// the deployed model and schedules the action on it; answers the task id.
pub fn execute(tx: &Transaction, env_id: &str, action_id: &str, args: J) -> Result<Job, Fail> {
    let e = envs::env(tx, env_id)?;
    if envs::busy(tx, env_id)? {
        return Err(Fail::conflict(format!(
            "Environment <EnvId {env_id}> is being deployed: one deployment at a time"
        )));
    }
    let objects = e.description.get("Objects").cloned().unwrap_or(J::Null);
    let Some((object_id, action)) = find_action(&objects, action_id) else {
        return Err(Fail::not_found(format!(
            "Action <ActionId {action_id}> is not found"
        )));
    };
    if action.get("enabled") == Some(&J::Bool(false)) {
        return Err(Fail::forbidden("Cannot execute disabled action"));
    }
    let Some(method) = action.get("name").and_then(J::as_str) else {
        return Err(Fail::not_found(format!(
            "Action <ActionId {action_id}> has no name"
        )));
    };
    let action = json!({"object_id": object_id, "method": method, "args": args});
    let s = envs::open_session(tx, &e)?;
    submit(tx, &e, &s, Some(action))
}

/// `GET /v1/environments/{id}/actions/{task_id}`: the task's result once
/// it has one (404 before, as murano).
pub fn result(tx: &Transaction, env_id: &str, task_id: &str) -> Result<J, Fail> {
    envs::env(tx, env_id)?;
    let r: Option<Option<String>> = tx
        .query_row(
            "SELECT result FROM deployments WHERE id = ?1 AND environment_id = ?2",
            params![task_id, env_id],
            |r| r.get(0),
        )
        .optional()?;
    match r.flatten().and_then(|t| serde_json::from_str(&t).ok()) {
        Some(j) => Ok(j),
        None => Err(Fail::not_found(format!(
            "Result for task with environment_id: {env_id} and task_id: {task_id} was not found."
        ))),
    }
}

fn count_level(tx: &Transaction, task_id: &str, level: &str) -> Result<i64, Fail> {
    Ok(tx.query_row(
        "SELECT count(*) FROM statuses WHERE task_id = ?1 AND level = ?2",
        params![task_id, level],
        |r| r.get(0),
    )?)
}

/// A deployment row as murano's `set_dep_state(...).to_dict()` writes it.
fn deployment_dict(tx: &Transaction, r: &rusqlite::Row) -> Result<J, Fail> {
    let id: String = r.get("id")?;
    let finished: Option<String> = r.get("finished")?;
    let errors = count_level(tx, &id, "error")?;
    let warnings = count_level(tx, &id, "warning")?;
    let state = match (finished.is_some(), errors > 0, warnings > 0) {
        (true, true, _) => "completed_w_errors",
        (true, false, true) => "completed_w_warnings",
        (true, false, false) => "success",
        (false, true, _) => "running_w_errors",
        (false, false, true) => "running_w_warnings",
        (false, false, false) => "running",
    };
    let mut description = json_col(r, "description")?;
    if let J::Object(d) = &mut description {
        let apps = d.shift_remove("applications").unwrap_or(json!([]));
        d.entry("services").or_insert(apps);
    }
    Ok(json!({
        "id": id,
        "environment_id": r.get::<_, String>("environment_id")?,
        "action": json_col(r, "action")?,
        "description": description,
        "result": json_col(r, "result")?,
        "state": state,
        "started": r.get::<_, String>("started")?,
        "finished": finished,
        "created": r.get::<_, String>("created")?,
        "updated": r.get::<_, String>("updated")?,
    }))
}

/// `GET /v1/environments/{id}/deployments` (or, without an environment,
/// `GET /v1/deployments`): newest first.
pub fn deployments(tx: &Transaction, env_id: Option<&str>) -> Result<J, Fail> {
    if let Some(id) = env_id {
        envs::env(tx, id)?;
    }
    let mut st = tx.prepare(
        "SELECT d.* FROM deployments d JOIN environments e ON e.id = d.environment_id
         WHERE (?1 IS NULL OR d.environment_id = ?1) AND e.tenant_id = ?2 ORDER BY d.seq DESC",
    )?;
    let mut rows = st.query(params![env_id, envs::TENANT])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        out.push(deployment_dict(tx, r)?);
    }
    Ok(json!({ "deployments": out }))
}

fn status_dict(r: &rusqlite::Row) -> rusqlite::Result<J> {
    Ok(json!({
        "id": r.get::<_, String>("id")?,
        "task_id": r.get::<_, String>("task_id")?,
        "entity_id": r.get::<_, Option<String>>("entity_id")?,
        "entity": r.get::<_, Option<String>>("entity")?,
        "text": r.get::<_, String>("text")?,
        "level": r.get::<_, String>("level")?,
        "details": r.get::<_, Option<String>>("details")?,
        "created": r.get::<_, String>("created")?,
        "updated": r.get::<_, String>("updated")?,
    }))
}

/// `GET /v1/environments/{id}/deployments/{dep_id}[?service_id=...]`:
/// `{"reports": [...]}` (and, ours, the run's `log`). 404 for an unknown
/// deployment, 400 for one of another environment (as murano).
pub fn reports(
    tx: &Transaction,
    env_id: &str,
    dep_id: &str,
    service_ids: &[String],
) -> Result<J, Fail> {
    envs::env(tx, env_id)?;
    let row: Option<(String, J, J)> = tx
        .query_row(
            "SELECT environment_id, description, log FROM deployments WHERE id = ?1",
            [dep_id],
            |r| Ok((r.get(0)?, json_col(r, "description")?, json_col(r, "log")?)),
        )
        .optional()?;
    let Some((owner, description, log)) = row else {
        return Err(Fail::not_found(format!(
            "Deployment with id {dep_id} not found"
        )));
    };
    if owner != env_id {
        return Err(Fail::bad(format!(
            "Deployment with id {dep_id} not found in environment {env_id}"
        )));
    }
    let mut wanted: Option<Vec<String>> = None;
    if !service_ids.is_empty() {
        let mut ids = Vec::new();
        let services = description
            .get("applications")
            .or_else(|| description.get("services"));
        for s in services.and_then(J::as_array).into_iter().flatten() {
            let sid = s.get("?").and_then(|h| h.get("id")).and_then(J::as_str);
            if sid.is_some_and(|i| service_ids.iter().any(|w| w == i)) {
                envs::object_ids(s, &mut ids);
            }
        }
        if ids.is_empty() {
            return Ok(json!({"reports": []}));
        }
        wanted = Some(ids);
    }
    let mut st = tx.prepare("SELECT * FROM statuses WHERE task_id = ?1 ORDER BY seq")?;
    let all: Vec<J> = st
        .query_map([dep_id], status_dict)?
        .collect::<Result<_, _>>()?;
    let reports: Vec<J> = all
        .into_iter()
        .filter(|r| match &wanted {
            Some(ids) => r["entity_id"]
                .as_str()
                .is_some_and(|e| ids.iter().any(|i| i == e)),
            None => true,
        })
        .collect();
    Ok(json!({"reports": reports, "log": log}))
}

/// The newest report about any of `ids` in the environment's tasks.
pub fn last_report(tx: &Transaction, env_id: &str, ids: &[String]) -> Result<Option<J>, Fail> {
    let mut st = tx.prepare(
        "SELECT s.* FROM statuses s JOIN deployments d ON d.id = s.task_id
         WHERE d.environment_id = ?1 AND s.entity_id IS NOT NULL ORDER BY s.seq DESC",
    )?;
    let mut rows = st.query([env_id])?;
    while let Some(r) = rows.next()? {
        let e: String = r.get("entity_id")?;
        if ids.contains(&e) {
            return Ok(Some(status_dict(r)?));
        }
    }
    Ok(None)
}

/// Keeps what the engine did (murano's `ResultEndpoint.process_result`
/// and `report_notification`). Nothing when the environment was
/// abandoned meanwhile.
pub fn finish(tx: &Transaction, job: &Job, out: &Outcome) -> Result<(), Fail> {
    if envs::find_env(tx, &job.env_id)?.is_none() {
        return Ok(());
    }
    for r in &out.reports {
        let text = r.get("text").map(text_of).unwrap_or_default();
        let level = r.get("level").and_then(J::as_str).unwrap_or("info");
        let entity = r.get("entity").and_then(J::as_str);
        add_status(tx, &job.task_id, entity, &text, level)?;
    }
    if job.deleting() && !out.failed() {
        tx.execute("DELETE FROM environments WHERE id = ?1", [&job.env_id])?;
        return Ok(());
    }
    let t = now();
    if let Some(cloud) = &out.cloud {
        tx.execute(
            "UPDATE environments SET cloud = ?2 WHERE id = ?1",
            params![job.env_id, cloud],
        )?;
    }
    if let Some(model) = &out.model {
        tx.execute(
            "UPDATE environments SET description = ?2, version = version + 1, updated = ?3 WHERE id = ?1",
            params![job.env_id, model.to_string(), t],
        )?;
    }
    tx.execute(
        "UPDATE deployments SET finished = ?2, result = ?3, model = ?4, log = ?5, updated = ?2 WHERE id = ?1",
        params![
            job.task_id,
            t,
            out.result.to_string(),
            out.model.as_ref().map(J::to_string),
            json!(out.log).to_string()
        ],
    )?;
    let errors = count_level(tx, &job.task_id, "error")?;
    let warnings = count_level(tx, &job.task_id, "warning")?;
    let what = if job.deleting() {
        "Deletion"
    } else {
        "Deployment"
    };
    let text = match (errors > 0, warnings > 0) {
        (true, _) => format!("{what} finished with errors"),
        (false, true) => format!("{what} finished with warnings"),
        _ => format!("{what} finished"),
    };
    add_status(tx, &job.task_id, None, &text, "info")?;
    let new_state = match (errors > 0 || out.failed(), job.deleting()) {
        (true, true) => state::DELETE_FAILURE,
        (true, false) => state::DEPLOY_FAILURE,
        (false, _) => state::DEPLOYED,
    };
    tx.execute(
        "UPDATE sessions SET state = ?2, updated = ?3 WHERE id = ?1",
        params![job.session_id, new_state, t],
    )?;
    Ok(())
}

/// Ends what a previous run of the server left deploying (it stopped
/// mid-way): the tasks fail with a report saying so.
pub fn recover(tx: &Transaction) -> Result<usize, Fail> {
    let mut st = tx.prepare(
        "SELECT id, environment_id, session_id, action FROM deployments WHERE finished IS NULL",
    )?;
    let left: Vec<(String, String, String, Option<String>)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<Result<_, _>>()?;
    drop(st);
    for (task_id, env_id, session_id, action) in &left {
        let job = Job {
            task_id: task_id.clone(),
            env_id: env_id.clone(),
            session_id: session_id.clone(),
            model: J::Null,
            action: action
                .as_ref()
                .map(|a| serde_json::from_str(a).unwrap_or(J::Null)),
            cloud: String::new(),
        };
        let msg = "the server stopped before the task finished";
        let out = Outcome {
            model: None,
            result: exception(msg, ""),
            reports: vec![json!({"level": "error", "entity": env_id, "text": msg})],
            log: Vec::new(),
            cloud: None,
        };
        finish(tx, &job, &out)?;
    }
    Ok(left.len())
}

fn text_of(v: &J) -> String {
    match v {
        J::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The outcome of a job the engine could not run.
pub fn failed(msg: &str) -> Outcome {
    Outcome {
        model: None,
        result: exception(msg, ""),
        reports: vec![json!({"level": "error", "entity": null, "text": msg})],
        log: Vec::new(),
        cloud: None,
    }
}

/// murano's `exception_result`.
fn exception(message: &str, details: &str) -> J {
    json!({"isException": true, "result": {"message": message, "details": details}})
}

/// The engine's side of a job (murano's `TaskExecutor._execute`), on an
/// engine worker: the model is loaded (objects only in `ObjectsCopy` are
/// destroyed), the action's method called on its object, the model
/// written back with each object's `?._actions`. `max_result` caps the
/// result's JSON text.
pub fn run(catalog: &Arc<Catalogue>, job: &Job, max_result: usize) -> Outcome {
    let session = catalog.session();
    let ex = session.executor();
    // The cloud as the environment's last task left it (a state that
    // does not read starts empty: the run says what it deploys anyway).
    if let Ok(state) = tj::from_tagged_str(&job.cloud) {
        let _ = session.cloud().restore(&state);
    }
    let mut model = job.model.clone();
    if let Some(objects) = model.get_mut("Objects").and_then(J::as_object_mut) {
        // murano's `create_action_task`: the engine sees `applications`.
        let apps = objects.shift_remove("services").unwrap_or(json!([]));
        objects.insert("applications".into(), apps);
        if let Some(h) = objects.get_mut("?").and_then(J::as_object_mut) {
            h.insert("id".into(), J::String(job.env_id.clone()));
        }
    }
    let (mut result, root) = match tj::from_tagged_str(&model.to_string())
        .and_then(|m| engine::model::load_model(ex, &m))
    {
        Ok(root) => (json!({"isException": false, "result": null}), root),
        Err(e) => (exception(e.message(), &e.trace().join("\n")), None),
    };
    let mut after = None;
    if let Some(root) = &root {
        if let Some(action) = &job.action {
            result = invoke(ex, action, max_result);
        }
        match engine::serialize::serialize_model(ex, root).map(|m| to_json(&m)) {
            Ok(Some(m)) => after = Some(m),
            Ok(None) => {
                let msg = "the model after the task cannot be kept: it nests deeper than JSON is read here (128 levels)";
                result = exception(msg, "");
            }
            Err(e) => result = exception(e.message(), &e.trace().join("\n")),
        }
    } else if !job.deleting() && result["isException"] == J::Bool(false) {
        result = exception("the model has no objects", "");
    }
    if let Some(J::Object(objects)) = after.as_mut().and_then(|m| m.get_mut("Objects")) {
        let apps = objects.shift_remove("applications").unwrap_or(json!([]));
        objects.insert("services".into(), apps);
    }
    let mut reports = match to_json(&session.record()) {
        Some(J::Object(mut r)) => match r.shift_remove("reports") {
            Some(J::Array(l)) => l,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    if result["isException"] == J::Bool(true) {
        let text = result["result"]["message"].clone();
        reports.push(json!({"level": "error", "entity": job.env_id, "text": text}));
    }
    let log = ex.take_log();
    let cloud = Some(tj::to_tagged_string(&session.cloud().state()));
    let mut out = Outcome {
        model: after,
        result,
        reports,
        log,
        cloud,
    };
    out.result = strip_paths(catalog, &out.result);
    out
}

/// Calls the action's method on its object (named arguments from
/// `args`): murano's `_invoke`. The result is `{"result", "isException"}`.
fn invoke(ex: &Arc<engine::Executor>, action: &J, max_result: usize) -> J {
    let object_id = action["object_id"].as_str().unwrap_or("");
    let method = action["method"].as_str().unwrap_or("");
    let Some(obj) = ex.find_object(object_id) else {
        // murano's `_invoke` returns None when the object is gone.
        return json!({"isException": false, "result": null});
    };
    let mut named = Vec::new();
    for (k, v) in action["args"].as_object().into_iter().flatten() {
        match tj::from_tagged_str(&v.to_string()) {
            Ok(v) => named.push((Arc::<str>::from(k.as_str()), v)),
            Err(e) => return exception(&format!("argument {k}: {}", e.message()), ""),
        }
    }
    let called = if method == "deploy" {
        sim::deploy::run(ex, &obj, method).map(Some)
    } else {
        ex.call(&runtime::Value::Object(obj), method, vec![], named, true)
    };
    match called {
        Ok(v) => {
            let text = tj::to_tagged_string(&v.unwrap_or(runtime::Value::Null));
            if text.len() > max_result {
                let msg = format!(
                    "the action's result is {} bytes, more than the limit of {max_result}",
                    text.len()
                );
                return exception(&msg, "");
            }
            let value = serde_json::from_str(&text).unwrap_or(J::String(text));
            json!({"isException": false, "result": value})
        }
        Err(e) => {
            let names = engine::exec::error_names(ex, &e, false);
            let kind = names
                .first()
                .cloned()
                .unwrap_or_else(|| e.kind().to_string());
            exception(&format!("[{kind}]: {}", e.message()), &e.trace().join("\n"))
        }
    }
}

fn to_json(v: &runtime::Value) -> Option<J> {
    serde_json::from_str(&tj::to_tagged_string(v)).ok()
}

/// `v` with the packages' paths on this machine replaced by their names.
fn strip_paths(catalog: &Catalogue, v: &J) -> J {
    let text = catalog.without_paths(&v.to_string());
    serde_json::from_str(&text).unwrap_or_else(|_| v.clone())
}
