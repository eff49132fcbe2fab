//! `muranopl serve`: the HTTP API Murano's clients call for form schemas
//! and static actions (the MuranoPL forms spec,
//! `../shared/seeds/muranopl-forms-spec.txt`; murano's `/v1/schemas` and
//! `/v1/actions`), object-model validation, and a forms page, on axum.
//!
//! | request | answer |
//! | --- | --- |
//! | `GET /v1/schemas/{class}` | `{"": schema, builder: schema, ...}`: the class and all its model builders |
//! | `GET /v1/schemas/{class}/{methods}` | the named ones (comma-separated; an empty name is the class; any public static method) |
//! | `POST /v1/actions` | the result of a static action: body `{"className", "methodName", "parameters"?, "packageName"?, "classVersion"?}` |
//! | `POST /v1/validate` | the contract violations of an object model |
//! | `GET /v1/catalog` | the packages and their classes |
//! | `GET /health` | `{"status": "ok", "packages": [...]}` |
//! | `GET /` | the forms page |
//! | `/v1/environments/...`, `/v1/deployments`, `/v1/catalog/packages/...`, `/v1/catalog/categories/...` | an offline Murano: environments, sessions, services, deployments, instance actions and their tasks, the package catalogue ([`murano`], [`catalog`]; state in SQLite, [`store`]) |
//!
//! The paths without `/v1` are aliases. `classVersion` (default `=0`, as
//! murano) and `packageName` are query parameters of `/schemas` and fields
//! of `/actions`. Errors answer `{"error": {"kind", "message", "trace"}}`:
//! 400 bad request, 401 missing or wrong token, 403 not a public static
//! method (or, murano's, a change without a valid open session), 404 no
//! such class, version, method, environment, session, task or package,
//! 409 a name taken or a deployment of the environment running, 408 the request took
//! longer than `--timeout`, 413 body past `--max-body` (at once when
//! `Content-Length` says so), 415 a content coding other than `identity`,
//! 501 a transfer coding other than `chunked`, 500 the action failed,
//! 503 every engine worker busy and the queue full (or too many
//! connections, or no memory for a request's stack), 504 the engine's
//! work ran out of the time budget.
//!
//! Limits, all on by default: the body size, one timeout for the whole
//! request (reading the body, waiting for a worker, the engine's work: the
//! engine runs under a time budget of the same length, so a request that
//! loops forever ends and frees its worker), a bounded pool of engine
//! workers with a bounded queue, a connection count, and an idle timeout
//! for connections that send nothing. A panic in a request answers 500;
//! the worker lives on. SIGINT/SIGTERM stop accepting and let requests in
//! flight finish (up to the timeout).

pub mod api;
mod catalog;
mod envs;
mod murano;
mod packages;
mod page;
pub mod store;
mod tasks;
mod traverse;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, Query, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use tokio::sync::Semaphore;
use tower_http::cors::{Any, CorsLayer};
use tower_http::trace::{DefaultMakeSpan, DefaultOnResponse, TraceLayer};

pub use api::{Answer, TextAnswer};
pub use muranopl::Catalogue;

/// The server's limits and settings.
#[derive(Clone, Debug)]
pub struct Options {
    /// Engine workers: requests the engine works on at once.
    pub threads: usize,
    /// Requests that may wait for a worker; more are answered 503.
    pub queue: usize,
    /// Open connections; more are answered 503 and closed.
    pub max_connections: usize,
    /// The largest request body (413 past it).
    pub max_body: usize,
    /// How long a request may take, all in all (408), and the time budget
    /// of its engine work (504).
    pub timeout: Duration,
    /// How long a connection may stay open without sending a request.
    pub idle_timeout: Duration,
    /// Bytes the values of one request's engine work may take in all
    /// (MemoryQuotaExceededException past it).
    pub max_memory: usize,
    /// The bearer token requests must carry (`Authorization: Bearer T` or
    /// murano's `X-Auth-Token: T`); `None`: no authentication.
    pub token: Option<String>,
    /// The database file of environments, sessions, deployments, tasks
    /// and packages; `None`: in memory (gone when the server stops).
    pub db: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            threads: 2,
            queue: 64,
            max_connections: 256,
            max_body: 4 << 20,
            timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(15),
            max_memory: runtime::DEFAULT_MAX_MEMORY,
            token: None,
            db: None,
        }
    }
}

