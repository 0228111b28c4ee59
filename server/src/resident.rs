//! The server's own resident memory, for its memory budget ([`Limits::max_memory_bytes`]).
//!
//! [`Limits::max_memory_bytes`]: crate::Limits::max_memory_bytes

/// The process's resident set size in bytes, from `/proc/self/statm`; `None` where the system does not
/// say (the memory budget then cannot be kept, and is not).
pub fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages.saturating_mul(page_size()))
}

/// The machine's physical memory in bytes, from `/proc/meminfo`; `None` where the system does not say.
pub fn physical_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|line| line.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// The size of a memory page: 4 KiB on the systems `/proc/self/statm` exists on, unless the auxiliary
/// vector says otherwise.
fn page_size() -> u64 {
    // /proc/self/auxv holds (key, value) pairs of native words; AT_PAGESZ is 6.
    const AT_PAGESZ: u64 = 6;
    if let Ok(auxv) = std::fs::read("/proc/self/auxv") {
        let word = std::mem::size_of::<usize>();
        for pair in auxv.chunks_exact(word * 2) {
            let read = |bytes: &[u8]| {
                let mut buf = [0u8; 8];
                buf[..word].copy_from_slice(bytes);
                u64::from_ne_bytes(buf)
            };
            if read(&pair[..word]) == AT_PAGESZ {
                return read(&pair[word..]);
            }
        }
    }
    4096
}

#[cfg(test)]
mod tests {
    #[test]
    fn resident_size_is_read_where_the_system_says_it() {
        if std::path::Path::new("/proc/self/statm").exists() {
            let resident = super::resident_bytes().expect("statm is readable");
            // A test process holds at least its own code and stack, and less than the machine.
            assert!(resident > 1 << 20, "{resident}");
            assert!(resident < super::physical_bytes().expect("meminfo is readable"));
        }
    }
}
