//! A vector's contents as of one moment, copied a slice at a time while
//! the vector goes on changing: how a snapshot takes the ledger's large
//! tables without stopping writes for the whole copy.
//!
//! Motivation: copying the forest's slots, the side-record locations and
//! the document keys at 10 M nodes takes seconds, and writes waited for
//! all of it. Reference-counted chunks (copy-on-write) made the copy free
//! but cost every read an indirection (about 11 % of the overlap bench).
//!
//! Design: the live table stays a plain `Vec`; beside it, a [`Capture`]
//! that is empty except while a snapshot is taken. [`Capture::start`]
//! (with the table's owner locked against writes) records the length;
//! [`Capture::copy_some`] copies the next slice (the owner locked against
//! writes only, readers may run); and before a write changes a place not
//! yet copied, [`Capture::before_write`] saves the place's value once (a
//! before-image). The copy with the before-images put back is exactly the
//! vector at the start. A change that rewrites the whole vector (growing
//! a hash table, a retain, a truncation) first copies the rest at once
//! ([`Capture::complete`]): rare, and slower anyway than that copy.
//!
//! Consequences: with no capture running a write pays one test of a null
//! pointer; reads pay nothing. A place written while a capture runs costs
//! its value once more until the capture is taken. Places past the length
//! at the start are not captured (they were added later).

mod image;

use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;

pub use image::{Image, MAPPED_IMAGE_MIN_BYTES};

/// See the module documentation.
pub struct Capture<T> {
    /// `None` except while a capture runs. Writers reach it through
    /// `&mut` (no locking); the copier, holding the table shared, locks.
    state: Mutex<Option<Box<CaptureState<T>>>>,
}

struct CaptureState<T> {
    /// The vector's length at the start.
    len: usize,
    /// Places `0..copied`, copied: staged, or already in the image.
    copied: usize,
    /// Where they go ([`CaptureSink`]).
    sink: CaptureSink<T>,
    /// Values at the start of places written before they were copied.
    saved: Vec<(usize, T)>,
    /// One bit per place: its value was saved (so only the first is).
    saved_bits: Vec<u64>,
    /// The vector was shortened before it was copied: no image.
    broken: bool,
}

/// Where a capture's copy goes: each slice is copied under the owner's
/// lock into a staging buffer on the heap (one slice long, its pages
/// faulted in already), and moved into the [`Image`] (in a file of the
/// directory given to [`Capture::start`] when large) by
/// [`CaptureSink::flush`], which takes no lock of the owner. A write into
/// a file's pages may wait for the kernel to write others out (tens of
/// milliseconds at 100 M nodes, with the page cache short); writes to the
/// table do not wait for that.
pub struct CaptureSink<T>(Arc<Mutex<Sink<T>>>);

struct Sink<T> {
    staged: Vec<T>,
    image: Image<T>,
}

impl<T> Clone for CaptureSink<T> {
    fn clone(&self) -> Self {
        CaptureSink(Arc::clone(&self.0))
    }
}

impl<T: Copy> CaptureSink<T> {
    /// A sink for `capacity` values (in a file of `directory` when large).
    pub fn new(capacity: usize, directory: Option<&Path>) -> Self {
        CaptureSink(Arc::new(Mutex::new(Sink {
            staged: Vec::new(),
            image: Image::with_capacity(capacity, directory),
        })))
    }

    /// Stages `values` (under the owner's lock: a copy into the heap);
    /// how many.
    pub fn stage(&self, values: impl IntoIterator<Item = T>) -> usize {
        let staged = &mut self.0.lock().staged;
        let before = staged.len();
        staged.extend(values);
        staged.len() - before
    }

    /// Moves the slices staged so far into the image. Call without the
    /// owner's lock, between slices.
    pub fn flush(&self) {
        let mut sink = self.0.lock();
        let Sink { staged, image } = &mut *sink;
        image.extend_from_slice(staged);
        staged.clear();
    }

    /// Everything staged and flushed, as one image (the sink is left empty).
    pub fn take_image(&self) -> Image<T> {
        self.flush();
        std::mem::take(&mut self.0.lock().image)
    }
}

/// Flushes a capture's sink whatever its values ([`CaptureSink::flush`]).
pub trait Flush: Send + Sync {
    fn flush(&self);
}

impl<T: Copy + Send> Flush for CaptureSink<T> {
    fn flush(&self) {
        CaptureSink::flush(self);
    }
}

impl<T> std::fmt::Debug for CaptureSink<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CaptureSink").finish_non_exhaustive()
    }
}

impl<T> Default for Capture<T> {
    fn default() -> Self {
        Capture {
            state: Mutex::new(None),
        }
    }
}

impl<T> Clone for Capture<T> {
    /// A copy of a table is not being captured.
    fn clone(&self) -> Self {
        Capture::default()
    }
}

impl<T> std::fmt::Debug for Capture<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capture")
            .field("running", &self.state.lock().is_some())
            .finish()
    }
}

impl<T: Copy> Capture<T> {
    /// Starts capturing `data` as it is now (a running capture is
    /// dropped). Writes must be locked out (the owner is shared, not
    /// changing, so its state now is one moment's).
    /// The image goes to a file of `directory` when it is large enough;
    /// the sink returned moves the slices there ([`CaptureSink::flush`]).
    pub fn start(&self, data: &[T], directory: Option<&Path>) -> CaptureSink<T> {
        let sink = CaptureSink::new(data.len(), directory);
        *self.state.lock() = Some(Box::new(CaptureState {
            len: data.len(),
            copied: 0,
            sink: sink.clone(),
            saved: Vec::new(),
            saved_bits: Vec::new(),
            broken: false,
        }));
        sink
    }