/// What every request handler shares.
#[derive(Clone)]
struct Shared {
    /// The packages served: replaced when one is uploaded or deleted.
    catalog: Arc<std::sync::RwLock<Arc<Catalogue>>>,
    /// What the catalogue is made of, to make it again with the uploaded
    /// packages (`None`: uploads are refused).
    sources: Option<Arc<packages::Sources>>,
    /// Held while an upload or delete changes the catalogue.
    uploads: Arc<tokio::sync::Mutex<()>>,
    options: Arc<Options>,
    workers: Arc<Semaphore>,
    waiting: Arc<AtomicUsize>,
    /// The state of murano's v1 API.
    store: Arc<store::Store>,
}

/// The API as an axum router over `catalog`, its state in a database in
/// memory (tests call it in-process; the server, [`serve`], opens
/// `--db` and calls [`app_with`]).
pub fn app(catalog: Arc<Catalogue>, options: Options) -> Router {
    match store::Store::open(None) {
        Ok(s) => app_with(catalog, options, Arc::new(s), None),
        // SQLite in memory needs only memory: without it nothing runs.
        Err(e) => panic!("{e}"),
    }
}

/// The API as an axum router over `catalog` and the database `store`;
/// packages are uploaded when `sources` says how to make the catalogue
/// again.
fn app_with(
    catalog: Arc<Catalogue>,
    options: Options,
    store: Arc<store::Store>,
    sources: Option<Arc<packages::Sources>>,
) -> Router {
    let shared = Shared {
        catalog: Arc::new(std::sync::RwLock::new(catalog)),
        sources,
        uploads: Arc::new(tokio::sync::Mutex::new(())),
        workers: Arc::new(Semaphore::new(options.threads.max(1))),
        waiting: Arc::new(AtomicUsize::new(0)),
        options: Arc::new(options),
        store,
    };
    let api = Router::new()
        .route("/schemas/{class}", get(schemas))
        .route("/schemas/{class}/", get(class_schema_only))
        .route("/schemas/{class}/{methods}", get(method_schemas))
        .route("/actions", post(action))
        .route("/actions/", post(action))
        .route("/validate", post(validate))
        .route("/catalog", get(listing))
        .route("/health", get(health))
        .merge(murano::routes())
        .merge(catalog::routes());
    let cors = CorsLayer::new()
        .allow_origin(Any)
        .allow_methods([
            Method::GET,
            Method::POST,
            Method::PUT,
            Method::PATCH,
            Method::DELETE,
        ])
        .allow_headers([
            header::CONTENT_TYPE,
            header::AUTHORIZATION,
            header::HeaderName::from_static("x-auth-token"),
            header::HeaderName::from_static("x-configuration-session"),
        ]);
    let max_body = shared.options.max_body;
    Router::new()
        .nest("/v1", api.clone())
        .merge(api)
        .merge(page::routes())
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(max_body))
        .layer(middleware::from_fn_with_state(shared.clone(), authenticate))
        .layer(middleware::from_fn_with_state(shared.clone(), framing))
        .layer(middleware::from_fn_with_state(shared.clone(), time_limit))
        .layer(cors)
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(DefaultMakeSpan::new().level(tracing::Level::INFO))
                .on_request(())
                .on_response(DefaultOnResponse::new().level(tracing::Level::INFO)),
        )
        .with_state(shared)
}

