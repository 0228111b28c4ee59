//! A runtime-loaded ruleset: the [`DynRuleset`] backed by a library's vtable.

use coffer_core::abi::{self, GameHandle};
use coffer_core::{Description, DynGame, DynRuleset, Format, Setup, SetupError};
use std::sync::Arc;

use crate::loader::calls::Call;
use crate::loader::error::LoadError;
use crate::loader::library::Library;
use crate::loader::runtime_game::{RuntimeGame, setup_error};

/// A runtime-loaded ruleset.
pub(crate) struct RuntimeRuleset {
    pub(crate) lib: &'static Library,
    pub(crate) index: usize,
    pub(crate) description: Description,
    /// The description's id, shared by this ruleset's games.
    pub(crate) id: Arc<str>,
}

impl RuntimeRuleset {
    /// The rulesets of `lib`, wrapped.
    pub(crate) fn all_of(lib: &'static Library) -> Result<Vec<Arc<dyn DynRuleset>>, LoadError> {
        let mut count = 0usize;
        lib.call(Call::RulesetCount, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (vt.ruleset_count)(&mut count, out) }
        })
        .map_err(|f| lib.plugin_error("counting its rulesets", f))?;
        (0..count)
            .map(|index| {
                let bytes = lib
                    .call(Call::Describe, |vt, out| {
                        // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
                        // passed is valid for the whole call.
                        unsafe { (vt.describe)(index, out) }
                    })
                    .map_err(|f| lib.plugin_error("describing", f))?;
                let description: Description =
                    serde_json::from_slice(&bytes).map_err(|e| LoadError::Plugin {
                        path: lib.path.clone(),
                        during: "describing",
                        message: format!("unreadable description: {e}"),
                    })?;
                Ok(Arc::new(RuntimeRuleset {
                    lib,
                    index,
                    id: Arc::from(description.id.as_str()),
                    description,
                }) as Arc<dyn DynRuleset>)
            })
            .collect()
    }

    pub(crate) fn game(&self, handle: *mut GameHandle) -> Result<Box<dyn DynGame>, SetupError> {
        let mut game = RuntimeGame::new(self.lib, handle, Arc::clone(&self.id), 0);
        let mut players = 0u16;
        let h = handle.cast_const();
        self.lib
            .call(Call::Players, |vt, out| {
                // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
                // passed is valid for the whole call.
                unsafe { (vt.players)(h, &mut players, out) }
            })
            .map_err(|f| setup_error(f, &self.description.id))?;
        game.players = players;
        Ok(Box::new(game))
    }
}

impl DynRuleset for RuntimeRuleset {
    fn description(&self) -> &Description {
        &self.description
    }

    fn new_game(&self, setup: &Setup) -> Result<Box<dyn DynGame>, SetupError> {
        let json = serde_json::to_vec(setup).map_err(|e| SetupError::Config(e.to_string()))?;
        let mut handle: *mut GameHandle = std::ptr::null_mut();
        self.lib
            .call(Call::NewGame, |vt, out| {
                // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
                // passed is valid for the whole call.
                unsafe { (vt.new_game)(self.index, json.as_ptr(), json.len(), &mut handle, out) }
            })
            .map_err(|f| setup_error(f, &self.description.id))?;
        self.game(handle)
    }

    fn restore(&self, format: Format, bytes: &[u8]) -> Result<Box<dyn DynGame>, SetupError> {
        let mut handle: *mut GameHandle = std::ptr::null_mut();
        let code = abi::format_code(format);
        self.lib
            .call(Call::Restore, |vt, out| {
                // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
                // passed is valid for the whole call.
                unsafe {
                    (vt.restore)(
                        self.index,
                        code,
                        bytes.as_ptr(),
                        bytes.len(),
                        &mut handle,
                        out,
                    )
                }
            })
            .map_err(|f| setup_error(f, &self.description.id))?;
        self.game(handle)
    }
}
