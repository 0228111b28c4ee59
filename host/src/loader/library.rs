//! One loaded library, leaked and never unloaded, and every call into it: status, out buffer, poisoning.

use crate::origin::Origin;
use coffer_core::abi::{self, Buf, LogSink, StrRef, VTable};
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::loader::calls::{Call, InCall, Subject};
use crate::loader::error::LoadError;
use crate::loader::paths::identity_of;

/// One loaded library, leaked: never unloaded (see the module docs).
pub(crate) struct Library {
    /// The resolved path.
    pub(crate) path: PathBuf,
    /// Device and inode: the identity of the file loaded.
    pub(crate) file: (u64, u64),
    pub(crate) name: String,
    pub(crate) subject: &'static Subject,
    pub(crate) vt: &'static VTable,
    pub(crate) poisoned: AtomicBool,
    /// The first panic: the call and the plugin's message.
    pub(crate) first_panic: Mutex<Option<String>>,
    pub(crate) _lib: &'static libloading::Library,
}

/// Every library loaded by this process.
pub(crate) static LOADED: Mutex<Vec<&'static Library>> = Mutex::new(Vec::new());

/// A failed call.
pub(crate) enum Failure {
    Refused(Vec<u8>),
    Panicked(String),
    Poisoned,
}

impl Library {
    /// Calls into the library unless it is poisoned; copies the out buffer and frees it with the plugin's
    /// own function; a panic poisons the library.
    pub(crate) fn call(
        &'static self,
        call: Call,
        f: impl FnOnce(&VTable, *mut Buf) -> abi::Status,
    ) -> Result<Vec<u8>, Failure> {
        if self.poisoned.load(Ordering::Relaxed) {
            return Err(Failure::Poisoned);
        }
        self.call_anyway(call, f)
    }

    /// As [`Library::call`] for the hot path, whose answers are all in out-parameters: success with an
    /// untouched out buffer returns at once, without building a byte vector.
    #[inline]
    pub(crate) fn call_hot(
        &'static self,
        call: Call,
        f: impl FnOnce(&VTable, *mut Buf) -> abi::Status,
    ) -> Result<(), Failure> {
        if self.poisoned.load(Ordering::Relaxed) {
            return Err(Failure::Poisoned);
        }
        let mut out = Buf::EMPTY;
        let status = {
            let _in_call = InCall::enter(self.subject, call);
            f(self.vt, &mut out)
        };
        if status == abi::OK && out.ptr.is_null() {
            return Ok(());
        }
        self.finish(call, status, out).map(drop)
    }

    /// As [`Library::call`], also when poisoned (read-only calls).
    pub(crate) fn call_anyway(
        &'static self,
        call: Call,
        f: impl FnOnce(&VTable, *mut Buf) -> abi::Status,
    ) -> Result<Vec<u8>, Failure> {
        let mut out = Buf::EMPTY;
        let status = {
            let _in_call = InCall::enter(self.subject, call);
            f(self.vt, &mut out)
        };
        self.finish(call, status, out)
    }

