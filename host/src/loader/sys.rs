//! The few C library functions the loader needs beyond `libloading`, declared by hand (the host links the
//! C library anyway).

use std::ffi::{c_int, c_void};

unsafe extern "C" {
    fn getuid() -> u32;
    fn getgid() -> u32;
}

/// The real user id of this process.
pub fn uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { getuid() }
}

/// The real group id of this process.
pub fn gid() -> u32 {
    // SAFETY: getgid has no preconditions and cannot fail.
    unsafe { getgid() }
}

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
pub use linux::*;

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod linux {
    use super::{c_int, c_void};

    /// `struct sigaction` of the Linux C libraries (glibc, musl) on x86-64 and AArch64.
    #[repr(C)]
    #[derive(Clone, Copy)]
    pub struct SigAction {
        pub handler: usize,
        pub mask: [u64; 16],
        pub flags: c_int,
        pub restorer: usize,
    }

    /// `struct dl_phdr_info` (the fields read).
    #[repr(C)]
    pub struct DlPhdrInfo {
        pub addr: usize,
        pub name: *const u8,
        pub phdr: *const Elf64Phdr,
        pub phnum: u16,
    }

    /// `Elf64_Phdr`.
    #[repr(C)]
    pub struct Elf64Phdr {
        pub p_type: u32,
        pub p_flags: u32,
        pub p_offset: u64,
        pub p_vaddr: u64,
        pub p_paddr: u64,
        pub p_filesz: u64,
        pub p_memsz: u64,
        pub p_align: u64,
    }

    /// `struct link_map` (the first field read).
    #[repr(C)]
    pub struct LinkMap {
        pub addr: usize,
    }

    pub const PT_LOAD: u32 = 1;
    pub const PF_X: u32 = 1;
    pub const PF_R: u32 = 4;
    pub const RTLD_DI_LINKMAP: c_int = 2;
    pub const SA_SIGINFO: c_int = 4;
    pub const SA_ONSTACK: c_int = 0x0800_0000;
    pub const SIG_DFL: usize = 0;
    pub const SIG_IGN: usize = 1;
    pub const SIGILL: c_int = 4;
    pub const SIGABRT: c_int = 6;
    pub const SIGBUS: c_int = 7;
    pub const SIGFPE: c_int = 8;
    pub const SIGSEGV: c_int = 11;

    unsafe extern "C" {
        pub fn dlinfo(handle: *mut c_void, request: c_int, info: *mut c_void) -> c_int;
        pub fn dl_iterate_phdr(
            callback: extern "C" fn(*mut DlPhdrInfo, usize, *mut c_void) -> c_int,
            data: *mut c_void,
        ) -> c_int;
        pub fn sigaction(signal: c_int, new: *const SigAction, old: *mut SigAction) -> c_int;
        pub fn sigemptyset(set: *mut [u64; 16]) -> c_int;
        pub fn raise(signal: c_int) -> c_int;
        pub fn write(fd: c_int, buf: *const c_void, count: usize) -> isize;
        pub fn _exit(status: c_int) -> !;
        pub fn atexit(function: extern "C" fn()) -> c_int;
    }
}
