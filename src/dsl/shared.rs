//! [`Shared`]: the reference-counted pointer that values hold their grids, point sets, tuples,
//! sets and closures in: `std::sync::Arc`'s thread-safe sharing, without the atomic
//! instructions it spends on a value that is dropped by its only holder.
//!
//! A point set is a slice in the block of its count (`Shared<[T]>`, built by
//! [`SliceBuilder`]): one allocation per value, and a read of a point one load fewer than
//! through a vector of its own.
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
//!
//! A clone, and the drop of a value that others hold too, still take a locked instruction
//! each: 4 % of `run`'s time over the published solvers. Inside [`confined`], where a thread
//! runs a program whose values no other thread sees, the values it makes are *confined* to it:
//! their counts carry the thread's mark and change by plain loads and stores, by that thread
//! only. Whatever of them leaves the confined work for other threads is
//! [published](Shared::publish) first (the run's outputs), which makes its count an ordinary
//! one. Another thread that clones or drops a confined value (a value that was not published:
//! a bug) panics before it writes the count, so that a count is never written by two threads
//! without atomic instructions, whatever the callers do: a missed publication is a panic on the
//! thread that received the value (outside any guarded run, so it ends the command), never a
//! data race.

use std::cell::Cell;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};

/// A thread-safe reference-counted pointer to a `T`, as `std::sync::Arc<T>` without weak
/// references (see the module's doc).
pub struct Shared<T: ?Sized> {
    ptr: NonNull<Counted<T>>,
    /// The pointer owns a `Counted<T>`, as `Arc` does (its auto traits and drop check).
    owns: PhantomData<Counted<T>>,
}

/// The block a [`Shared`] points at: the number of references to it, then the value. The
/// count comes first whatever `T` is, so that the compiler merges the arms of a value's clone
/// and drop that count the references of its several kinds of block into one.
#[repr(C)]
struct Counted<T: ?Sized> {
    count: AtomicUsize,
    value: T,
}

// SAFETY: as `Arc<T>`: every holder reads the value through a shared reference (which needs
// `T: Sync`), and whichever holder drops the last reference drops the value on its own thread
// (which needs `T: Send`). A shared count is only changed atomically, but by the last holder;
// a confined one only by its own thread (any other panics before it writes it).
unsafe impl<T: Send + Sync + ?Sized> Send for Shared<T> {}
// SAFETY: see `Send`; `&Shared<T>` gives only `&T` and clones.
unsafe impl<T: Send + Sync + ?Sized> Sync for Shared<T> {}

/// A block's count word takes one of three forms:
///
/// - shared: the number of references, below [`CONFINED`], changed atomically by any holder;
/// - confined to a thread: [`CONFINED`], the thread's number from bit [`OWNER_SHIFT`] and the
///   number of references in the bits of [`CONFINED_COUNT`], changed by that thread alone;
/// - immortal: [`IMMORTAL`] or above, never changed.
const CONFINED: usize = 1 << 62;

/// The count of an [immortal](Shared::immortal) value, above every count a mortal one reaches.
const IMMORTAL: usize = 1 << 63;

/// Where a confined count's owner starts, and the bits of its number of references.
const OWNER_SHIFT: u32 = 32;
const CONFINED_COUNT: usize = (1 << OWNER_SHIFT) - 1;

/// A clone that would take a shared count to this aborts the process, as `Arc`'s do: a count
/// that wrapped would free a value still in use, and one that reached [`CONFINED`] would be
/// read as a confined one. (Only a program that leaked billions of clones could get there; a
/// confined count aborts at [`CONFINED_COUNT`] references.)
const MAX_COUNT: usize = CONFINED - 1;

/// Thread numbers fit in the 30 bits between [`OWNER_SHIFT`] and [`CONFINED`]; a thread past
/// them confines nothing.
const MAX_OWNER: usize = (CONFINED >> OWNER_SHIFT) - 1;

/// Whether [`confined`] confines (see [`allow_confinement`]).
static CONFINEMENT: AtomicBool = AtomicBool::new(false);

/// The next thread number to hand out (0 is no thread's).
static NEXT_OWNER: AtomicUsize = AtomicUsize::new(1);

