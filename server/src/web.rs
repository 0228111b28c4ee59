//! The web table (docs/WEB.md): a lobby and a game page for every ruleset, plain HTML, CSS and one ES
//! module embedded in the binary, drawn in the browser from the API's descriptions and views.

use std::path::PathBuf;
use std::sync::OnceLock;

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::error::ApiError;

const INDEX: &str = include_str!("../web/index.html");
const APP: &str = include_str!("../web/app.js");
const STYLE: &str = include_str!("../web/style.css");

static VIEWS: OnceLock<PathBuf> = OnceLock::new();

/// Serves a ruleset's own view from `DIR/<ruleset id>.js` (`coffer serve --web-views DIR`), once per
/// process; a later call changes nothing.
pub fn set_views_dir(dir: PathBuf) {
    let _ = VIEWS.set(dir);
}

/// Where the page loads the ruleset `id`'s own view from, if the server has one.
pub fn view_for(id: &str) -> Option<String> {
    let dir = VIEWS.get()?;
    (valid_id(id) && dir.join(format!("{id}.js")).is_file())
        .then(|| format!("/assets/views/{id}.js"))
}

fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The pages' routes, merged into the API's router.
pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/", get(page))
        .route("/game/{id}", get(page))
        .route("/assets/app.js", get(app))
        .route("/assets/style.css", get(style))
        .route("/assets/views/{file}", get(view))
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        body,
    )
        .into_response()
}

async fn page() -> Response {
    let mut response = asset("text/html; charset=utf-8", INDEX);
    // The page runs only its own code: no inline script, no other origin.
    response.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; object-src 'none'; base-uri 'none'",
        ),
    );
    response
}

async fn app() -> Response {
    asset("text/javascript; charset=utf-8", APP)
}

async fn style() -> Response {
    asset("text/css; charset=utf-8", STYLE)
}

async fn view(Path(file): Path<String>) -> Response {
    let Some(id) = file.strip_suffix(".js").filter(|id| valid_id(id)) else {
        return ApiError::NotFound(format!("no view {file}")).into_response();
    };
    let Some(dir) = VIEWS.get() else {
        return ApiError::NotFound("this server has no ruleset views".into()).into_response();
    };
    match tokio::fs::read_to_string(dir.join(format!("{id}.js"))).await {
        Ok(text) => (
            StatusCode::OK,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/javascript; charset=utf-8"),
            )],
            text,
        )
            .into_response(),
        Err(_) => ApiError::NotFound(format!("no view for ruleset {id}")).into_response(),
    }
}