    /// Whether a capture runs.
    pub fn is_running(&self) -> bool {
        self.state.lock().is_some()
    }

    /// Whether a capture runs, asked by the vector's owner (no lock).
    pub fn is_running_mut(&mut self) -> bool {
        self.state.get_mut().is_some()
    }

    /// Call before changing place `index` of `data` (the captured vector):
    /// saves its value if a capture runs and has not copied it yet.
    #[inline]
    pub fn before_write(&mut self, data: &[T], index: usize) {
        if let Some(state) = self.state.get_mut() {
            state.save(data, index);
        }
    }

    /// Copies up to `budget` more places of `data`; `true` once all are
    /// copied (or no capture runs). Writes must be locked out meanwhile.
    pub fn copy_some(&self, data: &[T], budget: usize) -> bool {
        let mut state = self.state.lock();
        let Some(state) = state.as_mut() else {
            return true;
        };
        state.copy(data, budget);
        state.copied >= state.len
    }

    /// Copies all places not yet copied: before a change that rewrites
    /// or shortens the whole vector.
    pub fn complete(&mut self, data: &[T]) {
        if let Some(state) = self.state.get_mut() {
            state.copy(data, usize::MAX);
        }
    }

    /// Ends the capture: the vector as it was at the start, once every
    /// place is copied (else `None`, and the capture goes on).
    pub fn take(&self) -> Option<Image<T>> {
        let mut state = self.state.lock();
        if state.as_ref().is_none_or(|state| state.copied < state.len) {
            return None;
        }
        state
            .take()
            .filter(|state| !state.broken)
            .map(|state| state.image())
    }

    /// Ends the capture, dropping what it copied (a snapshot given up).
    pub fn stop(&self) {
        *self.state.lock() = None;
    }
}

impl<T: Copy> CaptureState<T> {
    fn copy(&mut self, data: &[T], budget: usize) {
        let from = self.copied;
        if from >= self.len {
            return;
        }
        let to = self.len.min(from.saturating_add(budget));
        match data.get(from..to) {
            Some(slice) => {
                self.sink.0.lock().staged.extend_from_slice(slice);
                self.copied = to;
            }
            None => {
                // Shortened without completing first (a bug): the image
                // cannot be whole, and `take` refuses it.
                debug_assert!(false, "captured vector shortened before its copy");
                self.broken = true;
                self.len = from;
            }
        }
    }

    #[cold]
    fn save(&mut self, data: &[T], index: usize) {
        if index < self.copied || index >= self.len {
            return;
        }
        let Some(&value) = data.get(index) else {
            return;
        };
        if self.saved_bits.is_empty() {
            self.saved_bits = vec![0; self.len.div_ceil(64)];
        }
        let (word, bit) = (index / 64, 1u64 << (index % 64));
        if self.saved_bits[word] & bit == 0 {
            self.saved_bits[word] |= bit;
            self.saved.push((index, value));
        }
    }

    fn image(self) -> Image<T> {
        let mut image = self.sink.take_image();
        for (index, value) in self.saved {
            if let Some(place) = image.get_mut(index) {
                *place = value;
            }
        }
        image
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Whatever is written while a capture runs, its image is the
        /// vector at the start.
        #[test]
        fn the_image_is_the_vector_at_the_start(
            initial in proptest::collection::vec(proptest::num::u32::ANY, 0..200),
            steps in proptest::collection::vec((0u8..4, 0usize..250, proptest::num::u32::ANY), 0..200),
            budget in 1usize..40,
        ) {
            let mut data = initial.clone();
            let mut capture = Capture::default();
            let sink = capture.start(&data, None);
            let mut image = None;
            for (step, index, value) in steps {
                match step {
                    0 | 1 => {
                        if index < data.len() {
                            capture.before_write(&data, index);
                            data[index] = value;
                        }
                    }
                    2 => data.push(value),
                    _ => {
                        if capture.copy_some(&data, budget) && image.is_none() {
                            image = capture.take();
                        } else if value % 2 == 0 {
                            sink.flush();
                        }
                    }
                }
            }
            while image.is_none() {
                capture.copy_some(&data, budget);
                image = capture.take();
            }
            proptest::prop_assert_eq!(image.map(|image| image.to_vec()), Some(initial));
            proptest::prop_assert!(!capture.is_running());
        }
    }

    #[test]
    fn a_completed_capture_survives_a_rewrite_of_the_vector() {
        let mut data: Vec<u8> = (0..100).collect();
        let mut capture = Capture::default();
        capture.start(&data, None);
        assert!(!capture.copy_some(&data, 10));
        capture.before_write(&data, 50);
        data[50] = 0;
        capture.complete(&data);
        data = vec![7; 10];
        capture.before_write(&data, 3);
        data[3] = 1;
        assert_eq!(
            capture.take().map(|image| image.to_vec()),
            Some((0..100).collect())
        );
    }

    #[test]
    fn a_large_capture_kept_in_a_file_is_the_vector_at_its_start() {
        let len = MAPPED_IMAGE_MIN_BYTES / size_of::<u64>() + 1;
        let initial: Vec<u64> = (0..len as u64).collect();
        let mut data = initial.clone();
        let mut capture = Capture::default();
        capture.start(&data, Some(&std::env::temp_dir()));
        assert!(!capture.copy_some(&data, len / 3));
        for index in [0, len / 2, len - 1] {
            capture.before_write(&data, index);
            data[index] = u64::MAX;
        }
        while !capture.copy_some(&data, len / 3) {}
        let image = capture.take().expect("copied");
        assert!(image.is_mapped());
        assert!(*image == *initial);
    }
}