/// What [`MARK`] holds before its thread's first confined work: a word that no count's bits
/// above [`CONFINED_COUNT`] are (shared counts are below [`CONFINED`], immortal ones at
/// [`IMMORTAL`]), so that a thread without a mark takes no count for its own.
const NO_MARK: usize = !CONFINED_COUNT;

/// What [`MARK`] holds in a thread that came after the numbers ran out: no count's either.
const NO_NUMBER_LEFT: usize = NO_MARK ^ (1 << OWNER_SHIFT);

thread_local! {
    /// This thread's mark (`CONFINED | number << OWNER_SHIFT`), [`NO_MARK`] before its first
    /// confined work.
    static MARK: Cell<usize> = const { Cell::new(NO_MARK) };
    /// The count word a new block starts with: 1, or the mark plus 1 inside [`confined`].
    static NEW_COUNT: Cell<usize> = const { Cell::new(1) };
}

/// Lets [`confined`] confine values in this process, from now on. For processes whose threads
/// run nothing but confined work between the work they share (the CLI's `run`): a value made
/// in confined work that stays in a thread's caches is then only ever used by that thread's
/// later confined work. A library (the Python module) leaves it off, and `confined` then
/// changes nothing.
pub fn allow_confinement() {
    CONFINEMENT.store(true, Ordering::Relaxed);
}

/// Runs `work` with the values it makes confined to this thread (see the module's doc), where
/// [`allow_confinement`] was called. `work` may read values that other threads share, and
/// those stay shared; whatever it makes that another thread may then use (its result, what it
/// stores where others read) must be published first ([`Shared::publish`]).
pub fn confined<R>(work: impl FnOnce() -> R) -> R {
    match if CONFINEMENT.load(Ordering::Relaxed) { mark() } else { 0 } {
        0 => work(),
        mark => making(mark | 1, work),
    }
}

/// Runs `work` with the values it makes shared, also inside [`confined`]: for values stored
/// where any thread may read them (the members a set builds on first use).
pub fn unconfined<R>(work: impl FnOnce() -> R) -> R {
    making(1, work)
}