impl Shared {
    /// The packages served now.
    fn catalogue(&self) -> Arc<Catalogue> {
        self.catalog
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Serves `catalog` from now on.
    fn set_catalogue(&self, catalog: Arc<Catalogue>) {
        *self.catalog.write().unwrap_or_else(|e| e.into_inner()) = catalog;
    }
}

fn reply(answer: impl IntoText) -> Response {
    let (status, body) = answer.into_text();
    let json = [(header::CONTENT_TYPE, "application/json")];
    with_status(status, (json, body).into_response())
}

/// What an endpoint answers, with its body written.
trait IntoText {
    fn into_text(self) -> TextAnswer;
}

impl IntoText for Answer {
    fn into_text(self) -> TextAnswer {
        (self.0, self.1.to_string())
    }
}

impl IntoText for TextAnswer {
    fn into_text(self) -> TextAnswer {
        self
    }
}

/// `resp` with `status` (500 for a code HTTP has not), and `Retry-After`
/// on a 503.
fn with_status(status: u16, mut resp: Response) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    *resp.status_mut() = status;
    if status == StatusCode::SERVICE_UNAVAILABLE {
        resp.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    resp
}

/// Runs `f` on an engine worker under the request's time budget. At most
/// `threads` run at once and `queue` wait; a panic answers 500.
async fn engine_task<A: IntoText + Send + 'static>(
    shared: &Shared,
    f: impl FnOnce(&Catalogue) -> A + Send + 'static,
) -> Response {
    struct Waiting<'a>(&'a AtomicUsize);
    impl Drop for Waiting<'_> {
        fn drop(&mut self) {
            self.0.fetch_sub(1, Ordering::Relaxed);
        }
    }
    let permit = match shared.workers.clone().try_acquire_owned() {
        Ok(permit) => permit,
        Err(_) => {
            if shared.waiting.fetch_add(1, Ordering::Relaxed) >= shared.options.queue {
                shared.waiting.fetch_sub(1, Ordering::Relaxed);
                let msg = "every engine worker is busy and the queue is full";
                return reply(api::error(503, "ServiceUnavailable", msg));
            }
            let _waiting = Waiting(&shared.waiting);
            let Ok(permit) = shared.workers.clone().acquire_owned().await else {
                return reply(api::error(503, "ServiceUnavailable", "shutting down"));
            };
            permit
        }
    };
    let (catalog, budget) = (shared.catalogue(), shared.options.timeout);
    let max_memory = shared.options.max_memory;
    // The worker keeps its permit until the engine is done, even when the
    // client has gone: the budget bounds how long that is.
    // Engine work runs on a stack like the CLI's main thread's (an action
    // may build deeply nested values); without the address space for one,
    // the request is refused, not run on the pool thread's small stack.
    let task = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let _budget = runtime::budget::Budget::start(Some(budget), Some(max_memory));
        // Messages name the packages' files from the package, not from
        // where they are on the server.
        vm::coro::try_on_big_stack(|| {
            let (status, text) = f(&catalog).into_text();
            (status, catalog.without_paths(&text))
        })
        .map_err(|(e, _)| e)
    });
    match task.await {
        Ok(Ok(answer)) => reply(answer),
        Ok(Err(e)) => {
            let msg = format!("no memory for the request's stack: {e}");
            reply(api::error(503, "ServiceUnavailable", &msg))
        }
        Err(_) => reply(api::error(
            500,
            "InternalError",
            "the request failed inside the engine",
        )),
    }
}

/// The answer to a body past the limit or cut short.
fn bad_body(e: BytesRejection) -> Response {
    let status = e.status().as_u16();
    let kind = if status == 413 {
        "PayloadTooLarge"
    } else {
        "BadRequest"
    };
    reply(api::error(status, kind, &e.body_text()))
}

type Params = Query<std::collections::HashMap<String, String>>;

async fn schema_request(
    shared: State<Shared>,
    class: String,
    methods: Option<String>,
    params: Params,
) -> Response {
    engine_task(&shared, move |c| {
        let param = |k: &str| params.get(k).map(String::as_str);
        api::schemas(
            c,
            &class,
            methods.as_deref(),
            param("classVersion"),
            param("packageName"),
        )
    })
    .await
}

async fn schemas(shared: State<Shared>, Path(class): Path<String>, q: Params) -> Response {
    schema_request(shared, class, None, q).await
}

async fn class_schema_only(
    shared: State<Shared>,
    Path(class): Path<String>,
    q: Params,
) -> Response {
    schema_request(shared, class, Some(String::new()), q).await
}

async fn method_schemas(
    shared: State<Shared>,
    Path((class, methods)): Path<(String, String)>,
    q: Params,
) -> Response {
    schema_request(shared, class, Some(methods), q).await
}

async fn action(State(shared): State<Shared>, body: Result<Bytes, BytesRejection>) -> Response {
    match body {
        Ok(body) => engine_task(&shared, move |c| api::action(c, &body)).await,
        Err(e) => bad_body(e),
    }
}

async fn validate(State(shared): State<Shared>, body: Result<Bytes, BytesRejection>) -> Response {
    match body {
        Ok(body) => engine_task(&shared, move |c| api::validate(c, &body)).await,
        Err(e) => bad_body(e),
    }
}

