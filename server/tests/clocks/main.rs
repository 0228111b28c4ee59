//! The clock tests, in a test binary of their own: they assert that a timeout fires within
//! 50 ms of its deadline, which holds on a quiet machine but not while the rest of the
//! server's suite (hundreds of servers and browsers) shares the same two cores in the same process
//! run. Cargo runs test binaries one after another, so these run beside each other only.

mod clocks;

// Shared with the `it` binary, of which this binary uses a part.
#[allow(dead_code)]
#[path = "../it/client.rs"]
pub mod client;
#[allow(dead_code)]
#[path = "../it/support.rs"]
pub mod support;

// Linked so that `Registry::with_static` finds them: the logs are replayed in this process.
use coffer_charges as _;
use coffer_command_tokens as _;
use coffer_story_acts as _;