/// Runs `work` with new blocks starting at the count word `count`, then puts back the one
/// before (also when `work` panics).
fn making<R>(count: usize, work: impl FnOnce() -> R) -> R {
    struct Restore(usize);
    impl Drop for Restore {
        fn drop(&mut self) {
            NEW_COUNT.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(NEW_COUNT.with(|c| c.replace(count)));
    work()
}

/// This thread's mark, numbered on first use; 0 where the numbers had run out.
fn mark() -> usize {
    MARK.with(|m| {
        if m.get() == NO_MARK {
            let number = NEXT_OWNER.fetch_add(1, Ordering::Relaxed);
            m.set(match number <= MAX_OWNER {
                true => CONFINED | number << OWNER_SHIFT,
                false => NO_NUMBER_LEFT,
            });
        }
        match m.get() {
            NO_NUMBER_LEFT => 0,
            mark => mark,
        }
    })
}

/// A count word confined to this thread is its mark plus the number of references: this
/// number, where the word is one (else a number above [`CONFINED_COUNT`]).
#[inline]
fn mine(count: usize) -> usize {
    count ^ MARK.with(Cell::get)
}

/// Whether a count word is confined to this thread.
#[inline]
fn is_mine(count: usize) -> bool {
    mine(count) <= CONFINED_COUNT
}

/// Whether a count word is a confined one (of any thread).
#[inline]
fn is_confined(count: usize) -> bool {
    count & (IMMORTAL | CONFINED) == CONFINED
}

/// Checks that a count confined to some thread is this thread's.
#[inline]
fn check_owner(count: usize) {
    if !is_mine(count) {
        foreign_use();
    }
}

#[cold]
#[inline(never)]
fn foreign_use() -> ! {
    panic!("a value confined to one thread was used by another (it was not published)");
}

impl<T> Shared<T> {
    pub fn new(value: T) -> Shared<T> {
        let block = Box::new(Counted {
            count: AtomicUsize::new(NEW_COUNT.with(Cell::get)),
            value,
        });
        Shared {
            ptr: NonNull::from(Box::leak(block)),
            owns: PhantomData,
        }
    }

    /// A value that is never freed, whose clones and drops leave its count alone (see the
    /// module's doc). For values that live as long as the process: each call leaks one. Only
    /// this block becomes immortal: a value holding other blocks must be made outside
    /// [`confined`] work (or inside [`unconfined`]), or any other thread would meet them
    /// confined.
    pub fn immortal(value: T) -> Shared<T> {
        let shared = Shared::new(value);
        shared.counted().count.store(IMMORTAL, Ordering::Relaxed);
        shared
    }
}

impl<T: ?Sized> Shared<T> {
    fn counted(&self) -> &Counted<T> {
        // SAFETY: the block lives while a reference to it does, and `self` is one.
        unsafe { self.ptr.as_ref() }
    }

    /// Whether two pointers point at the same value.
    pub fn ptr_eq(a: &Shared<T>, b: &Shared<T>) -> bool {
        a.ptr.cast::<u8>() == b.ptr.cast::<u8>()
    }

    /// The address of the value, for identity (as `Arc::as_ptr`).
    pub fn as_ptr(this: &Shared<T>) -> *const T {
        &this.counted().value
    }

    /// How many references there are: a reading that other threads may change at once, exact
    /// only where none of them holds one.
    pub fn strong_count(this: &Shared<T>) -> usize {
        let count = this.counted().count.load(Ordering::Acquire);
        if is_confined(count) {
            count & CONFINED_COUNT
        } else {
            count
        }
    }

    /// Whether `this` is the only reference to its value: no other exists, nor can one
    /// appear meanwhile (a reference is only made from another).
    fn is_only(this: &Shared<T>) -> bool {
        let count = this.counted().count.load(Ordering::Acquire);
        if is_confined(count) {
            check_owner(count);
            count & CONFINED_COUNT == 1
        } else {
            count == 1
        }
    }

    /// The value to change in place, where `this` is its only reference.
    pub fn get_mut(this: &mut Shared<T>) -> Option<&mut T> {
        if !Shared::is_only(this) {
            return None;
        }
        // SAFETY: the only reference is `this`, borrowed mutably here: no other can read the
        // value (none can be made without this one), and the acquiring load saw every earlier
        // holder's release of it (a confined count's holders are this thread, or gave their
        // references back through whatever moved them here).
        Some(unsafe { &mut (*this.ptr.as_ptr()).value })
    }

    /// Makes a value confined to this thread shared (see [`confined`]), so that any thread may
    /// hold it; a shared or immortal one stays as it is. Called by the thread it is confined to
    /// (any other panics), before the value reaches another. Only this block: a value whose
    /// block holds others must publish those too.
    pub fn publish(this: &Shared<T>) {
        let count = &this.counted().count;
        let c = count.load(Ordering::Relaxed);
        if !is_confined(c) {
            return;
        }
        check_owner(c);
        // No other thread has written the count (one that met it confined panicked first);
        // those that receive the value after this store, by whatever hands it over (a join, a
        // channel, a lock), see it shared.
        count.store(c & CONFINED_COUNT, Ordering::Relaxed);
    }
}

/// A slice's elements in the block that holds its count ([`Shared<[T]>`]): one allocation per
/// value, where `Shared<Vec<T>>` takes two (the count's block and the vector's), and a read of
/// an element one load fewer. The length lives in the pointer.
impl<T: Copy> Shared<[T]> {
    /// The elements of `items`, copied into a block of their own.
    pub fn from_slice(items: &[T]) -> Shared<[T]> {
        let mut out = SliceBuilder::new(items.len());
        out.extend_from_slice(items);
        out.finish()
    }

    /// [`Shared::immortal`] for a slice.
    pub fn immortal_slice(items: &[T]) -> Shared<[T]> {
        let shared = Shared::from_slice(items);
        shared.counted().count.store(IMMORTAL, Ordering::Relaxed);
        shared
    }

    /// The elements that `items` gives, at most `room` of them (any more are left unread),
    /// written in place, in a block shrunk to them where there are fewer.
    #[inline]
    pub fn from_iter_at_most(room: usize, items: impl IntoIterator<Item = T>) -> Shared<[T]> {
        let mut out = SliceBuilder::new(room);
        let mut written = 0;
        for (place, item) in out.room().iter_mut().zip(items) {
            place.write(item);
            written += 1;
        }
        // SAFETY: the first `written` places of the room were written just now.
        unsafe { out.set_written(written) };
        out.finish()
    }
}

impl<T: Copy> From<Vec<T>> for Shared<[T]> {
    fn from(items: Vec<T>) -> Shared<[T]> {
        Shared::from_slice(&items)
    }
}

/// A [`Shared<[T]>`] being written in the block it will live in, with room for a number of
/// elements given in advance: written one after another, or into the room at once
/// ([`SliceBuilder::room`], as `Vec::spare_capacity_mut`). [`SliceBuilder::finish`] gives
/// the slice of the elements written, the block shrunk to them where fewer were. Dropped before
/// that, it frees the block.
pub struct SliceBuilder<T: Copy> {
    block: NonNull<u8>,
    room: usize,
    written: usize,
    elements: PhantomData<T>,
}

impl<T: Copy> SliceBuilder<T> {
    /// The layout of a block of `len` elements: the count, then the elements, as
    /// `Counted<[T]>` lays them out (which is what a drop frees).
    fn layout(len: usize) -> std::alloc::Layout {
        let elements = std::alloc::Layout::array::<T>(len).expect("a slice that fits the address space");
        let (layout, _) =
            (std::alloc::Layout::new::<AtomicUsize>().extend(elements)).expect("a slice that fits the address space");
        layout.pad_to_align()
    }

    /// Room for `room` elements, none written.
    pub fn new(room: usize) -> SliceBuilder<T> {
        let layout = Self::layout(room);
        // SAFETY: the layout is never of size 0 (it holds the count).
        let block = unsafe { std::alloc::alloc(layout) };
        let Some(block) = NonNull::new(block) else {
            std::alloc::handle_alloc_error(layout)
        };
        SliceBuilder {
            block,
            room,
            written: 0,
            elements: PhantomData,
        }
    }

    /// The first element's place in the block.
    #[inline]
    fn elements(&self) -> *mut T {
        let offset = std::mem::offset_of!(Counted<[T; 0]>, value);
        // SAFETY: `Counted<[T]>`'s elements start where those of an empty array would.
        unsafe { self.block.as_ptr().add(offset).cast::<T>() }
    }

    /// Writes the next element.
    #[inline]
    pub fn push(&mut self, item: T) {
        if self.written == self.room {
            overfull();
        }
        // SAFETY: `written < room`: the place lies in the block and was not written.
        unsafe { self.elements().add(self.written).write(item) };
        self.written += 1;
    }

    /// Writes the elements of `items` next.
    #[inline]
    pub fn extend_from_slice(&mut self, items: &[T]) {
        if items.len() > self.room - self.written {
            overfull();
        }
        // SAFETY: the places `written..written + items.len()` lie in the block (checked just
        // now) and were not written; the two blocks are distinct.
        unsafe { std::ptr::copy_nonoverlapping(items.as_ptr(), self.elements().add(self.written), items.len()) };
        self.written += items.len();
    }

    /// Writes `n` elements next, the `k`-th of them `item(k)`.
    #[inline]
    pub fn extend_with(&mut self, n: usize, mut item: impl FnMut(usize) -> T) {
        if n > self.room - self.written {
            overfull();
        }
        let at = self.elements().wrapping_add(self.written);
        for k in 0..n {
            // SAFETY: the places `written..written + n` lie in the block (checked above) and
            // were not written.
            unsafe { at.add(k).write(item(k)) };
        }
        self.written += n;
    }

    /// The places not written yet, to write from the first on, then count with
    /// [`SliceBuilder::set_written`].
    #[inline]
    pub fn room(&mut self) -> &mut [std::mem::MaybeUninit<T>] {
        // SAFETY: the places `written..room` lie in the block, which the builder owns.
        unsafe { std::slice::from_raw_parts_mut(self.elements().add(self.written).cast(), self.room - self.written) }
    }

    /// Counts the first `n` places of [`SliceBuilder::room`] as written.
    ///
    /// # Safety
    ///
    /// Those places were written.
    #[inline]
    pub unsafe fn set_written(&mut self, n: usize) {
        debug_assert!(n <= self.room - self.written);
        self.written += n;
    }

    /// Shrinks the block to the elements written.
    #[inline(never)]
    fn shrink(&mut self) {
        let (from, to) = (Self::layout(self.room), Self::layout(self.written));
        if from.size() != to.size() {
            // SAFETY: the block was allocated with `from`; `to` has its alignment and a size
            // that is not zero.
            let block = unsafe { std::alloc::realloc(self.block.as_ptr(), from, to.size()) };
            match NonNull::new(block) {
                Some(block) => self.block = block,
                None => std::alloc::handle_alloc_error(to),
            }
        }
        self.room = self.written;
    }

    /// The elements written so far.
    pub fn written(&self) -> &[T] {
        // SAFETY: the first `written` places were written; the builder owns the block.
        unsafe { std::slice::from_raw_parts(self.elements().cast_const(), self.written) }
    }

    /// The elements written so far, to change in place.
    pub fn written_mut(&mut self) -> &mut [T] {
        // SAFETY: as `written`, borrowed mutably.
        unsafe { std::slice::from_raw_parts_mut(self.elements(), self.written) }
    }

    /// The slice of the elements written, in a block shrunk to them where the room was larger.
    #[inline]
    pub fn finish(self) -> Shared<[T]> {
        let mut this = std::mem::ManuallyDrop::new(self);
        if this.written < this.room {
            this.shrink();
        }
        // SAFETY: the block has `Counted<[T]>`'s layout for `written` elements, all written;
        // the count is written now, and the builder, forgotten, no longer frees the block.
        unsafe {
            this.block
                .cast::<AtomicUsize>()
                .as_ptr()
                .write(AtomicUsize::new(NEW_COUNT.with(Cell::get)));
            let counted =
                std::ptr::slice_from_raw_parts_mut(this.block.as_ptr().cast::<T>(), this.written) as *mut Counted<[T]>;
            Shared {
                ptr: NonNull::new_unchecked(counted),
                owns: PhantomData,
            }
        }
    }
}

impl<T: Copy> Drop for SliceBuilder<T> {
    fn drop(&mut self) {
        // SAFETY: the block was allocated with this layout and never handed out.
        unsafe { std::alloc::dealloc(self.block.as_ptr(), Self::layout(self.room)) }
    }
}

#[cold]
#[inline(never)]
fn overfull() -> ! {
    panic!("more elements written than a slice was made for");
}

impl<T: ?Sized> Clone for Shared<T> {
    #[inline]
    fn clone(&self) -> Shared<T> {
        // Relaxed, as `Arc`'s: a new reference is made from an existing one, which keeps the
        // value alive; nothing is read through the count. A confined count is this thread's
        // alone (or the clone panics), a mortal count never becomes an immortal one, nor a
        // shared one a confined one.
        let count = &self.counted().count;
        let c = count.load(Ordering::Relaxed);
        if mine(c) < CONFINED_COUNT {
            count.store(c + 1, Ordering::Relaxed);
        } else {
            add_shared(count, c);
        }
        Shared {
            ptr: self.ptr,
            owns: PhantomData,
        }
    }
}

impl<T: ?Sized> Drop for Shared<T> {
    #[inline]
    fn drop(&mut self) {
        let count = &self.counted().count;
        // A confined count is changed by its thread alone, which frees the value when it
        // drops the last reference. A shared count of one is this reference alone: no other
        // holder can clone or drop the value meanwhile, and the acquiring load saw every other
        // holder's releasing decrement, so the value is freed without writing the count.
        // Otherwise the count is decremented (releasing this holder's uses of the value), and
        // the holder that takes it to zero frees the value, after an acquiring fence that
        // orders the others' uses before it; an immortal value's is left alone.
        let seen = count.load(Ordering::Acquire);
        let references = mine(seen);
        if references > CONFINED_COUNT {
            // SAFETY: this reference is dropped, and not used after.
            return unsafe { drop_unconfined(self.ptr, seen) };
        }
        if references != 1 {
            count.store(seen - 1, Ordering::Relaxed);
            return;
        }
        // SAFETY: the last reference is this one (see above).
        unsafe { free(self.ptr) }
    }
}

/// [`Shared::drop`] of a reference to `block` whose count is not confined to this thread
/// (`seen`, as read): out of line, so that the drop inlined ends in calls alone and keeps no
/// value across one. With a slice's length kept across the release of a shared count, the
/// drop of a `Value` saved a register on every path, whatever its kind.
///
/// # Safety
///
/// As [`free`]'s, but that other references may be left: the caller's is given up.
#[inline(never)]
unsafe fn drop_unconfined<T: ?Sized>(block: NonNull<Counted<T>>, seen: usize) {
    // SAFETY: the caller's reference keeps the block alive until it is given up here.
    if seen == 1 || release_shared(unsafe { &block.as_ref().count }, seen) {
        // SAFETY: the last reference was the caller's.
        unsafe { free(block) }
    }
}

/// [`Shared::clone`] of a count that is not confined to this thread (`c`, as read): shared,
/// immortal, or confined to another thread (which panics); or this thread's at its most
/// references (which aborts). Out of line, so that the confined path inlined is short.
#[inline(never)]
fn add_shared(count: &AtomicUsize, c: usize) {
    if c < CONFINED {
        if count.fetch_add(1, Ordering::Relaxed) >= MAX_COUNT {
            std::process::abort();
        }
    } else if is_mine(c) {
        std::process::abort();
    } else if c < IMMORTAL {
        foreign_use();
    }
}

/// [`Shared::drop`] of a count that is not confined to this thread (`seen`, as read, not
/// 1): whether this was the last reference. Out of line, as [`add_shared`].
#[inline(never)]
fn release_shared(count: &AtomicUsize, seen: usize) -> bool {
    if seen >= CONFINED {
        if seen < IMMORTAL {
            foreign_use();
        }
        return false;
    }
    if count.fetch_sub(1, Ordering::Release) != 1 {
        return false;
    }
    fence(Ordering::Acquire);
    true
}

/// Drops the value of a block and frees it: out of line, so that a drop of a value that holds
/// any of several kinds of container is a test per kind, not each kind's freeing inlined.
///
/// # Safety
///
/// `block` came from `Box::leak` in [`Shared::new`], and no reference to it is left.
#[inline(never)]
unsafe fn free<T: ?Sized>(block: NonNull<Counted<T>>) {
    // SAFETY: see the function's contract.
    unsafe { drop(Box::from_raw(block.as_ptr())) }
}

impl<T: ?Sized> Deref for Shared<T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        &self.counted().value
    }
}

