//! The kernel's flags of a mapping of this process, for tests of the
//! advice the engine gives (`/proc/self/smaps`). Shared by the library's
//! unit tests and the integration tests, each including this file.

/// The flags (`VmFlags` line of `/proc/self/smaps`) of the mapping that
/// holds `address`: `rr` is random-read advice, `sr` sequential, `hg`
/// huge pages; none when no mapping holds it.
pub fn mapping_flags(address: usize) -> Vec<String> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
    let mut inside = false;
    for line in smaps.lines() {
        // A mapping's first line starts with its range, `start-end` in hex.
        if let Some((range, _)) = line.split_once(' ')
            && let Some((start, end)) = range.split_once('-')
            && let (Ok(start), Ok(end)) = (
                usize::from_str_radix(start, 16),
                usize::from_str_radix(end, 16),
            )
        {
            inside = (start..end).contains(&address);
            continue;
        }
        if inside && let Some(flags) = line.strip_prefix("VmFlags:") {
            return flags.split_whitespace().map(str::to_owned).collect();
        }
    }
    Vec::new()
}
