//! The crash and exit handlers (Linux on x86-64 and AArch64): a plugin that crashes or calls `exit` during a
//! call ends the process with a message naming the library and the call.

use crate::loader::calls::this_thread_in_call;
use crate::loader::limits::{EXIT_CRASHED, EXIT_EXITED};

use crate::loader::sys::{self, SigAction};
use std::ffi::{c_int, c_void};
use std::sync::OnceLock;

const SIGNALS: [(c_int, &str); 5] = [
    (sys::SIGSEGV, "SIGSEGV, an invalid memory access"),
    (sys::SIGBUS, "SIGBUS, an invalid memory access"),
    (sys::SIGABRT, "SIGABRT, an abort"),
    (sys::SIGILL, "SIGILL, an illegal instruction"),
    (sys::SIGFPE, "SIGFPE, an arithmetic fault"),
];

/// The handlers installed before ours, chained to outside plugin calls.
static PREVIOUS: OnceLock<[SigAction; 5]> = OnceLock::new();

pub fn install() {
    let mut previous = [SigAction {
        handler: sys::SIG_DFL,
        mask: [0; 16],
        flags: 0,
        restorer: 0,
    }; 5];
    for (i, (signal, _)) in SIGNALS.iter().enumerate() {
        // SAFETY: reads the current action into a valid `SigAction`; changes nothing.
        unsafe { sys::sigaction(*signal, std::ptr::null(), &mut previous[i]) };
    }
    if PREVIOUS.set(previous).is_err() {
        return;
    }
    let mut ours = SigAction {
        handler: on_fault as extern "C" fn(c_int, *mut c_void, *mut c_void) as usize,
        mask: [0; 16],
        flags: sys::SA_SIGINFO | sys::SA_ONSTACK,
        restorer: 0,
    };
    // SAFETY: initialises the mask of a valid `SigAction`.
    unsafe { sys::sigemptyset(&mut ours.mask) };
    for (signal, _) in SIGNALS {
        // SAFETY: installs a handler that only reads atomics and thread-local cells, writes with
        // `write` and ends with `_exit`, or chains to the previous handler.
        unsafe { sys::sigaction(signal, &ours, std::ptr::null_mut()) };
    }
    // SAFETY: registers a plain function; it runs at `exit` on the exiting thread.
    unsafe { sys::atexit(on_exit) };
}

/// Ends the process at once: no destructors, no `atexit` handlers, no other thread's code.
pub fn exit_now(status: i32) -> ! {
    // SAFETY: `_exit` is always safe to call; it does not return.
    unsafe { sys::_exit(status) }
}

fn write_all(parts: &[&[u8]]) {
    for part in parts {
        let mut rest = *part;
        while !rest.is_empty() {
            // SAFETY: writes bytes of a live slice to stderr; `write` is async-signal-safe.
            let n = unsafe { sys::write(2, rest.as_ptr().cast(), rest.len()) };
            if n <= 0 {
                return;
            }
            rest = &rest[n as usize..];
        }
    }
}

// The statuses as the handlers write them (no formatting in a signal handler).
const _: () = assert!(EXIT_CRASHED == 125 && EXIT_EXITED == 123);

extern "C" fn on_fault(signal: c_int, info: *mut c_void, context: *mut c_void) {
    let index = SIGNALS.iter().position(|(s, _)| *s == signal).unwrap_or(0);
    if let Some((subject, call)) = this_thread_in_call() {
        write_all(&[
            b"error: plugin library ",
            &subject.path,
            b" crashed (",
            SIGNALS[index].1.as_bytes(),
            b") during the call `",
            call.as_bytes(),
            b"`; the process ends with status 125\n",
        ]);
        exit_now(EXIT_CRASHED);
    }
    chain(index, signal, info, context);
}

/// Hands a signal that did not come from a plugin call to the handler installed before ours.
fn chain(index: usize, signal: c_int, info: *mut c_void, context: *mut c_void) {
    let Some(previous) = PREVIOUS.get().map(|p| p[index]) else {
        return;
    };
    if matches!(signal, sys::SIGSEGV | sys::SIGBUS) && previous.handler > sys::SIG_IGN {
        // The fault is the host's own, and the handler before ours ends the process: std's
        // stack-overflow handler reports and calls `abort`. Its SIGABRT must not come back here:
        // on the nearly full alternate signal stack a second frame (a few KiB with AVX-512 state)
        // overflows it, and the kernel ends the process with SIGSEGV instead of the report's abort.
        let default = SigAction {
            handler: sys::SIG_DFL,
            mask: [0; 16],
            flags: 0,
            restorer: 0,
        };
        // SAFETY: restores the default action of SIGABRT; `sigaction` is async-signal-safe.
        unsafe { sys::sigaction(sys::SIGABRT, &default, std::ptr::null_mut()) };
    }
    match previous.handler {
        sys::SIG_IGN => {}
        sys::SIG_DFL => {
            let default = SigAction {
                handler: sys::SIG_DFL,
                mask: [0; 16],
                flags: 0,
                restorer: 0,
            };
            // SAFETY: restores the default action, then raises the signal again: it is delivered
            // when this handler returns (a fault recurs anyway) and ends the process as it would have.
            unsafe {
                sys::sigaction(signal, &default, std::ptr::null_mut());
                sys::raise(signal);
            }
        }
        handler if previous.flags & sys::SA_SIGINFO != 0 => {
            // SAFETY: the previous action was installed with SA_SIGINFO, so `handler` is a
            // three-argument signal handler; it gets the arguments this one received.
            let handler: extern "C" fn(c_int, *mut c_void, *mut c_void) =
                unsafe { std::mem::transmute(handler) };
            handler(signal, info, context);
        }
        handler => {
            // SAFETY: the previous action was installed without SA_SIGINFO, so `handler` is a
            // one-argument signal handler.
            let handler: extern "C" fn(c_int) = unsafe { std::mem::transmute(handler) };
            handler(signal);
        }
    }
}

extern "C" fn on_exit() {
    if let Some((subject, call)) = this_thread_in_call() {
        write_all(&[
            b"error: plugin library ",
            &subject.path,
            b" ended the process (it called exit) during the call `",
            call.as_bytes(),
            b"`; a plugin ending the process is a failure: the process ends with status 123\n",
        ]);
        exit_now(EXIT_EXITED);
    }
}