impl<T: ?Sized> AsRef<T> for Shared<T> {
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

impl<T: PartialEq + ?Sized> PartialEq for Shared<T> {
    fn eq(&self, other: &Shared<T>) -> bool {
        **self == **other
    }
}

impl<T: Eq + ?Sized> Eq for Shared<T> {}

impl<T: PartialOrd + ?Sized> PartialOrd for Shared<T> {
    fn partial_cmp(&self, other: &Shared<T>) -> Option<std::cmp::Ordering> {
        (**self).partial_cmp(&**other)
    }
}

impl<T: Ord + ?Sized> Ord for Shared<T> {
    fn cmp(&self, other: &Shared<T>) -> std::cmp::Ordering {
        (**self).cmp(&**other)
    }
}

impl<T: Hash + ?Sized> Hash for Shared<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (**self).hash(state)
    }
}

impl<T: fmt::Debug + ?Sized> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: fmt::Display + ?Sized> fmt::Display for Shared<T> {
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

/// A slice read from a value that holds one as a [`Shared<[T]>`], borrowed, or one built for
/// the reading (the locations of an object, the cells of a tuple), which becomes a value of its
/// own only where [`SliceRef::into_shared`] asks for one.
pub enum SliceRef<'a, T: Copy> {
    Held(&'a Shared<[T]>),
    Built(Vec<T>),
}

impl<T: Copy> SliceRef<'_, T> {
    /// The slice as a reference of its own.
    pub fn into_shared(self) -> Shared<[T]> {
        match self {
            SliceRef::Held(v) => v.clone(),
            SliceRef::Built(v) => v.into(),
        }
    }
}

