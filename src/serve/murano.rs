//! Murano's v1 API over the database: environments, sessions, services,
//! deployments and instance actions (`murano/api/v1/router.py`), as
//! python-muranoclient calls them. The HTTP side only: what each request
//! does is in [`super::envs`] and [`super::tasks`]; deployments and
//! actions run on the engine's workers in the background
//! ([`start`]). `docs/http-api.md` lists every path.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use rusqlite::Transaction;
use serde_json::Value as J;

use super::envs::{self, Edit};
use super::store::Fail;
use super::tasks::{self, Job};
use super::{api, bad_body, reply, Shared};

/// The routes, relative to `/v1`.
pub fn routes() -> Router<Shared> {
    let services = get(services_get)
        .post(services_post)
        .put(services_put)
        .delete(services_delete);
    let services_at = get(services_get_at)
        .post(services_post_at)
        .put(services_put_at)
        .delete(services_delete_at);
    Router::new()
        .route("/environments", get(env_list).post(env_create))
        .route("/environments/", get(env_list).post(env_create))
        .route(
            "/environments/{env}",
            get(env_show).put(env_update).delete(env_delete),
        )
        .route("/environments/{env}/lastStatus", get(env_last_status))
        .route(
            "/environments/{env}/model",
            get(model_get).patch(model_patch),
        )
        .route(
            "/environments/{env}/model/",
            get(model_get).patch(model_patch),
        )
        .route("/environments/{env}/model/{*path}", get(model_get_at))
        .route("/environments/{env}/configure", post(configure))
        .route(
            "/environments/{env}/sessions/{sid}",
            get(session_show).delete(session_delete),
        )
        .route("/environments/{env}/sessions/{sid}/deploy", post(deploy))
        .route("/environments/{env}/services", services.clone())
        .route("/environments/{env}/services/", services)
        .route("/environments/{env}/services/{*path}", services_at)
        .route("/environments/{env}/deployments", get(deployments))
        .route("/environments/{env}/deployments/{dep}", get(reports))
        .route("/deployments", get(all_deployments))
        .route(
            "/environments/{env}/actions/{id}",
            post(action_call).get(action_result),
        )
}

/// The answer for `r`: 200 with its JSON, or the error.
fn answer(r: Result<J, Fail>) -> Response {
    match r {
        Ok(J::Null) => reply((200, String::new())),
        Ok(j) => reply((200, j.to_string())),
        Err(Fail(status, kind, msg)) => reply(api::error(status, kind, &msg)),
    }
}

/// Runs `f` in one transaction of the database.
fn db(shared: &Shared, f: impl FnOnce(&Transaction) -> Result<J, Fail>) -> Response {
    answer(shared.store.tx(f))
}

/// The request's `X-Configuration-Session`.
fn session_header(headers: &HeaderMap) -> Option<String> {
    headers
        .get("x-configuration-session")
        .and_then(|v| v.to_str().ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The body as JSON; an empty body is `null`.
fn json_body(body: Result<Bytes, BytesRejection>) -> Result<J, Box<Response>> {
    let body = body.map_err(|e| Box::new(bad_body(e)))?;
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(J::Null);
    }
    serde_json::from_slice(&body).map_err(|e| {
        let msg = format!("Malformed JSON in request body: {e}");
        Box::new(reply(api::error(400, "BadRequest", &msg)))
    })
}

/// Hands `job` to the engine: it runs when a worker is free (deployments
/// wait rather than fail when all are busy), under the request time
/// budget, and what it did is kept in one transaction.
pub fn start(shared: &Shared, job: Job) {
    let shared = shared.clone();
    tokio::spawn(async move {
        let permit = shared.workers.clone().acquire_owned().await.ok();
        let (catalog, store) = (shared.catalogue(), shared.store.clone());
        let (budget, max_memory) = (shared.options.timeout, shared.options.max_memory);
        let max_result = shared.options.max_body;
        let ran = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let outcome = {
                let _budget = runtime::budget::Budget::start(Some(budget), Some(max_memory));
                let run = std::panic::AssertUnwindSafe(|| {
                    vm::coro::try_on_big_stack(|| tasks::run(&catalog, &job, max_result))
                });
                match std::panic::catch_unwind(run) {
                    Ok(Ok(outcome)) => outcome,
                    Ok(Err((e, _))) => {
                        tasks::failed(&format!("no memory for the engine's stack: {e}"))
                    }
                    Err(_) => tasks::failed("the task failed inside the engine"),
                }
            };
            if let Err(Fail(_, _, msg)) = store.tx(|tx| tasks::finish(tx, &job, &outcome)) {
                tracing::error!("task {}: cannot keep its result: {msg}", job.task_id);
            }
        });
        if ran.await.is_err() {
            tracing::error!("a background task ended abnormally");
        }
    });
}

