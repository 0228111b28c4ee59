//! The extractors of the JSON API (raw and parsed bodies, the game id path, query parameters) and their JSON errors.

use super::*;

/// A body's bytes, size-limited by the router; refusals in the API's JSON errors (413 `too_large`).
pub struct RawBody(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for RawBody
where
    App: axum::extract::FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let app = <App as axum::extract::FromRef<S>>::from_ref(state);
        let limits = app.games.limits();
        let limit = limits.max_body_bytes;
        // A body announced larger than the limit is refused before any of it is read.
        if let Some(length) = req.headers().get(header::CONTENT_LENGTH)
            && length
                .to_str()
                .ok()
                .and_then(|length| length.trim().parse::<u64>().ok())
                .is_none_or(|length| length > limit as u64)
        {
            return Err(ApiError::TooLarge(limit));
        }
        let timeout = limits.body_timeout;
        match tokio::time::timeout(timeout, Bytes::from_request(req, state)).await {
            Err(_) => Err(ApiError::BodyTimeout(timeout.as_secs())),
            Ok(read) => read
                .map(RawBody)
                .map_err(|e: BytesRejection| match e.status() {
                    StatusCode::PAYLOAD_TOO_LARGE => ApiError::TooLarge(limit),
                    _ => ApiError::BadRequest(format!("cannot read the body: {e}")),
                }),
        }
    }
}

/// A JSON body: size-limited by the router, depth-checked before parsing.
pub struct Body<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Body<T>
where
    App: axum::extract::FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let app = <App as axum::extract::FromRef<S>>::from_ref(state);
        let max_json_depth = app.games.limits().max_json_depth;
        let RawBody(bytes) = RawBody::from_request(req, state).await?;
        parse_json(&bytes, max_json_depth).map(Body)
    }
}

pub(super) fn parse_json<T: DeserializeOwned>(
    bytes: &[u8],
    max_depth: usize,
) -> Result<T, ApiError> {
    if too_deep(bytes, max_depth) {
        return Err(ApiError::BadRequest(format!(
            "the JSON nests deeper than {max_depth} levels"
        )));
    }
    serde_json::from_slice(bytes)
        .map_err(|e| ApiError::BadRequest(format!("invalid JSON body: {e}")))
}

/// A path's game id.
pub struct GameIdPath(pub u64);

impl<S: Send + Sync> FromRequestParts<S> for GameIdPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let Path(id) = Path::<String>::from_request_parts(parts, state)
            .await
            .map_err(|e: PathRejection| ApiError::BadRequest(e.body_text()))?;
        id.parse::<u64>().map(GameIdPath).map_err(|_| {
            ApiError::NotFound(format!(
                "no game '{}' on this server: game ids are numbers",
                render_id(&id)
            ))
        })
    }
}

/// An id as given, cut and stripped of control characters, to quote it back.
pub(super) fn render_id(id: &str) -> String {
    id.chars().filter(|c| !c.is_control()).take(40).collect()
}

/// Query parameters.
pub struct Params<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Params<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(t)| Params(t))
            .map_err(|e: QueryRejection| ApiError::BadRequest(e.body_text()))
    }
}