async fn listing(State(shared): State<Shared>) -> Response {
    engine_task(&shared, api::listing).await
}

async fn health(State(shared): State<Shared>) -> Response {
    reply(api::health(&shared.catalogue()))
}

async fn not_found(req: Request) -> Response {
    let msg = format!("no such endpoint: {}", req.uri().path());
    reply(api::error(404, "NotFound", &msg))
}

/// 401 unless the request carries the configured token. The page and its
/// assets, `/health` and CORS preflights need none.
async fn authenticate(State(shared): State<Shared>, req: Request, next: Next) -> Response {
    let Some(token) = shared.options.token.as_deref() else {
        return next.run(req).await;
    };
    if allowed(&req, token) {
        return next.run(req).await;
    }
    let mut resp = reply(api::error(
        401,
        "Unauthorized",
        "this server needs a token: `Authorization: Bearer TOKEN` or `X-Auth-Token: TOKEN`",
    ));
    resp.headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    resp
}

/// True for a request that carries `token` or needs none.
fn allowed(req: &Request, token: &str) -> bool {
    let path = req.uri().path();
    if req.method() == Method::OPTIONS || page::is_page(path) || path == "/health" {
        return true;
    }
    let given = |name: header::HeaderName| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    // The scheme is case-insensitive (RFC 7235, section 2.1).
    let bearer = given(header::AUTHORIZATION).and_then(|v| {
        let (scheme, credentials) = v.split_once([' ', '\t'])?;
        scheme.eq_ignore_ascii_case("bearer").then_some(credentials)
    });
    let presented = bearer.or(given(header::HeaderName::from_static("x-auth-token")));
    presented.is_some_and(|p| same_secret(p.trim(), token))
}

/// Compares a presented secret with the configured one in time that does
/// not depend on where they differ.
fn same_secret(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Refuses at once, before reading a byte of the body, what the request's
/// headers say cannot be read: a `Content-Length` past the limit (413;
/// waiting for a body that is never sent would end only at the timeout),
/// a transfer coding other than `chunked` (501, as RFC 9112 section 6.1
/// asks: `gzip, chunked` is not plain chunked) and a content coding
/// other than `identity` (415).
async fn framing(State(shared): State<Shared>, req: Request, next: Next) -> Response {
    let headers = req.headers();
    let values = |name: header::HeaderName| {
        headers
            .get_all(name)
            .iter()
            .flat_map(|v| v.to_str().unwrap_or("?").split(','))
            .map(|c| c.trim().to_ascii_lowercase())
            .filter(|c| !c.is_empty())
            .collect::<Vec<String>>()
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let max = shared.options.max_body;
    if declared.is_some_and(|n| n > max as u64) {
        let msg = format!("the body is larger than the limit of {max} bytes");
        return reply(api::error(413, "PayloadTooLarge", &msg));
    }
    if let Some(c) = values(header::TRANSFER_ENCODING)
        .into_iter()
        .find(|c| c != "chunked")
    {
        let msg = format!("transfer coding {c:?} is not supported (only chunked)");
        return reply(api::error(501, "NotImplemented", &msg));
    }
    if let Some(c) = values(header::CONTENT_ENCODING)
        .into_iter()
        .find(|c| c != "identity")
    {
        let msg = format!("content coding {c:?} is not supported (send the body as it is)");
        return reply(api::error(415, "UnsupportedMediaType", &msg));
    }
    next.run(req).await
}

/// 408 when the whole request (body, queue, engine) takes longer than the
/// timeout. The engine's own budget, of the same length, usually ends its
/// work first with a 504 that says what ran out; this catches the rest
/// (slow senders, a long wait for a worker).
async fn time_limit(State(shared): State<Shared>, req: Request, next: Next) -> Response {
    let grace = shared.options.timeout + Duration::from_millis(500);
    match tokio::time::timeout(grace, next.run(req)).await {
        Ok(resp) => resp,
        Err(_) => reply(api::error(
            408,
            "RequestTimeout",
            &format!(
                "the request took longer than {:.1} s",
                shared.options.timeout.as_secs_f64()
            ),
        )),
    }
}

/// Runs the server until SIGINT/SIGTERM; returns the exit status (1 when
/// the address cannot be bound or the catalogue not loaded).
pub fn serve(
    paths: &[PathBuf],
    libs: &[PathBuf],
    addr: &str,
    options: Options,
    jit: compiler::jit::Mode,
    class_configs: Option<&std::path::Path>,
) -> i32 {
    let (catalog, store, sources) = match start_state(paths, libs, &options, jit, class_configs) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e}");
            return crate::args::exit::USAGE;
        }
    };
    let runtime = match start_runtime(&options) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the server's runtime: {e}");
            return 1;
        }
    };
    runtime.block_on(async move {
        let listener = match tokio::net::TcpListener::bind(addr).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("error: cannot listen on {addr}: {e}");
                return 1;
            }
        };
        let local = listener.local_addr().map(|a| a.to_string());
        // The first line of output says where we listen (port 0 picks one).
        println!(
            "muranopl: serving {} packages on http://{}",
            catalog.names().len(),
            local.unwrap_or_else(|_| addr.to_string())
        );
        use std::io::Write as _;
        std::io::stdout().flush().ok();
        init_log();
        let uploads = sources.dir.clone();
        let app = app_with(catalog, options.clone(), store, Some(sources));
        connections::accept(listener, app, &options).await;
        // Tasks still running may hold the catalogue: the uploaded
        // archives' copies go now (the database keeps them).
        let _ = std::fs::remove_dir_all(&uploads);
        0
    })
}