async fn env_list(State(s): State<Shared>) -> Response {
    db(&s, envs::list)
}

async fn env_create(State(s): State<Shared>, body: Result<Bytes, BytesRejection>) -> Response {
    match json_body(body) {
        Ok(body) => db(&s, |tx| envs::create(tx, &body)),
        Err(r) => *r,
    }
}

async fn env_show(State(s): State<Shared>, Path(env): Path<String>, h: HeaderMap) -> Response {
    let sid = session_header(&h);
    db(&s, |tx| envs::show(tx, &env, sid.as_deref()))
}

async fn env_last_status(
    State(s): State<Shared>,
    Path(env): Path<String>,
    h: HeaderMap,
) -> Response {
    let sid = session_header(&h);
    db(&s, |tx| envs::last_status(tx, &env, sid.as_deref()))
}

async fn env_update(
    State(s): State<Shared>,
    Path(env): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    match json_body(body) {
        Ok(body) => db(&s, |tx| envs::update(tx, &env, &body)),
        Err(r) => *r,
    }
}

type Params = Query<Vec<(String, String)>>;

fn param<'a>(q: &'a Params, name: &str) -> Option<&'a str> {
    q.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

async fn env_delete(State(s): State<Shared>, Path(env): Path<String>, q: Params) -> Response {
    let abandon = param(&q, "abandon").is_some_and(|v| v.eq_ignore_ascii_case("true"));
    match s.store.tx(|tx| tasks::delete_env(tx, &env, abandon)) {
        Ok(job) => {
            if let Some(job) = job {
                start(&s, job);
            }
            answer(Ok(J::Null))
        }
        Err(e) => answer(Err(e)),
    }
}

fn model_answer(s: &Shared, env: &str, path: &str, h: &HeaderMap) -> Response {
    let sid = session_header(h);
    db(s, |tx| envs::model_get(tx, env, path, sid.as_deref()))
}

async fn model_get(State(s): State<Shared>, Path(env): Path<String>, h: HeaderMap) -> Response {
    model_answer(&s, &env, "/", &h)
}

async fn model_get_at(
    State(s): State<Shared>,
    Path((env, path)): Path<(String, String)>,
    h: HeaderMap,
) -> Response {
    model_answer(&s, &env, &path, &h)
}

async fn model_patch(
    State(s): State<Shared>,
    Path(env): Path<String>,
    h: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let sid = session_header(&h);
    match json_body(body) {
        Ok(patch) => db(&s, |tx| envs::model_patch(tx, &env, sid.as_deref(), &patch)),
        Err(r) => *r,
    }
}

async fn configure(State(s): State<Shared>, Path(env): Path<String>) -> Response {
    db(&s, |tx| envs::configure(tx, &env).map(|s| s.to_dict()))
}

async fn session_show(
    State(s): State<Shared>,
    Path((env, sid)): Path<(String, String)>,
) -> Response {
    db(&s, |tx| envs::session_show(tx, &env, &sid))
}

async fn session_delete(
    State(s): State<Shared>,
    Path((env, sid)): Path<(String, String)>,
) -> Response {
    db(&s, |tx| {
        envs::session_delete(tx, &env, &sid).map(|_| J::Null)
    })
}

async fn deploy(State(s): State<Shared>, Path((env, sid)): Path<(String, String)>) -> Response {
    match s.store.tx(|tx| tasks::deploy(tx, &env, &sid)) {
        Ok(job) => {
            if let Some(job) = job {
                start(&s, job);
            }
            answer(Ok(J::Null))
        }
        Err(e) => answer(Err(e)),
    }
}

