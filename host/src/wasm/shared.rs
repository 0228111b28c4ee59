//! What a ruleset of a WebAssembly module and its games share: the module's pool of instances, the
//! ruleset's index and description; making a game in an instance, and making it again in a fresh one.

use coffer_core::Description;
use coffer_core::abi::{self, OK};
use std::path::PathBuf;
use std::sync::Arc;

use crate::wasm::instance::{Fault, Live, Pool};
use crate::wasm::track::{Checkpoint, Logged, Track};

/// What a ruleset of a module and its games share.
pub(crate) struct Shared {
    /// The module's file, resolved.
    pub(crate) path: PathBuf,
    pub(crate) index: u32,
    pub(crate) description: Description,
    pub(crate) id: Arc<str>,
    pub(crate) pool: Arc<Pool>,
}

impl Shared {
    /// The ruleset and its module, for messages.
    pub(crate) fn named(&self) -> String {
        format!(
            "ruleset '{}' (WebAssembly module {})",
            self.id,
            self.path.display()
        )
    }

    /// Why a game was stopped, in words naming the ruleset, the call and the cause.
    pub(crate) fn stopped_message(&self, call: &str, fault: &Fault) -> String {
        format!(
            "{} was stopped in the call `{call}`: {}; this game takes no more actions, the others go on",
            self.named(),
            fault.cause()
        )
    }

    /// Makes the game again in `live` from its checkpoint and the actions since; returns its handle.
    pub(crate) fn rebuild(&self, live: &mut Live, track: &Track) -> Result<u32, Fault> {
        let diverged = |what: &str| Fault::Trapped(format!("it did not {what} the same way again"));
        let reply = match &track.checkpoint {
            Checkpoint::Setup(json) => {
                let len = live.input(json)?;
                live.call(|f, s| f.new_game.call(s, (self.index, len)))?
            }
            Checkpoint::Snapshot(format, bytes) => {
                let len = live.input(bytes)?;
                let code = u32::from(abi::format_code(*format));
                live.call(|f, s| f.restore.call(s, (self.index, code, len)))?
            }
        };
        if reply.status != OK {
            return Err(diverged("set the game up"));
        }
        let handle = reply.value;
        for logged in &track.log {
            let reply = match *logged {
                Logged::Legal(player, index) => {
                    live.call(|f, s| f.apply_legal.call(s, (handle, u32::from(player), index)))?
                }
                Logged::Json(player, n) => {
                    let len = live.input(track.texts[n as usize].as_bytes())?;
                    live.call(|f, s| f.apply_json.call(s, (handle, u32::from(player), len)))?
                }
                Logged::Playout(n) => {
                    let ([high, low], applied) = track.playouts[n as usize];
                    let reply =
                        live.call(|f, s| f.playout.call(s, (handle, high, low, applied)))?;
                    if reply.wide != applied {
                        return Err(diverged("play a playout"));
                    }
                    reply
                }
            };
            if reply.status != OK {
                return Err(diverged("apply an action"));
            }
        }
        Ok(handle)
    }
}