/// The catalogue (the packages given, or those of the search path, and
/// the uploaded ones), the database and what the catalogue is made of.
fn start_state(
    paths: &[PathBuf],
    libs: &[PathBuf],
    options: &Options,
    jit: compiler::jit::Mode,
    class_configs: Option<&std::path::Path>,
) -> Result<(Arc<Catalogue>, Arc<store::Store>, Arc<packages::Sources>), String> {
    let store = open_store(options.db.as_deref())?;
    let sources = packages::Sources {
        paths: paths.to_vec(),
        libs: libs.to_vec(),
        class_configs: class_configs.map(|p| p.to_path_buf()),
        jit,
        dir: packages::upload_dir(options.db.as_deref())?,
    };
    let ids = packages::materialize(&store, &sources)?;
    let catalog = sources.build(&ids)?;
    crate::warnings::print(&catalog);
    Ok((Arc::new(catalog), Arc::new(store), Arc::new(sources)))
}

/// Opens the database and ends the tasks a previous run left unfinished.
fn open_store(db: Option<&std::path::Path>) -> Result<store::Store, String> {
    let store = store::Store::open(db)?;
    let left = store
        .tx(tasks::recover)
        .map_err(|store::Fail(_, _, m)| format!("cannot read the database: {m}"))?;
    if left > 0 {
        eprintln!("muranopl: {left} tasks left running by the last run failed");
    }
    Ok(store)
}

/// The runtime: two I/O workers; engine work runs on the blocking pool
/// (see [`engine_task`]).
fn start_runtime(options: &Options) -> Result<tokio::runtime::Runtime, String> {
    const WORKERS: usize = 2;
    // Tokio panics when it cannot spawn its workers (no memory or address
    // space for their stacks), then hangs dropping its half-built pool:
    // the server would neither answer nor exit. So first make sure the
    // workers and the engine's threads can run at once.
    can_run_threads(WORKERS + options.threads.max(1))
        .map_err(|e| format!("cannot start its threads: {e}"))?;
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKERS)
        .max_blocking_threads(options.threads.max(1) + 2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())
}

/// Whether `n` threads with tokio's stack size can run at once: starts
/// them, waiting, and ends them.
fn can_run_threads(n: usize) -> std::io::Result<()> {
    let mut started = Vec::with_capacity(n);
    let mut result = Ok(());
    for _ in 0..n {
        // Tokio's default stack size for its threads.
        let spawned = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(std::thread::park);
        match spawned {
            Ok(h) => started.push(h),
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    for h in started {
        h.thread().unpark();
        let _ = h.join();
    }
    result
}

/// The request log: one line per request on stderr, at the level
/// `MURANOPL_LOG` names (`info` by default; `warn` silences it). The
/// process-wide subscriber is set once, by the `serve` command only.
fn init_log() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("MURANOPL_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

mod connections;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("ab", "abc"));
        assert!(!same_secret("", "a"));
    }
}