fn services_read(s: &Shared, env: &str, path: &str, h: &HeaderMap) -> Response {
    let sid = session_header(h);
    db(s, |tx| envs::services_get(tx, env, path, sid.as_deref()))
}

fn services_change(
    s: &Shared,
    env: &str,
    path: &str,
    h: &HeaderMap,
    body: Option<(Result<Bytes, BytesRejection>, fn(J) -> Edit)>,
) -> Response {
    let sid = session_header(h);
    let edit = match body {
        Some((body, make)) => match json_body(body) {
            Ok(J::Null) => return answer(Err(Fail::bad("the request needs a JSON body"))),
            Ok(j) => make(j),
            Err(r) => return *r,
        },
        None => Edit::Delete,
    };
    db(s, |tx| {
        envs::services_edit(tx, env, sid.as_deref(), path, edit)
    })
}

async fn services_get(State(s): State<Shared>, Path(env): Path<String>, h: HeaderMap) -> Response {
    services_read(&s, &env, "", &h)
}

async fn services_get_at(
    State(s): State<Shared>,
    Path((env, path)): Path<(String, String)>,
    h: HeaderMap,
) -> Response {
    services_read(&s, &env, &path, &h)
}

async fn services_post(
    State(s): State<Shared>,
    Path(env): Path<String>,
    h: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    services_change(&s, &env, "", &h, Some((body, Edit::Post)))
}

async fn services_post_at(
    State(s): State<Shared>,
    Path((env, path)): Path<(String, String)>,
    h: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    services_change(&s, &env, &path, &h, Some((body, Edit::Post)))
}

async fn services_put(
    State(s): State<Shared>,
    Path(env): Path<String>,
    h: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    services_change(&s, &env, "", &h, Some((body, Edit::Put)))
}

async fn services_put_at(
    State(s): State<Shared>,
    Path((env, path)): Path<(String, String)>,
    h: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    services_change(&s, &env, &path, &h, Some((body, Edit::Put)))
}

async fn services_delete(
    State(s): State<Shared>,
    Path(env): Path<String>,
    h: HeaderMap,
) -> Response {
    services_change(&s, &env, "", &h, None)
}

async fn services_delete_at(
    State(s): State<Shared>,
    Path((env, path)): Path<(String, String)>,
    h: HeaderMap,
) -> Response {
    services_change(&s, &env, &path, &h, None)
}

async fn deployments(State(s): State<Shared>, Path(env): Path<String>) -> Response {
    db(&s, |tx| tasks::deployments(tx, Some(&env)))
}

async fn all_deployments(State(s): State<Shared>) -> Response {
    db(&s, |tx| tasks::deployments(tx, None))
}

async fn reports(
    State(s): State<Shared>,
    Path((env, dep)): Path<(String, String)>,
    q: Params,
) -> Response {
    let services: Vec<String> = q
        .iter()
        .filter(|(k, _)| k == "service_id")
        .map(|(_, v)| v.clone())
        .collect();
    db(&s, |tx| tasks::reports(tx, &env, &dep, &services))
}

async fn action_call(
    State(s): State<Shared>,
    Path((env, id)): Path<(String, String)>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let args = match json_body(body) {
        Ok(J::Null) => J::Object(Default::default()),
        Ok(J::Object(m)) => J::Object(m),
        Ok(_) => {
            return reply(api::error(
                400,
                "BadRequest",
                "the arguments must be an object",
            ))
        }
        Err(r) => return *r,
    };
    match s.store.tx(|tx| tasks::execute(tx, &env, &id, args)) {
        Ok(job) => {
            let task_id = job.task_id.clone();
            start(&s, job);
            answer(Ok(serde_json::json!({ "task_id": task_id })))
        }
        Err(e) => answer(Err(e)),
    }
}

async fn action_result(
    State(s): State<Shared>,
    Path((env, task)): Path<(String, String)>,
) -> Response {
    db(&s, |tx| tasks::result(tx, &env, &task))
}
