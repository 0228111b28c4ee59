//! Where a `coffer-server` just started listens: the first line it prints says. Shared by the API tests
//! (`tests/it/support.rs`) and the history benchmark (`benches/history.rs`), each of which includes
//! this file.

use std::io::{BufRead as _, BufReader};
use std::net::SocketAddr;
use std::process::Child;

/// Reads the server's first line from its piped stdout and the address in it.
///
/// # Errors
/// What went wrong, in words: no piped stdout, nothing read, or a line without an address.
pub fn listening(child: &mut Child) -> Result<SocketAddr, String> {
    let stdout = child
        .stdout
        .take()
        .ok_or("the server's stdout is not piped")?;
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .map_err(|e| format!("the server's first line: {e}"))?;
    line.split("http://")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|addr| addr.parse().ok())
        .ok_or_else(|| format!("the server did not say where it listens: {line:?}"))
}