impl<T: Copy> Deref for SliceRef<'_, T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        match self {
            SliceRef::Held(v) => v,
            SliceRef::Built(v) => v,
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

    /// Inside `confined`, a value's count is its thread's: clones and drops count as they do
    /// for a shared one and only the only reference changes the value; published, it is a
    /// shared value that any thread may hold, and the last holder drops it once.
    #[test]
    fn a_confined_value_counts_as_a_shared_one_and_once_published_crosses_threads() {
        static DROPS: AtomicUsize = AtomicUsize::new(0);
        allow_confinement();
        let count = |s: &Shared<Tracked<'static>>| s.counted().count.load(Ordering::Relaxed);
        let published = confined(|| {
            drop(Shared::new(Tracked(&DROPS)));
            assert_eq!(DROPS.load(Ordering::Relaxed), 1, "freed by its only holder");
            let a = Shared::new(Tracked(&DROPS));
            assert!(is_mine(count(&a)), "made confined");
            let b = a.clone();
            let c = b.clone();
            assert_eq!(Shared::strong_count(&a), 3);
            drop(a);
            drop(c);
            assert_eq!(Shared::strong_count(&b), 1);
            let mut only = Shared::new(vec![1]);
            let other = only.clone();
            assert!(Shared::get_mut(&mut only).is_none(), "two references");
            drop(other);
            Shared::get_mut(&mut only).expect("the only one").push(2);
            assert_eq!(*only, [1, 2]);
            assert!(!is_confined(unconfined(|| count(&Shared::new(Tracked(&DROPS))))));
            assert_eq!(DROPS.load(Ordering::Relaxed), 2, "the unconfined one");
            Shared::publish(&b);
            assert!(!is_confined(count(&b)), "published");
            Shared::publish(&b);
            assert_eq!(count(&b), 1, "published again: the same shared count");
            b
        });
        assert!(!is_confined(count(&published)), "shared");
        assert!(
            !is_confined(count(&Shared::new(Tracked(&DROPS)))),
            "made outside confined"
        );
        assert_eq!(DROPS.load(Ordering::Relaxed), 3);
        let handles: Vec<_> = (0..3)
            .map(|_| {
                let mine = published.clone();
                std::thread::spawn(move || {
                    let kept: Vec<_> = (0..100).map(|_| mine.clone()).collect();
                    drop(mine);
                    kept
                })
            })
            .collect();
        drop(published);
        let kept: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert_eq!(DROPS.load(Ordering::Relaxed), 3, "held by the threads' clones");
        drop(kept);
        assert_eq!(DROPS.load(Ordering::Relaxed), 4);
    }

    /// Another thread that clones or publishes a confined value panics before it writes the
    /// count, which its own thread then goes on counting; so does one with a mark of its own (a
    /// thread that runs confined work too).
    #[test]
    fn another_thread_neither_clones_nor_publishes_a_confined_value() {
        /// Whether a thread ended in the panic of a foreign use (not some other one).
        fn foreign<T>(ended: std::thread::Result<T>) -> bool {
            let Err(payload) = ended else { return false };
            let message = payload
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str));
            message.is_some_and(|m| m.contains("confined to one thread"))
        }
        allow_confinement();
        confined(|| {
            let a = Shared::new(5u8);
            let b = a.clone();
            std::thread::scope(|s| {
                let clone = || std::mem::forget(a.clone());
                assert!(foreign(s.spawn(clone).join()), "cloned by another thread");
                assert!(foreign(s.spawn(|| Shared::publish(&a)).join()), "published by another");
                let marked = move || {
                    let made = confined(|| Shared::new(0u8));
                    assert!(is_mine(made.counted().count.load(Ordering::Relaxed)), "a mark");
                    clone()
                };
                assert!(foreign(s.spawn(marked).join()), "cloned by a thread with a mark");
            });
            assert_eq!(Shared::strong_count(&a), 2, "the count untouched");
            drop(b);
            assert_eq!(Shared::strong_count(&a), 1);
        });
    }

    #[test]
    fn shared_values_cross_threads_as_arcs_do() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Shared<Vec<u8>>>();
        send_sync::<Shared<[u8]>>();
    }

    /// A slice's block has the layout its drop frees (`Counted<[T]>`'s for its length), for
    /// elements of several sizes and alignments.
    #[test]
    fn a_slice_block_has_the_layout_its_drop_frees() {
        fn check<T: Copy + Default>() {
            for len in [0, 1, 2, 3, 7, 64] {
                let slice = Shared::from_iter_at_most(len, std::iter::repeat_n(T::default(), len));
                assert_eq!(
                    std::mem::size_of_val(slice.counted()),
                    SliceBuilder::<T>::layout(len).size()
                );
                assert_eq!(
                    std::mem::align_of_val(slice.counted()),
                    SliceBuilder::<T>::layout(len).align()
                );
            }
        }
        check::<u8>();
        check::<u16>();
        check::<[i32; 3]>();
        check::<u64>();
        check::<u128>();
    }

    #[test]
    fn a_built_slice_holds_what_was_written_in_order() {
        let items: Vec<i32> = (0..40).collect();
        assert_eq!(&Shared::from_slice(&items)[..], &items[..]);
        assert_eq!(&Shared::<[i32]>::from(items.clone())[..], &items[..]);
        assert_eq!(&Shared::from_iter_at_most(40, items.iter().copied())[..], &items[..]);
        assert_eq!(&Shared::from_iter_at_most(30, items.iter().copied())[..], &items[..30]);
        assert_eq!(&Shared::from_iter_at_most(50, items.iter().copied())[..], &items[..]);
        let mut b = SliceBuilder::new(40);
        b.push(0);
        b.extend_from_slice(&items[1..10]);
        b.extend_with(10, |k| 10 + k as i32);
        let room = b.room();
        for (k, place) in room[..20].iter_mut().enumerate() {
            place.write(20 + k as i32);
        }
        // SAFETY: the first 20 places of the room were written just now.
        unsafe { b.set_written(20) };
        b.written_mut().reverse();
        assert!(b.written().iter().rev().eq(&items));
        b.written_mut().reverse();
        assert_eq!(b.written(), &items[..]);
        let built = b.finish();
        assert_eq!(&built[..], &items[..]);
        let clone = built.clone();
        assert!(Shared::ptr_eq(&built, &clone));
        assert_eq!(Shared::strong_count(&built), 2);
    }

    /// Fewer elements than the room: the slice holds those written, in a block of their
    /// layout (which its drop frees).
    #[test]
    fn a_slice_finished_short_holds_what_was_written() {
        for (room, written) in [(10, 0), (10, 3), (100, 99), (1000, 1)] {
            let mut b = SliceBuilder::new(room);
            (0..written).for_each(|k| b.push(k as u16));
            let slice = b.finish();
            assert_eq!(slice.len(), written);
            assert!(slice.iter().enumerate().all(|(k, &x)| x == k as u16));
            assert_eq!(
                std::mem::size_of_val(slice.counted()),
                SliceBuilder::<u16>::layout(written).size()
            );
        }
        // Dropped unfinished: freed, nothing else happens.
        let mut b = SliceBuilder::new(5);
        b.push(1u8);
        drop(b);
    }

    #[test]
    #[should_panic(expected = "more elements written")]
    fn writing_past_a_slices_room_panics() {
        let mut b = SliceBuilder::new(2);
        b.extend_from_slice(&[1u8, 2, 3]);
    }

    #[test]
    fn an_immortal_slice_keeps_its_count() {
        let empty: Shared<[u32]> = Shared::immortal_slice(&[]);
        let clone = empty.clone();
        drop(clone);
        assert!(empty.is_empty());
        assert!(Shared::strong_count(&empty) >= IMMORTAL);
    }
}
