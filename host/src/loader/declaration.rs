//! Checks of what a library declares before anything it points to is followed: the declaration, its strings,
//! its vtable and every function pointer, against the library's loaded segments; then its versions.

use coffer_core::abi::{self, Declaration, Header, StrRef, VTable};
use std::ffi::c_void;
use std::path::Path;

use crate::loader::calls::{VTABLE_ENTRIES, VTABLE_FIELDS};
use crate::loader::error::LoadError;
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
use crate::loader::sys;

/// Longest version string read from a declaration.
pub const MAX_VERSION_LEN: usize = 256;

/// The loaded segments of one library: start, end and ELF permission flags. Empty where they cannot be
/// read, and then only null and alignment are checked.
#[derive(Default)]
pub(crate) struct Segments(Vec<(usize, usize, u32)>);

pub(crate) const SEGMENT_READ: u32 = 4;
pub(crate) const SEGMENT_EXEC: u32 = 1;

impl Segments {
    pub(crate) fn known(&self) -> bool {
        !self.0.is_empty()
    }

    /// Whether `len` bytes from `addr` lie in one segment with all of `flags`.
    pub(crate) fn holds(&self, addr: usize, len: usize, flags: u32) -> bool {
        if !self.known() {
            return true;
        }
        let Some(end) = addr.checked_add(len) else {
            return false;
        };
        self.0
            .iter()
            .any(|&(s, e, f)| f & flags == flags && s <= addr && end <= e && addr < e)
    }

    pub(crate) fn readable(&self, addr: usize, len: usize) -> bool {
        self.holds(addr, len.max(1), SEGMENT_READ)
    }

    pub(crate) fn executable(&self, addr: usize) -> bool {
        self.holds(addr, 1, SEGMENT_EXEC)
    }
}

/// The `PT_LOAD` segments of a loaded library, from its program headers (`dlinfo`, `dl_iterate_phdr`).
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
pub(crate) fn segments_of(handle: *mut c_void) -> Segments {
    struct Search {
        base: usize,
        found: Vec<(usize, usize, u32)>,
    }
    extern "C" fn visit(info: *mut sys::DlPhdrInfo, _size: usize, data: *mut c_void) -> i32 {
        // SAFETY: `dl_iterate_phdr` passes a valid `dl_phdr_info` and our `Search` back.
        let (info, search) = unsafe { (&*info, &mut *data.cast::<Search>()) };
        if info.addr != search.base || info.phdr.is_null() {
            return 0;
        }
        // SAFETY: `phdr` points to `phnum` program headers of this object, mapped while it is loaded.
        let headers = unsafe { std::slice::from_raw_parts(info.phdr, usize::from(info.phnum)) };
        for h in headers.iter().filter(|h| h.p_type == sys::PT_LOAD) {
            let start = info.addr.wrapping_add(h.p_vaddr as usize);
            search
                .found
                .push((start, start.saturating_add(h.p_memsz as usize), h.p_flags));
        }
        1
    }
    const _: () = assert!(sys::PF_R == SEGMENT_READ && sys::PF_X == SEGMENT_EXEC);
    let mut map: *mut sys::LinkMap = std::ptr::null_mut();
    // SAFETY: a live handle from `dlopen`; RTLD_DI_LINKMAP writes a `struct link_map *`.
    let ok = unsafe { sys::dlinfo(handle, sys::RTLD_DI_LINKMAP, (&raw mut map).cast()) } == 0;
    if !ok || map.is_null() {
        return Segments::default();
    }
    // SAFETY: the link map of a loaded object, alive while it is loaded (forever: never unloaded).
    let base = unsafe { (*map).addr };
    let mut search = Search {
        base,
        found: Vec::new(),
    };
    // SAFETY: `visit` only reads what it is passed and writes into `search`, which outlives the call.
    unsafe { sys::dl_iterate_phdr(visit, (&raw mut search).cast()) };
    Segments(search.found)
}

#[cfg(all(
    unix,
    not(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))
))]
pub(crate) fn segments_of(_: *mut c_void) -> Segments {
    Segments::default()
}

pub(crate) fn bad_declaration(path: &Path, field: impl Into<String>, reason: String) -> LoadError {
    LoadError::BadDeclaration {
        path: path.to_owned(),
        field: field.into(),
        reason,
    }
}

