//! A WebAssembly game's recovery data: its checkpoint (its setup or a snapshot) and the actions applied
//! since, which rebuild it exactly in a fresh instance after another game's trap.

use coffer_core::Format;

/// A checkpoint is taken (a binary snapshot) when the log reaches this many entries...
pub(crate) const CHECKPOINT_EVERY: usize = 256;
/// ...or its JSON actions this many bytes: a game's recovery data stays small.
pub(crate) const CHECKPOINT_TEXT_BYTES: usize = 4096;

/// Where a game is rebuilt from.
#[derive(Clone)]
pub(crate) enum Checkpoint {
    /// The setup's JSON: `new_game` is deterministic.
    Setup(Box<[u8]>),
    /// A snapshot, in its format.
    Snapshot(Format, Box<[u8]>),
}

/// An action applied since the checkpoint.
#[derive(Clone, Copy)]
pub(crate) enum Logged {
    /// Legal action `index` of `player`.
    Legal(u16, u32),
    /// JSON action `texts[n]` of `player`.
    Json(u16, u32),
    /// Playout `playouts[n]`.
    Playout(u32),
}

/// A game's binding to its instance and what rebuilds it.
#[derive(Clone)]
pub(crate) struct Track {
    /// The generation of the instance `handle` belongs to.
    pub(crate) generation: u64,
    pub(crate) handle: u32,
    /// Why the game was stopped: every later call answers this.
    pub(crate) stopped: Option<String>,
    pub(crate) checkpoint: Checkpoint,
    pub(crate) log: Vec<Logged>,
    pub(crate) texts: Vec<Box<str>>,
    pub(crate) text_bytes: usize,
    pub(crate) playouts: Vec<([u64; 2], u64)>,
}

impl Track {
    pub(crate) fn new(generation: u64, handle: u32, checkpoint: Checkpoint) -> Track {
        Track {
            generation,
            handle,
            stopped: None,
            checkpoint,
            log: Vec::new(),
            texts: Vec::new(),
            text_bytes: 0,
            playouts: Vec::new(),
        }
    }

    pub(crate) fn due(&self) -> bool {
        self.log.len() >= CHECKPOINT_EVERY || self.text_bytes >= CHECKPOINT_TEXT_BYTES
    }
}
