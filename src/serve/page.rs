//! The forms page: plain HTML, JavaScript and CSS compiled into the
//! binary (no CDN, no build step). It lists the catalogue's classes,
//! renders a form from a class's or model builder's schema, validates it
//! with the same schema in the browser, builds the object model (or calls
//! the model builder) and shows the server's validation of the model.

use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

const INDEX: &str = include_str!("page/index.html");
const SCRIPT: &str = include_str!("page/form.js");
const STYLE: &str = include_str!("page/form.css");

/// The page's routes.
pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    let asset = |ty: &'static str, text: &'static str| {
        get(move || async move { ([(header::CONTENT_TYPE, ty)], text).into_response() })
    };
    Router::new()
        .route("/", asset("text/html; charset=utf-8", INDEX))
        .route(
            "/assets/form.js",
            asset("text/javascript; charset=utf-8", SCRIPT),
        )
        .route("/assets/form.css", asset("text/css; charset=utf-8", STYLE))
}

/// True for the page's own paths (served without a token: the page asks
/// for one when the API answers 401).
pub fn is_page(path: &str) -> bool {
    path == "/" || path.starts_with("/assets/")
}
