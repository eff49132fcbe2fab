//! The HTTP side of the package catalogue (`/v1/catalog/packages`,
//! `/v1/catalog/categories`); what each request does is in
//! [`super::packages`].

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::multipart::MultipartRejection;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Multipart, Path, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde_json::Value as J;

use super::packages::{self, Sources};
use super::store::{new_id, Fail};
use super::{api, bad_body, reply, Shared};

/// The routes, relative to `/v1`.
pub fn routes() -> Router<Shared> {
    Router::new()
        .route("/catalog/packages", get(search).post(upload))
        .route("/catalog/packages/", get(search).post(upload))
        .route("/catalog/packages/categories", get(package_categories))
        .route(
            "/catalog/packages/{id}",
            get(show).patch(update).delete(delete),
        )
        .route("/catalog/packages/{id}/download", get(download))
        .route("/catalog/packages/{id}/ui", get(ui))
        .route("/catalog/packages/{id}/logo", get(logo))
        .route("/catalog/categories", get(categories).post(add_category))
        .route(
            "/catalog/categories/{id}",
            get(category).delete(delete_category),
        )
}

fn answer(r: Result<J, Fail>) -> Response {
    match r {
        Ok(J::Null) => reply((200, String::new())),
        Ok(j) => reply((200, j.to_string())),
        Err(Fail(status, kind, msg)) => reply(api::error(status, kind, &msg)),
    }
}

fn fail(f: Fail) -> Response {
    answer(Err(f))
}

type Params = Query<Vec<(String, String)>>;

async fn search(State(s): State<Shared>, q: Params) -> Response {
    answer(s.store.tx(|tx| packages::search(tx, &q)))
}

async fn show(State(s): State<Shared>, Path(id): Path<String>) -> Response {
    answer(s.store.tx(|tx| packages::show(tx, &id)))
}

async fn update(
    State(s): State<Shared>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match body {
        Ok(b) => b,
        Err(e) => return bad_body(e),
    };
    match serde_json::from_slice::<J>(&body) {
        Ok(ops) => answer(s.store.tx(|tx| packages::update(tx, &id, &ops))),
        Err(e) => fail(Fail::bad(format!("Malformed JSON in request body: {e}"))),
    }
}

async fn package_categories(State(s): State<Shared>) -> Response {
    answer(s.store.tx(|tx| packages::categories(tx, true)))
}

async fn categories(State(s): State<Shared>) -> Response {
    answer(s.store.tx(|tx| packages::categories(tx, false)))
}

async fn category(State(s): State<Shared>, Path(id): Path<String>) -> Response {
    answer(s.store.tx(|tx| packages::category(tx, &id)))
}

async fn add_category(State(s): State<Shared>, body: Result<Bytes, BytesRejection>) -> Response {
    let body = match body {
        Ok(b) => b,
        Err(e) => return bad_body(e),
    };
    match serde_json::from_slice::<J>(&body) {
        Ok(b) => answer(s.store.tx(|tx| packages::add_category(tx, &b))),
        Err(e) => fail(Fail::bad(format!("Malformed JSON in request body: {e}"))),
    }
}

async fn delete_category(State(s): State<Shared>, Path(id): Path<String>) -> Response {
    answer(
        s.store
            .tx(|tx| packages::delete_category(tx, &id).map(|_| J::Null)),
    )
}

async fn download(State(s): State<Shared>, Path(id): Path<String>) -> Response {
    match s.store.tx(|tx| packages::archive(tx, &id)) {
        Ok(bytes) => ([(header::CONTENT_TYPE, "application/octet-stream")], bytes).into_response(),
        Err(f) => fail(f),
    }
}

/// The package's file that `read` returns, from its archive.
async fn package_file(
    s: &Shared,
    id: &str,
    read: fn(&dyn package::PackageFormat) -> Option<Vec<u8>>,
    what: &str,
) -> Response {
    let bytes = match s.store.tx(|tx| packages::archive(tx, id)) {
        Ok(b) => b,
        Err(f) => return fail(f),
    };
    let what = what.to_string();
    let found = tokio::task::spawn_blocking(move || {
        let dir = std::env::temp_dir().join(format!("muranopl-read-{}.zip", new_id()));
        let p = packages::read_package(&dir, &bytes);
        let out = p.ok().and_then(|p| read(&*p));
        let _ = std::fs::remove_file(&dir);
        out
    })
    .await
    .ok()
    .flatten();
    match found {
        Some(bytes) => {
            ([(header::CONTENT_TYPE, "application/octet-stream")], bytes).into_response()
        }
        None => fail(Fail::not_found(format!("The package has no {what}"))),
    }
}

async fn ui(State(s): State<Shared>, Path(id): Path<String>) -> Response {
    package_file(
        &s,
        &id,
        |p| p.ui().ok().flatten().map(String::into_bytes),
        "UI",
    )
    .await
}

async fn logo(State(s): State<Shared>, Path(id): Path<String>) -> Response {
    package_file(&s, &id, |p| p.logo().ok().flatten(), "logo").await
}

