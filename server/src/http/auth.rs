//! Bearer tokens: reading the `Authorization` header and finding the seat or audience it speaks for.

use super::*;

/// The bearer token of the request, if any.
pub(super) fn bearer(headers: &HeaderMap) -> Result<Option<&str>, ApiError> {
    match headers.get(header::AUTHORIZATION) {
        None => Ok(None),
        Some(value) => {
            let value = value
                .to_str()
                .map_err(|_| ApiError::BadRequest("the Authorization header is not text".into()))?;
            match value.split_once(' ') {
                Some((scheme, token))
                    if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() =>
                {
                    Ok(Some(token.trim()))
                }
                _ => Err(ApiError::BadRequest(
                    "the Authorization header must read 'Bearer <token>'".into(),
                )),
            }
        }
    }
}

/// The seat of a token, or 403.
pub(super) async fn seat_of(app: &App, slot: &Arc<Slot>, token: &str) -> Result<u16, ApiError> {
    Ok(app.games.seat_of(slot, token).await?)
}

/// Game `id`, the request's bearer token and its seat (401 without a token, 403 for another game's).
pub(super) async fn seated<'h>(
    app: &App,
    id: u64,
    headers: &'h HeaderMap,
) -> Result<(Arc<Slot>, &'h str, u16), ApiError> {
    let slot = app.games.find(id).await?;
    let token = bearer(headers)?.ok_or(GameError::Unauthorized)?;
    let seat = seat_of(app, &slot, token).await?;
    Ok((slot, token, seat))
}

/// The audience of a request: the seat of its token, or the spectators without one.
pub(super) async fn audience(
    app: &App,
    slot: &Arc<Slot>,
    token: Option<&str>,
) -> Result<Audience, ApiError> {
    match token {
        Some(token) => Ok(Some(Owner(seat_of(app, slot, token).await?))),
        None => Ok(None),
    }
}

// ----- schemas of the API document -----
