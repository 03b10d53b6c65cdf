//! Giving memory back after a burst of load: tables that grew with a big
//! tree shrink once most of it is forgotten, and the heap returns its free
//! pages to the system. Without these the daemon would stay at its
//! high-water mark (issue 13: a 100,000-file bundle listed once kept it
//! hundreds of MiB above its idle size).

use std::collections::HashMap;
use std::hash::Hash;

/// Below this capacity a table is not worth shrinking.
const SMALLEST_WORTH_SHRINKING: usize = 4096;

/// Shrinks `map` when it holds less than a quarter of its room. Amortised:
/// after a shrink the map must grow four times over before the next.
pub fn shrink_if_sparse<K: Eq + Hash, V>(map: &mut HashMap<K, V>) {
    if map.capacity() > SMALLEST_WORTH_SHRINKING && map.capacity() > 4 * map.len() {
        map.shrink_to_fit();
    }
}

/// Tunes the heap for a long-running daemon whose load comes in bursts:
/// two arenas instead of one per thread (the FUSE threads' short-lived
/// allocations spread over a dozen arenas leave each too fragmented to give
/// back), and tables of 256 KiB or more always in their own mapping (glibc
/// otherwise raises that threshold after the first big free, and the next
/// big table lands in the heap, where it pins everything above it). Call it
/// before the threads start.
pub fn tune_heap() {
    const OWN_MAPPING_FROM: libc::c_int = 256 * 1024;
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only sets allocator parameters, under the allocator's
    // own lock; it is safe from any thread (arenas made before stay, no more
    // are made).
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
        libc::mallopt(libc::M_MMAP_THRESHOLD, OWN_MAPPING_FROM);
    }
}

/// Returns the heap's free memory to the system. The allocator keeps what a
/// burst freed (100,000 inodes after `ls -lR` of a big bundle, a lockfile
/// parsed again) for reuse, so without this the resident size would stay at
/// its high-water mark long after the load went away.
pub fn give_memory_back() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only walks the allocator's own free lists (under
    // its locks) and returns pages to the kernel; it touches no memory in
    // use and is safe to call from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_shrinks_once_mostly_empty_and_not_before() {
        let mut map: HashMap<u64, u64> = (0..100_000).map(|i| (i, i)).collect();
        let full = map.capacity();
        map.retain(|k, _| *k < 40_000);
        // (The capacity a map reports does not count removed slots.)
        let before = map.capacity();
        shrink_if_sparse(&mut map);
        assert_eq!(map.capacity(), before, "well over a quarter full: kept");
        map.retain(|k, _| *k < 1_000);
        shrink_if_sparse(&mut map);
        assert!(map.capacity() < full / 10, "{} of {full}", map.capacity());
        assert_eq!(map.len(), 1_000);
        assert_eq!(map.get(&999), Some(&999));
    }
}
