//! [`Shared`]: the reference-counted pointer that values hold their grids, point sets, tuples,
//! sets and closures in: `std::sync::Arc`'s thread-safe sharing, without the atomic
//! instructions it spends on a value that is dropped by its only holder.
//!
//! Most values are built by one step, read by the next and dropped unshared. `Arc` decrements
//! its count with a locked instruction on every drop, and when that was the last reference
//! decrements its weak count with another, before it frees the block: two full memory
//! barriers, about 12 ns on the development machine, where allocating and freeing the same
//! block takes 10 (docs/performance.md). A `Shared` has no weak count, and its holder frees
//! it without an atomic write when it reads a count of one: no other reference exists then,
//! and none can appear, since a reference is only made by cloning one that exists.
//!
//! Values every thread uses all the time (each primitive as a function value, the empty
//! containers) are [immortal](Shared::immortal): never freed, and cloned and dropped without
//! writing their count, so that one table serves every thread without the threads taking the
//! count's cache line from each other.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::atomic::{fence, AtomicUsize, Ordering};

/// A thread-safe reference-counted pointer to a `T`, as `std::sync::Arc<T>` without weak
/// references (see the module's doc).
pub struct Shared<T> {
    ptr: NonNull<Counted<T>>,
    /// The pointer owns a `Counted<T>`, as `Arc` does (its auto traits and drop check).
    owns: PhantomData<Counted<T>>,
}

/// The block a [`Shared`] points at: the number of references to it, then the value.
struct Counted<T> {
    count: AtomicUsize,
    value: T,
}

// SAFETY: as `Arc<T>`: every holder reads the value through a shared reference (which needs
// `T: Sync`), and whichever holder drops the last reference drops the value on its own thread
// (which needs `T: Send`). The count is only changed atomically, but by the last holder.
unsafe impl<T: Send + Sync> Send for Shared<T> {}
// SAFETY: see `Send`; `&Shared<T>` gives only `&T` and clones.
unsafe impl<T: Send + Sync> Sync for Shared<T> {}

/// A clone that would take a count to this aborts the process, as `Arc`'s do: a count that
/// wrapped would free a value still in use, and one that reached [`IMMORTAL`] would never free
/// it. (Only a program that leaked billions of clones could get there.)
const MAX_COUNT: usize = isize::MAX as usize;

/// The count of an [immortal](Shared::immortal) value, above every count a mortal one reaches.
const IMMORTAL: usize = MAX_COUNT + 1;

impl<T> Shared<T> {
    pub fn new(value: T) -> Shared<T> {
        let block = Box::new(Counted {
            count: AtomicUsize::new(1),
            value,
        });
        Shared {
            ptr: NonNull::from(Box::leak(block)),
            owns: PhantomData,
        }
    }

    /// A value that is never freed, whose clones and drops leave its count alone (see the
    /// module's doc). For values that live as long as the process: each call leaks one.
    pub fn immortal(value: T) -> Shared<T> {
        let shared = Shared::new(value);
        shared.counted().count.store(IMMORTAL, Ordering::Relaxed);
        shared
    }

    fn counted(&self) -> &Counted<T> {
        // SAFETY: the block lives while a reference to it does, and `self` is one.
        unsafe { self.ptr.as_ref() }
    }

    /// Whether two pointers point at the same value.
    pub fn ptr_eq(a: &Shared<T>, b: &Shared<T>) -> bool {
        a.ptr == b.ptr
    }

    /// The address of the value, for identity (as `Arc::as_ptr`).
    pub fn as_ptr(this: &Shared<T>) -> *const T {
        &this.counted().value
    }

    /// How many references there are: a reading that other threads may change at once, exact
    /// only where none of them holds one.
    pub fn strong_count(this: &Shared<T>) -> usize {
        this.counted().count.load(Ordering::Acquire)
    }