    /// Reads a call's answer: copies the out buffer and frees it with the plugin's own function; a panic
    /// (or an unknown status) poisons the library.
    #[cold]
    pub(crate) fn finish(
        &'static self,
        call: Call,
        status: abi::Status,
        mut out: Buf,
    ) -> Result<Vec<u8>, Failure> {
        let bytes = if out.ptr.is_null() {
            Vec::new()
        } else {
            // SAFETY: `out` was filled by the plugin during this call and is freed just below, once.
            let bytes = unsafe { out.as_slice() }.to_vec();
            let _in_call = InCall::enter(self.subject, Call::FreeBuf);
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (self.vt.free_buf)(&mut out) };
            bytes
        };
        match status {
            abi::OK => Ok(bytes),
            abi::REFUSED => Err(Failure::Refused(bytes)),
            other => {
                let message = if other == abi::PANICKED {
                    String::from_utf8_lossy(&bytes).into_owned()
                } else {
                    format!("unknown status {other}")
                };
                let message = format!(
                    "{message} (in the call `{call}` to library {})",
                    self.path.display()
                );
                self.poisoned.store(true, Ordering::Relaxed);
                let mut first = self.first_panic.lock().unwrap_or_else(|e| e.into_inner());
                first.get_or_insert_with(|| message.clone());
                tracing::error!(target: "coffer_host::loader", plugin = %self.path.display(), "plugin panicked and is now poisoned: {message}");
                Err(Failure::Panicked(message))
            }
        }
    }

    /// What a failure was, in words, naming the library and the call.
    pub(crate) fn describe(&self, call: Call, failure: &Failure) -> String {
        let what = match failure {
            Failure::Refused(b) => format!("it refused: {}", String::from_utf8_lossy(b)),
            Failure::Panicked(m) => format!("it panicked: {m}"),
            Failure::Poisoned => {
                let first = self.first_panic.lock().unwrap_or_else(|e| e.into_inner());
                match first.as_deref() {
                    Some(m) => format!("the library is poisoned: it panicked earlier: {m}"),
                    None => "the library is poisoned (it panicked earlier)".to_owned(),
                }
            }
        };
        format!(
            "plugin library {} failed in the call `{call}`: {what}",
            self.path.display()
        )
    }

    pub(crate) fn init_logging(&'static self) -> Result<(), LoadError> {
        let max_level = match tracing::level_filters::LevelFilter::current().into_level() {
            None => 0,
            Some(tracing::Level::ERROR) => 1,
            Some(tracing::Level::WARN) => 2,
            Some(tracing::Level::INFO) => 3,
            Some(tracing::Level::DEBUG) => 4,
            Some(_) => 5,
        };
        let sink = LogSink {
            ctx: (self as *const Library).cast(),
            max_level,
            log: log_from_plugin,
        };
        self.call(Call::Init, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (vt.init)(&sink, out) }
        })
        .map(drop)
        .map_err(|f| self.plugin_error("initialising", f))
    }

    pub(crate) fn plugin_error(&self, during: &'static str, failure: Failure) -> LoadError {
        let message = match failure {
            Failure::Refused(b) => String::from_utf8_lossy(&b).into_owned(),
            Failure::Panicked(m) => format!("panicked: {m}"),
            Failure::Poisoned => "the library is poisoned (it panicked earlier)".to_owned(),
        };
        LoadError::Plugin {
            path: self.path.clone(),
            during,
            message,
        }
    }
}

/// Receives a plugin's log records and forwards them to `tracing`, naming the library.
pub(crate) extern "C" fn log_from_plugin(
    ctx: *const c_void,
    level: u8,
    target: StrRef,
    message: StrRef,
) {
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: `ctx` is the `&'static Library` this host passed at init; libraries are never freed.
        let lib = unsafe { &*ctx.cast::<Library>() };
        // SAFETY: the plugin passes strings valid for the duration of this call.
        let target = unsafe { target.to_str(1024) }.unwrap_or("?");
        // SAFETY: as above.
        let message = unsafe { message.to_str(1 << 20) }.unwrap_or("<unreadable message>");
        let plugin = lib.name.as_str();
        match level {
            1 => {
                tracing::error!(target: "coffer::plugin", plugin, plugin_target = target, "{message}")
            }
            2 => {
                tracing::warn!(target: "coffer::plugin", plugin, plugin_target = target, "{message}")
            }
            3 => {
                tracing::info!(target: "coffer::plugin", plugin, plugin_target = target, "{message}")
            }
            4 => {
                tracing::debug!(target: "coffer::plugin", plugin, plugin_target = target, "{message}")
            }
            _ => {
                tracing::trace!(target: "coffer::plugin", plugin, plugin_target = target, "{message}")
            }
        }
    });
}

/// Called after a library's hash was checked and before it is loaded; for tests only (see
/// [`set_after_hash_hook`]).
pub(crate) type AfterHashHook = Box<dyn Fn(&Path) + Send + Sync>;

pub(crate) static AFTER_HASH: Mutex<Option<AfterHashHook>> = Mutex::new(None);

/// For tests of the check-then-load race: `hook` runs with each library's path (as given) after its
/// checks and hash and before it is loaded, so a test can swap the file in between, deterministically.
/// `None` removes it. Not for other uses.
#[doc(hidden)]
pub fn set_after_hash_hook(hook: Option<AfterHashHook>) {
    *AFTER_HASH.lock().unwrap_or_else(|e| e.into_inner()) = hook;
}

/// Whether the library an [`Origin::Library`] names panicked and is poisoned; `None` for a ruleset that was not
/// loaded at runtime by this module.
pub fn is_poisoned(origin: &Origin) -> Option<bool> {
    let Origin::Library(path) = origin else {
        return None;
    };
    let identity = identity_of(path)?;
    let loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    loaded
        .iter()
        .find(|l| l.file == identity)
        .map(|l| l.poisoned.load(Ordering::Relaxed))
}
