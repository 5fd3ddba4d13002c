//! The command line's allocator below the counting layer ([`arcbatch::dsl::memory`]):
//! mimalloc through its plain entry points ([`WordAligned`]), with a small per-thread stack of
//! recently freed blocks in front of it ([`Recent`]).
//!
//! Values are small and short-lived: a step builds a tuple or a set, the next reads it, and it
//! is freed a few microseconds later. mimalloc hands out blocks from a page's free list and
//! puts freed ones on another list that it reads only when the first runs dry, so the block
//! a `malloc` returns was usually freed long before and is no longer in the cache: most of
//! mimalloc's own time in `arcbatch run` was one load, of that block's link, waiting on memory
//! (docs/performance.md). A freed block of up to 64 KiB is kept instead on a stack of its size
//! class, and the next request of that class takes the block freed last, which is still in
//! the cache, without reading it.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::UnsafeCell;

/// mimalloc, through its plain entry points for what asks no more than a word's alignment
/// (all but a few of the program's allocations), with [`Recent`] in front of them. The
/// `mimalloc` crate calls `mi_malloc_aligned` for every allocation, which checks the
/// alignment of the block it finds and takes a slower path for blocks over 1 KB: 3 % of the
/// instructions of `run` on the training tasks where CPython takes 0.3 to 2 ms (callgrind,
/// 2026-11-28).
pub struct WordAligned;

const WORD: usize = std::mem::size_of::<usize>();

extern "C" {
    fn mi_malloc(size: usize) -> *mut libc::c_void;
    fn mi_zalloc(size: usize) -> *mut libc::c_void;
    fn mi_realloc(p: *mut libc::c_void, size: usize) -> *mut libc::c_void;
    fn mi_free(p: *mut libc::c_void);
    fn mi_option_set(option: libc::c_int, value: libc::c_long);
}

/// Size classes of [`Recent`], those of mimalloc's own bins: up to [`SMALL_UP_TO`] bytes,
/// every multiple of [`GRAIN`]; above it, four per doubling (80, 96, 112, 128, 160, ...
/// bytes) up to [`KEPT_UP_TO`]. A request is served from the smallest class that holds it, and
/// mimalloc is asked for that class's size, which it rounds to the same bin: a kept block
/// costs no memory that mimalloc would not have used.
const GRAIN: usize = 8;
const SMALL_UP_TO: usize = 64;
const SMALL_CLASSES: usize = SMALL_UP_TO / GRAIN;
const KEPT_UP_TO: usize = 64 << 10;
/// Four classes per doubling from `SMALL_UP_TO` to `KEPT_UP_TO`.
const CLASSES: usize = SMALL_CLASSES + 4 * (KEPT_UP_TO.trailing_zeros() - SMALL_UP_TO.trailing_zeros()) as usize;
/// Blocks kept per class at most: of a class of up to 1 KiB, and of a larger one. A thread
/// keeps at most 0.42 MB of each. A kept block is memory that mimalloc cannot give to another
/// class: with four blocks of each larger class (1.68 MB), a run of the training tasks went on
/// to two fresh huge pages, zeroed by the kernel on first touch, and none with one.
const PER_SMALL_CLASS: u8 = 64;
const PER_LARGE_CLASS: u8 = 1;
/// The first class of blocks over 1 KiB.
const FIRST_LARGE_CLASS: usize = class(1 << 10) + 1;
const PER_CLASS_ROOM: usize = PER_SMALL_CLASS as usize;

/// The class of a request of `size` bytes, `None` where it is not kept (over [`KEPT_UP_TO`]):
/// up to 1 KiB (nearly all requests), one comparison and [`CLASS_BY_GRAINS`] read, where
/// [`class`] takes a dozen instructions above 64 bytes.
#[inline]
fn kept_class(size: usize) -> Option<usize> {
    match size {
        1..=TABLED_UP_TO => Some(CLASS_BY_GRAINS[(size - 1) / GRAIN] as usize),
        AFTER_TABLED..=KEPT_UP_TO => Some(class(size)),
        _ => None,
    }
}

/// The largest size whose class is read from [`CLASS_BY_GRAINS`].
const TABLED_UP_TO: usize = 1 << 10;
/// The smallest size whose class is not read from [`CLASS_BY_GRAINS`].
const AFTER_TABLED: usize = TABLED_UP_TO + 1;