    /// The value to change in place, where `this` is its only reference.
    pub fn get_mut(this: &mut Shared<T>) -> Option<&mut T> {
        if this.counted().count.load(Ordering::Acquire) != 1 {
            return None;
        }
        // SAFETY: the only reference is `this`, borrowed mutably here: no other can read the
        // value (none can be made without this one), and the acquiring load saw every earlier
        // holder's release of it.
        Some(unsafe { &mut (*this.ptr.as_ptr()).value })
    }
}

impl<T> Clone for Shared<T> {
    #[inline]
    fn clone(&self) -> Shared<T> {
        // Relaxed, as `Arc`'s: a new reference is made from an existing one, which keeps the
        // value alive; nothing is read through the count. A mortal count never becomes an
        // immortal one, or the reverse.
        let count = &self.counted().count;
        if count.load(Ordering::Relaxed) < IMMORTAL && count.fetch_add(1, Ordering::Relaxed) >= MAX_COUNT {
            std::process::abort();
        }
        Shared {
            ptr: self.ptr,
            owns: PhantomData,
        }
    }
}

impl<T> Drop for Shared<T> {
    #[inline]
    fn drop(&mut self) {
        let count = &self.counted().count;
        // A count of one is this reference alone: no other holder can clone or drop the value
        // meanwhile, and the acquiring load saw every other holder's releasing decrement, so
        // the value is freed without writing the count. Otherwise the count is decremented
        // (releasing this holder's uses of the value), and the holder that takes it to zero
        // frees the value, after an acquiring fence that orders the others' uses before it;
        // an immortal value's is left alone.
        let seen = count.load(Ordering::Acquire);
        if seen != 1 {
            if seen >= IMMORTAL || count.fetch_sub(1, Ordering::Release) != 1 {
                return;
            }
            fence(Ordering::Acquire);
        }
        // SAFETY: the last reference is this one (see above).
        unsafe { free(self.ptr) }
    }
}

/// Drops the value of a block and frees it: out of line, so that a drop of a value that holds
/// any of several kinds of container is a test per kind, not each kind's freeing inlined.
///
/// # Safety
///
/// `block` came from `Box::leak` in [`Shared::new`], and no reference to it is left.
#[inline(never)]
unsafe fn free<T>(block: NonNull<Counted<T>>) {
    // SAFETY: see the function's contract.
    unsafe { drop(Box::from_raw(block.as_ptr())) }
}

impl<T> Deref for Shared<T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        &self.counted().value
    }
}

impl<T> AsRef<T> for Shared<T> {
    fn as_ref(&self) -> &T {
        self
    }
}

impl<T> From<T> for Shared<T> {
    fn from(value: T) -> Shared<T> {
        Shared::new(value)
    }
}

impl<T: Default> Default for Shared<T> {
    fn default() -> Shared<T> {
        Shared::new(T::default())
    }
}

impl<T: PartialEq> PartialEq for Shared<T> {
    fn eq(&self, other: &Shared<T>) -> bool {
        **self == **other
    }
}

impl<T: Eq> Eq for Shared<T> {}

impl<T: PartialOrd> PartialOrd for Shared<T> {
    fn partial_cmp(&self, other: &Shared<T>) -> Option<std::cmp::Ordering> {
        (**self).partial_cmp(&**other)
    }
}

impl<T: Ord> Ord for Shared<T> {
    fn cmp(&self, other: &Shared<T>) -> std::cmp::Ordering {
        (**self).cmp(&**other)
    }
}

impl<T: Hash> Hash for Shared<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (**self).hash(state)
    }
}

impl<T: fmt::Debug> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: fmt::Display> fmt::Display for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

/// A [`Shared`] value read from a value that holds one, borrowed (reading it changes no count),
/// or one built for the reading (a grid from a tuple of rows).
pub enum SharedRef<'a, T> {
    Held(&'a Shared<T>),
    Built(Shared<T>),
}

impl<T> SharedRef<'_, T> {
    /// The value as a reference of its own.
    pub fn into_shared(self) -> Shared<T> {
        match self {
            SharedRef::Held(v) => v.clone(),
            SharedRef::Built(v) => v,
        }
    }
}