pub(crate) fn declaration(
    path: &Path,
    lib: &'static libloading::Library,
    symbol: &str,
    segments: &Segments,
) -> Result<&'static Declaration, LoadError> {
    let no_symbol = || LoadError::NoDeclaration {
        path: path.to_owned(),
        symbol: symbol.to_owned(),
    };
    // SAFETY: the symbol is read as the address of a static; nothing is called. The library is leaked by
    // the caller on every path (never unloaded), so the address stays valid for 'static.
    let address: *const Header = unsafe { lib.get::<*const Header>(symbol.as_bytes()) }
        .map(|s| *s)
        .map_err(|_| no_symbol())?;
    if address.is_null() {
        return Err(no_symbol());
    }
    let at = address as usize;
    let field = "declaration";
    if !segments.readable(at, std::mem::size_of::<Header>()) {
        return Err(bad_declaration(
            path,
            field,
            format!("'{symbol}' at {at:#x} lies outside the library's readable segments"),
        ));
    }
    let align = std::mem::align_of::<Declaration>();
    if !at.is_multiple_of(align) {
        return Err(bad_declaration(
            path,
            field,
            format!(
                "'{symbol}' is misaligned: its address {at:#x} is {} past a multiple of {align}",
                at % align
            ),
        ));
    }
    // SAFETY: 16 readable bytes of the library (checked above, where segments are known); unaligned read
    // in case a foreign library placed it oddly.
    let header = unsafe { address.read_unaligned() };
    if header.magic != abi::MAGIC {
        return Err(LoadError::BadMagic {
            path: path.to_owned(),
            symbol: symbol.to_owned(),
            found: header.magic,
            expected: abi::MAGIC,
        });
    }
    if header.abi_version != abi::ABI_VERSION {
        return Err(LoadError::AbiVersion {
            path: path.to_owned(),
            plugin: header.abi_version,
            host: abi::ABI_VERSION,
        });
    }
    let host_size = std::mem::size_of::<Declaration>() as u32;
    if header.size != host_size {
        return Err(LoadError::DeclarationSize {
            path: path.to_owned(),
            plugin: header.size,
            host: host_size,
        });
    }
    if !segments.readable(at, std::mem::size_of::<Declaration>()) {
        return Err(bad_declaration(
            path,
            field,
            format!("'{symbol}' at {at:#x} does not fit in the library's readable segments"),
        ));
    }
    // SAFETY: magic, ABI version and size match, the whole `Declaration` is readable and aligned (checked),
    // every bit pattern is a valid `Declaration` (integers and raw pointers), and it lives as long as the
    // library, which is never unloaded.
    Ok(unsafe { &*address.cast::<Declaration>() })
}

/// Checks every string and pointer of a checked declaration before following it, then its versions;
/// returns its vtable.
pub(crate) fn check_declaration(
    path: &Path,
    decl: &Declaration,
    segments: &Segments,
) -> Result<&'static VTable, LoadError> {
    let text = |field: &'static str, s: StrRef| {
        let bad = |reason: String| bad_declaration(path, field, reason);
        if s.len > MAX_VERSION_LEN {
            return Err(bad(format!(
                "is {} bytes long, more than the {MAX_VERSION_LEN} allowed",
                s.len
            )));
        }
        if s.len == 0 {
            return Ok("");
        }
        let at = s.ptr as usize;
        if s.ptr.is_null() {
            return Err(bad(format!("is a null pointer with length {}", s.len)));
        }
        if !segments.readable(at, s.len) {
            return Err(bad(format!(
                "points to {at:#x} ({} bytes), outside the library's readable segments",
                s.len
            )));
        }
        // SAFETY: `len` (bounded) readable bytes of the library (checked where segments are known),
        // which is never unloaded; checked as UTF-8 below.
        let bytes = unsafe { std::slice::from_raw_parts(s.ptr, s.len) };
        std::str::from_utf8(bytes).map_err(|e| bad(format!("is not UTF-8 text ({e})")))
    };
    let core = text("core_version", decl.core_version)?;
    let rustc = text("rustc_version", decl.rustc_version)?;
    let panic = text("panic_strategy", decl.panic_strategy)?;
    let vt = check_vtable(path, decl.vtable, segments)?;
    if !abi::core_compatible(abi::CORE_VERSION, core) {
        return Err(LoadError::CoreVersion {
            path: path.to_owned(),
            plugin: core.to_owned(),
            host: abi::CORE_VERSION.to_owned(),
        });
    }
    if rustc != abi::RUSTC_VERSION {
        return Err(LoadError::RustcVersion {
            path: path.to_owned(),
            plugin: rustc.to_owned(),
            host: abi::RUSTC_VERSION.to_owned(),
        });
    }
    if panic != abi::PANIC_STRATEGY || panic != "unwind" {
        return Err(LoadError::PanicStrategy {
            path: path.to_owned(),
            plugin: panic.to_owned(),
            host: abi::PANIC_STRATEGY.to_owned(),
        });
    }
    Ok(vt)
}

/// The vtable a declaration points to, once it is non-null, aligned, readable, and each of its function
/// pointers is non-null and inside the library's executable segments.
pub(crate) fn check_vtable(
    path: &Path,
    vtable: *const VTable,
    segments: &Segments,
) -> Result<&'static VTable, LoadError> {
    let at = vtable as usize;
    let bad = |reason: String| bad_declaration(path, "vtable", reason);
    if vtable.is_null() {
        return Err(bad("is a null pointer".to_owned()));
    }
    let align = std::mem::align_of::<VTable>();
    if !at.is_multiple_of(align) {
        return Err(bad(format!(
            "is misaligned: its address {at:#x} is {} past a multiple of {align}",
            at % align
        )));
    }
    if !segments.readable(at, std::mem::size_of::<VTable>()) {
        return Err(bad(format!(
            "points to {at:#x}, outside the library's readable segments"
        )));
    }
    // SAFETY: aligned, readable (checked where segments are known) memory of the library's size of a
    // `VTable`, read as plain addresses: every bit pattern is a valid `usize`.
    let entries: [usize; VTABLE_ENTRIES] =
        unsafe { vtable.cast::<[usize; VTABLE_ENTRIES]>().read() };
    for (entry, name) in entries.iter().zip(VTABLE_FIELDS) {
        let field = format!("vtable entry {name}");
        if *entry == 0 {
            return Err(bad_declaration(
                path,
                field,
                "is a null function pointer".to_owned(),
            ));
        }
        if !segments.executable(*entry) {
            return Err(bad_declaration(
                path,
                field,
                format!("points to {entry:#x}, outside the library's executable segments"),
            ));
        }
    }
    // SAFETY: every entry is a non-null address inside the library's code (checked where segments are
    // known), so the table is a valid `VTable` of function pointers; the library is never unloaded.
    Ok(unsafe { &*vtable })
}