/// [`class`] of the sizes up to [`TABLED_UP_TO`], by `(size - 1) / GRAIN`: every class's
/// size is a multiple of [`GRAIN`], so the sizes of a grain share a class.
const CLASS_BY_GRAINS: [u8; TABLED_UP_TO / GRAIN] = {
    let mut classes = [0; TABLED_UP_TO / GRAIN];
    let mut grains = 0;
    while grains < classes.len() {
        classes[grains] = class((grains + 1) * GRAIN) as u8;
        grains += 1;
    }
    classes
};

/// The class of a request of `size` bytes (1 to [`KEPT_UP_TO`]), from the bits of `size - 1`.
const fn class(size: usize) -> usize {
    if size <= SMALL_UP_TO {
        return (size - 1) / GRAIN;
    }
    // `size - 1` in [2^e, 2^(e+1)): its next two bits after the leading one pick the quarter.
    let e = (usize::BITS - 1 - (size - 1).leading_zeros()) as usize;
    let quarter = ((size - 1) >> (e - 2)) & 3;
    SMALL_CLASSES + 4 * (e - SMALL_UP_TO.trailing_zeros() as usize) + quarter
}

/// The size of the blocks of `class`: the largest request it serves.
#[inline]
fn class_size(class: usize) -> usize {
    if class < SMALL_CLASSES {
        return (class + 1) * GRAIN;
    }
    let (doubling, quarter) = ((class - SMALL_CLASSES) / 4, (class - SMALL_CLASSES) % 4);
    (5 + quarter) << (SMALL_UP_TO.trailing_zeros() as usize + doubling - 2)
}

/// The size mimalloc is asked for: sizes up to [`KEPT_UP_TO`] rounded up to their class, so
/// that every block freed with such a layout has room for any request of its class. (A block
/// is freed with the layout it was last allocated or reallocated with.)
#[inline]
fn asked(size: usize) -> usize {
    match kept_class(size) {
        Some(class) => class_size(class),
        None => size,
    }
}

/// One thread's recently freed blocks, a stack per size class.
struct Recent {
    /// Blocks kept per class, at most [`PER_CLASS_ROOM`].
    len: [u8; CLASSES],
    /// Blocks each class may keep: [`PER_SMALL_CLASS`] or [`PER_LARGE_CLASS`] while this
    /// thread keeps freed blocks (see [`keep_freed_blocks_on_this_thread`]), none otherwise, so
    /// that a free tests one number for both.
    room: [u8; CLASSES],
    /// The stacks, each class's [`PER_CLASS_ROOM`] in a row: one array, so that a block's
    /// place is one index off the thread's own address, which one instruction reads.
    blocks: [*mut u8; PER_CLASS_ROOM * CLASSES],
}

thread_local! {
    // Constant-initialised and without a destructor: reading it never allocates, as an
    // allocator must not. A thread that keeps blocks hands them back before it ends
    // ([`release_this_threads_blocks`]); others never keep any.
    static RECENT: UnsafeCell<Recent> = const {
        UnsafeCell::new(Recent {
            len: [0; CLASSES],
            room: [0; CLASSES],
            blocks: [std::ptr::null_mut(); PER_CLASS_ROOM * CLASSES],
        })
    };
}

impl Recent {
    /// The block freed last in `class`, if one is kept.
    #[inline]
    fn take(&mut self, class: usize) -> Option<*mut u8> {
        let n = self.len[class];
        if n == 0 {
            return None;
        }
        self.len[class] = n - 1;
        // SAFETY: `class < CLASSES` (its length was read) and `n - 1 < n <= PER_CLASS_ROOM`.
        Some(unsafe { *self.blocks.get_unchecked(class * PER_CLASS_ROOM + n as usize - 1) })
    }

    /// Keeps `block` of `class`; false where the class has no room (none while this thread
    /// keeps no blocks).
    #[inline]
    fn keep(&mut self, class: usize, block: *mut u8) -> bool {
        let n = self.len[class];
        if n >= self.room[class] {
            return false;
        }
        // SAFETY: `class < CLASSES` (its length was read) and `n < room <= PER_CLASS_ROOM`.
        unsafe { *self.blocks.get_unchecked_mut(class * PER_CLASS_ROOM + n as usize) = block };
        self.len[class] = n + 1;
        true
    }
}

