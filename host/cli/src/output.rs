//! What every command shares to answer: writing to stdout without panicking on a closed pipe
//! (`outln!`, `out!`), JSON output, and the [`Status`] a command ends with.

use std::io::Write as _;

/// `println!` that hands a write error (a closed pipe) back to the caller instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {
        writeln!(std::io::stdout().lock(), $($arg)*)?
    };
}

/// `print!` that hands a write error back to the caller instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {
        write!(std::io::stdout().lock(), $($arg)*)?
    };
}

/// Whether a command that ran to its end succeeded (a failure already printed its reason).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Exit 0.
    Success,
    /// Exit 1.
    Failure,
    /// Exit 3: `act` saved the action, but showing its result failed (the plugin failed while answering).
    SavedNotShown,
}

impl Status {
    /// The process exit status: 0, 1, or 3 ([`Status::SavedNotShown`]).
    pub fn code(self) -> u8 {
        match self {
            Status::Success => 0,
            Status::Failure => 1,
            Status::SavedNotShown => 3,
        }
    }
}

pub(crate) fn print_json(value: &serde_json::Value) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

/// Whether an error is a write to a closed pipe.
pub(crate) fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