impl<T> Deref for SharedRef<'_, T> {
    type Target = Shared<T>;

    fn deref(&self) -> &Shared<T> {
        match self {
            SharedRef::Held(v) => v,
            SharedRef::Built(v) => v,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Counts its drops in the counter it is given.
    struct Tracked<'a>(&'a AtomicUsize);

    impl Drop for Tracked<'_> {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn the_value_is_dropped_once_with_its_last_reference() {
        let drops = AtomicUsize::new(0);
        let a = Shared::new(Tracked(&drops));
        let b = a.clone();
        let c = b.clone();
        assert_eq!(Shared::strong_count(&a), 3);
        assert!(Shared::ptr_eq(&a, &c));
        drop(a);
        drop(c);
        assert_eq!(drops.load(Ordering::Relaxed), 0, "one reference is left");
        assert_eq!(Shared::strong_count(&b), 1);
        drop(b);
        assert_eq!(drops.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn only_the_only_reference_changes_the_value() {
        let mut a = Shared::new(vec![1, 2]);
        let b = a.clone();
        assert!(Shared::get_mut(&mut a).is_none(), "shared with b");
        drop(b);
        Shared::get_mut(&mut a).expect("unique").push(3);
        assert_eq!(*a, [1, 2, 3]);
    }

    #[test]
    fn an_immortal_value_is_never_dropped_and_its_count_never_moves() {
        // Kept where the process keeps its immortal values, in a static (which Miri's leak
        // check knows to be reachable).
        static DROPS: AtomicUsize = AtomicUsize::new(0);
        static VALUE: std::sync::LazyLock<Shared<Tracked<'static>>> =
            std::sync::LazyLock::new(|| Shared::immortal(Tracked(&DROPS)));
        let before = Shared::strong_count(&VALUE);
        let clones: Vec<_> = (0..10).map(|_| VALUE.clone()).collect();
        assert_eq!(Shared::strong_count(&VALUE), before);
        let mut last = VALUE.clone();
        assert!(Shared::get_mut(&mut last).is_none(), "never the only reference");
        drop(clones);
        drop(last);
        assert_eq!(Shared::strong_count(&VALUE), before);
        assert_eq!(DROPS.load(Ordering::Relaxed), 0);
    }

    /// Threads clone and drop references to one value at once, each ending with its own: the
    /// value is dropped exactly once, after the last of them, whichever thread holds it.
    #[test]
    fn threads_sharing_a_value_drop_it_once() {
        static DROPS: AtomicUsize = AtomicUsize::new(0);
        for round in 0..20 {
            let shared = Shared::new(Tracked(&DROPS));
            let handles: Vec<_> = (0..4)
                .map(|t| {
                    let mine = shared.clone();
                    std::thread::spawn(move || {
                        let mut kept = Vec::new();
                        for k in 0..2000 {
                            kept.push(mine.clone());
                            if (k + t) % 3 == 0 {
                                kept.clear();
                            }
                        }
                        drop(mine);
                        kept
                    })
                })
                .collect();
            drop(shared);
            let left: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
            assert_eq!(DROPS.load(Ordering::Relaxed), round, "references remain");
            drop(left);
            assert_eq!(DROPS.load(Ordering::Relaxed), round + 1);
        }
    }

    /// Threads read a value's contents through their own references and drop them while the
    /// main thread drops its own, so that whichever comes last frees it: under Miri, a drop
    /// that frees without seeing every other holder's reads (a relaxed count, no acquiring
    /// fence) is a data race on the contents.
    #[test]
    fn the_last_holder_frees_after_every_other_holders_reads() {
        for _ in 0..10 {
            let shared = Shared::new(vec![1u64, 2, 3]);
            let handles: Vec<_> = (0..3)
                .map(|_| {
                    let mine = shared.clone();
                    std::thread::spawn(move || {
                        let sum: u64 = mine.iter().sum();
                        drop(mine);
                        sum
                    })
                })
                .collect();
            drop(shared);
            for h in handles {
                assert_eq!(h.join().unwrap(), 6);
            }
        }
    }

    #[test]
    fn shared_values_cross_threads_as_arcs_do() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Shared<Vec<u8>>>();
    }
}