/// Runs `f` on this thread's [`Recent`].
#[inline]
fn with_recent<R>(f: impl FnOnce(&mut Recent) -> R) -> R {
    // SAFETY: the cell is this thread's own, and no reference to it outlives `f`, which calls
    // nothing that allocates (so nothing re-enters it).
    RECENT.with(|r| f(unsafe { &mut *r.get() }))
}

/// Lets this thread keep the blocks it frees (see the module's doc). Only for threads that
/// call [`release_this_threads_blocks`] before they end (the pool's workers, through its
/// exit handler) or that end with the process (the main thread): a thread that ended with
/// blocks kept would leave them allocated for good.
pub fn keep_freed_blocks_on_this_thread() {
    with_recent(|r| {
        for (class, room) in r.room.iter_mut().enumerate() {
            *room = match class < FIRST_LARGE_CLASS {
                true => PER_SMALL_CLASS,
                false => PER_LARGE_CLASS,
            };
        }
    });
}

/// Hands this thread's kept blocks back to mimalloc and keeps no more.
pub fn release_this_threads_blocks() {
    with_recent(|r| r.room = [0; CLASSES]);
    for class in 0..CLASSES {
        while let Some(block) = with_recent(|r| r.take(class)) {
            // SAFETY: a kept block came from mimalloc and is not in use.
            unsafe { mi_free(block.cast()) };
        }
    }
}

// SAFETY: every block mimalloc hands out is word-aligned (a page's first block is 16-byte
// aligned, and blocks are whole numbers of words), so its plain entry points serve any layout
// aligned to a word or less; the rest goes to its aligned ones, through the crate. Both kinds
// are freed by `mi_free`. A kept block is one freed with a layout of its class, so it has room
// for any request of that class (see `asked`), and it is handed out once: taken off the stack.
unsafe impl GlobalAlloc for WordAligned {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let size = layout.size();
        if layout.align() > WORD {
            return mimalloc::MiMalloc.alloc(layout);
        }
        match kept_class(size) {
            Some(class) => alloc_in(class),
            None => mi_malloc(size).cast(),
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match layout.align() <= WORD {
            true => mi_zalloc(asked(layout.size())).cast(),
            false => mimalloc::MiMalloc.alloc_zeroed(layout),
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match kept_class(layout.size()).filter(|_| layout.align() <= WORD) {
            Some(class) => free_in(class, ptr),
            None => mimalloc::MiMalloc.dealloc(ptr, layout),
        }
    }

    /// A block of up to [`KEPT_UP_TO`] bytes resized within its class stays where it is: it
    /// has room for the whole class (see `asked`). Resized to another class, it is copied to
    /// a block of that class, taken from [`Recent`] as [`GlobalAlloc::alloc`] does, and freed as
    /// [`GlobalAlloc::dealloc`] does (kept, where there is room): mimalloc would move it too
    /// (its bins are the classes), but to a block from its free lists, and free the first to
    /// them.
    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let size = layout.size();
        if layout.align() > WORD {
            return mimalloc::MiMalloc.realloc(ptr, layout, new_size);
        }
        let (Some(class), Some(new_class)) = (kept_class(size), kept_class(new_size)) else {
            return mi_realloc(ptr.cast(), asked(new_size)).cast();
        };
        if class == new_class {
            return ptr;
        }
        let block = alloc_in(new_class);
        if !block.is_null() {
            // SAFETY: both blocks hold at least the smaller of the two sizes, and are distinct
            // (the first is in use until freed below, so never handed out by `alloc_in`).
            std::ptr::copy_nonoverlapping(ptr, block, size.min(new_size));
            free_in(class, ptr);
        }
        block
    }
}

/// A block of `class` for a request of at most a word's alignment: the one of the class freed
/// last on this thread, else a new one of the class's size.
///
/// # Safety
///
/// As [`GlobalAlloc::alloc`]'s.
#[inline]
unsafe fn alloc_in(class: usize) -> *mut u8 {
    match with_recent(|r| r.take(class)) {
        Some(block) => block,
        None => mi_malloc(class_size(class)).cast(),
    }
}

/// Frees `block`, of `class` and at most a word's alignment: kept where its class's stack has
/// room, else handed back to mimalloc.
///
/// # Safety
///
/// As [`GlobalAlloc::dealloc`]'s.
#[inline]
unsafe fn free_in(class: usize, block: *mut u8) {
    if !with_recent(|r| r.keep(class, block)) {
        mi_free(block.cast());
    }
}

