//! Entry points of the fuzz targets (`fuzz/` at the repository root). Not part of the API.

use crate::registry::Registry;
use crate::save::file::SaveFile;
use crate::save::games::ReadForUpdate;

/// Reads `text` the ways the commands do: as `load` (parse and checks), as `update` (the log read as
/// text), and as `replay` (everything, then the log replayed). Returns whether `load` accepts it.
///
/// # Panics
/// When the readers disagree: `load` and `update` accept different saves, or refuse one with
/// different messages, or `replay` accepts a save that `load` refuses.
pub fn read_every_way(text: &str, registry: &Registry) -> bool {
    let loaded = SaveFile::parse(text)
        .and_then(|f| f.restore(registry))
        .map(|g| g.state_hash())
        .map_err(|e| e.to_string());
    let updated = ReadForUpdate::parse(text)
        .and_then(|r| r.view.checked(registry))
        .map(|(_, g)| g.state_hash())
        .map_err(|e| e.to_string());
    assert_eq!(
        loaded, updated,
        "load and update read this save differently"
    );
    let replayed = SaveFile::parse(text).and_then(|f| f.replay(registry));
    assert!(
        loaded.is_ok() || replayed.is_err(),
        "replay accepts a save that load refuses"
    );
    loaded.is_ok()
}