/// The fields of an upload: the `__metadata__` JSON and the package files.
async fn read_upload(mut mp: Multipart) -> Result<(J, Vec<Bytes>), Fail> {
    let mut meta = J::Object(Default::default());
    let mut files = Vec::new();
    loop {
        let field = match mp.next_field().await {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => return Err(Fail::new(e.status().as_u16(), "BadRequest", e.body_text())),
        };
        let is_meta = field.name() == Some("__metadata__");
        let bytes = field
            .bytes()
            .await
            .map_err(|e| Fail::new(e.status().as_u16(), "BadRequest", e.body_text()))?;
        if is_meta {
            meta = serde_json::from_slice(&bytes)
                .map_err(|e| Fail::bad(format!("__metadata__ is not JSON: {e}")))?;
            if !meta.is_object() {
                return Err(Fail::bad("__metadata__ must be a JSON object"));
            }
        } else {
            files.push(bytes);
        }
    }
    Ok((meta, files))
}

/// `POST /v1/catalog/packages`: multipart, `__metadata__` and one .zip.
async fn upload(State(s): State<Shared>, mp: Result<Multipart, MultipartRejection>) -> Response {
    let Some(sources) = s.sources.clone() else {
        return fail(Fail::new(
            501,
            "NotImplemented",
            "this server takes no uploads",
        ));
    };
    let mp = match mp {
        Ok(m) => m,
        Err(e) => {
            let msg = format!(
                "Content-Type must be 'multipart/form-data': {}",
                e.body_text()
            );
            return fail(Fail::new(415, "UnsupportedMediaType", msg));
        }
    };
    let (meta, mut files) = match read_upload(mp).await {
        Ok(x) => x,
        Err(f) => return fail(f),
    };
    if files.len() != 1 {
        let msg = format!(
            "Uploading file is required: one package per request, not {}",
            files.len()
        );
        return fail(Fail::bad(msg));
    }
    let bytes = files.remove(0);
    let _one_at_a_time = s.uploads.lock().await;
    let store = s.store.clone();
    let served = s.catalogue();
    let work =
        tokio::task::spawn_blocking(move || add(&store, &sources, &served, &bytes, &meta)).await;
    match work {
        Ok(Ok((dict, catalog))) => {
            s.set_catalogue(catalog);
            answer(Ok(dict))
        }
        Ok(Err(f)) => fail(f),
        Err(_) => fail(Fail::new(500, "InternalError", "the upload failed")),
    }
}

/// Adds the package in `bytes`: the new catalogue and its record.
fn add(
    store: &super::store::Store,
    sources: &Sources,
    served: &muranopl::Catalogue,
    bytes: &[u8],
    meta: &J,
) -> Result<(J, Arc<muranopl::Catalogue>), Fail> {
    let id = new_id();
    let path = sources.archive(&id);
    let p = packages::read_package(&path, bytes)?;
    let done = (|| {
        store.tx(|tx| packages::taken(tx, p.full_name()))?;
        // The same name and version from the command line or the search
        // path: served already.
        let same = |f: &Arc<dyn package::PackageFormat>| {
            f.full_name() == p.full_name() && f.version() == p.version()
        };
        if served.formats().iter().any(same) {
            return Err(Fail::conflict(format!(
                "Package {} {} is served already (from the search path)",
                p.full_name(),
                p.version()
            )));
        }
        let mut ids = store.tx(packages::ids)?;
        ids.push(id.clone());
        let catalog = sources
            .build(&ids)
            .map_err(|e| Fail::bad(format!("The package cannot be served: {e}")))?;
        let dict = store.tx(|tx| packages::insert(tx, &id, &*p, bytes, meta))?;
        Ok((dict, Arc::new(catalog)))
    })();
    if done.is_err() {
        let _ = std::fs::remove_file(&path);
    }
    done
}

async fn delete(State(s): State<Shared>, Path(id): Path<String>) -> Response {
    let Some(sources) = s.sources.clone() else {
        return answer(s.store.tx(|tx| packages::delete(tx, &id).map(|_| J::Null)));
    };
    let _one_at_a_time = s.uploads.lock().await;
    let store = s.store.clone();
    let work = tokio::task::spawn_blocking(move || {
        store.tx(|tx| packages::show(tx, &id))?;
        let ids: Vec<String> = store
            .tx(packages::ids)?
            .into_iter()
            .filter(|i| *i != id)
            .collect();
        // Out of the search path while the catalogue is made without it.
        let (file, aside) = (
            sources.archive(&id),
            sources.dir.join(format!("{id}.deleted")),
        );
        let _ = std::fs::rename(&file, &aside);
        let built = sources
            .build(&ids)
            .map_err(|e| Fail::new(409, "Conflict", format!("other packages need it: {e}")))
            .and_then(|c| store.tx(|tx| packages::delete(tx, &id)).map(|_| c));
        match &built {
            Ok(_) => drop(std::fs::remove_file(&aside)),
            Err(_) => drop(std::fs::rename(&aside, &file)),
        }
        Ok::<_, Fail>(Arc::new(built?))
    })
    .await;
    match work {
        Ok(Ok(catalog)) => {
            s.set_catalogue(catalog);
            answer(Ok(J::Null))
        }
        Ok(Err(f)) => fail(f),
        Err(_) => fail(Fail::new(500, "InternalError", "the delete failed")),
    }
}