/// mimalloc's `mi_option_purge_delay` (15 in the option enums of both its v2 and v3).
const MI_OPTION_PURGE_DELAY: libc::c_int = 15;

/// Tells mimalloc never to hand freed memory back to the system (unless
/// `MIMALLOC_PURGE_DELAY` says otherwise). A batched step frees megabytes that the next one
/// allocates again; returned after mimalloc's delay, they came back as fresh pages that the
/// kernel zeroed on first touch: 3 to 4 of `batt --cross`'s 55 CPU-s were system time, most of
/// it that, 0.4 to 0.7 without (peak memory 440 to 500 MB).
pub fn keep_freed_memory() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets one integer option; mimalloc reads it when it next considers purging.
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_size_takes_the_smallest_class_that_holds_it() {
        for size in 1..=KEPT_UP_TO {
            let c = class(size);
            assert_eq!(kept_class(size), Some(c));
            assert!(c < CLASSES, "{size}");
            assert!(class_size(c) >= size, "{size} in class {c} of {}", class_size(c));
            if c > 0 {
                assert!(class_size(c - 1) < size, "{size} fits class {}", c - 1);
            }
            assert_eq!(asked(size), class_size(c));
        }
        assert_eq!(class_size(CLASSES - 1), KEPT_UP_TO);
        assert_eq!(class_size(FIRST_LARGE_CLASS - 1), 1 << 10);
        assert_eq!(kept_class(0), None);
        assert_eq!(kept_class(KEPT_UP_TO + 1), None);
        assert_eq!(asked(KEPT_UP_TO + 1), KEPT_UP_TO + 1);
    }

    /// Blocks freed on a thread that keeps them come back last in, first out, by class, and are
    /// handed back to mimalloc when the thread stops keeping them; a thread that does not keep
    /// them frees them at once.
    #[test]
    fn freed_blocks_are_reused_last_first_and_released() {
        std::thread::spawn(|| unsafe {
            let layout = Layout::from_size_align(33, 8).unwrap();
            let a = WordAligned.alloc(layout);
            WordAligned.dealloc(a, layout);
            assert!(with_recent(|r| r.len.iter().all(|&n| n == 0)), "kept while off");
            keep_freed_blocks_on_this_thread();
            let (b, c) = (WordAligned.alloc(layout), WordAligned.alloc(layout));
            WordAligned.dealloc(b, layout);
            WordAligned.dealloc(c, layout);
            // A request of another size of the same class takes the block freed last.
            let d = WordAligned.alloc(Layout::from_size_align(40, 8).unwrap());
            assert_eq!(d, c);
            d.write_bytes(7, 40);
            WordAligned.dealloc(d, Layout::from_size_align(40, 8).unwrap());
            release_this_threads_blocks();
            assert!(with_recent(|r| r.len.iter().all(|&n| n == 0)));
            let e = WordAligned.alloc(layout);
            WordAligned.dealloc(e, layout);
            assert!(with_recent(|r| r.len.iter().all(|&n| n == 0)), "kept after release");
        })
        .join()
        .unwrap();
    }

    /// A block resized within its class stays where it is; resized to another class, it moves
    /// with its bytes, and the block it leaves is the next one of its class handed out.
    #[test]
    fn a_block_moves_only_when_resized_to_another_class() {
        std::thread::spawn(|| unsafe {
            keep_freed_blocks_on_this_thread();
            let (small, same_class) = (Layout::from_size_align(33, 8).unwrap(), 40);
            let a = WordAligned.alloc(small);
            a.write_bytes(7, small.size());
            assert_eq!(WordAligned.realloc(a, small, same_class), a);
            let b = WordAligned.realloc(a, Layout::from_size_align(same_class, 8).unwrap(), 300);
            assert_ne!(b, a);
            assert!((0..small.size()).all(|i| *b.add(i) == 7));
            let c = WordAligned.alloc(small);
            assert_eq!(c, a);
            WordAligned.dealloc(c, small);
            WordAligned.dealloc(b, Layout::from_size_align(300, 8).unwrap());
            release_this_threads_blocks();
        })
        .join()
        .unwrap();
    }
}
