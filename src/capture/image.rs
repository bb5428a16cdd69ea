//! Where a capture's image lives: a file the kernel may write out, when
//! it is large and a directory is given, else the heap.
//!
//! Motivation: a snapshot's capture copies the forest's slots, the
//! side-record locations and the document keys, about 65 bytes a node.
//! On the heap that is memory the process must find beside the engine
//! while the snapshot is written: at 100 M nodes, 6.5 GB on top of 15.5,
//! more than a 24 GB machine has. Written through a mapping of an
//! unlinked file, the same bytes are page cache: the kernel writes them
//! out under pressure and reads them back when the snapshot is written,
//! about in order.
//!
//! Design: [`Image`] is a vector of `Copy` values of fixed capacity,
//! filled by appending. From [`MAPPED_IMAGE_MIN_BYTES`] on, with a
//! directory, its place is a file made, reserved on disk and unlinked
//! there (the side file's way, [`crate::engine`]'s segment files); a file
//! that cannot be made (a full disk) falls back to the heap.
//!
//! Consequences: the disk holds the image (about 65 bytes a node) while a
//! snapshot is taken and written, beside the snapshot itself; the values
//! are copied as bytes, so they must hold no pointers (slots, locations
//! and key entries are plain numbers).

use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::path::Path;

use memmap2::{Advice, MmapRaw};

use crate::engine::segment_files::{map_new_sparse_file, reserve_range};

/// Images smaller than this stay on the heap: a file costs system calls,
/// and a small image costs the heap little.
pub const MAPPED_IMAGE_MIN_BYTES: usize = 16 << 20;

/// Disk is reserved for the next values this many bytes at a time (not
/// all at the start, which at 100 M nodes would hold writes back for
/// tens of milliseconds while the capture starts).
const RESERVE_STEP_BYTES: usize = 8 << 20;

/// See the module documentation.
pub struct Image<T> {
    storage: Storage<T>,
    len: usize,
}

enum Storage<T> {
    Heap(Vec<T>),
    Mapped {
        map: MmapRaw,
        file: std::fs::File,
        capacity: usize,
        /// Bytes from the start reserved on disk: values are written only
        /// there, so a write through the mapping never meets a full disk.
        reserved: usize,
        values: PhantomData<T>,
    },
}

impl<T> Image<T> {
    /// Whether the values are in a file (not the heap).
    pub fn is_mapped(&self) -> bool {
        matches!(self.storage, Storage::Mapped { .. })
    }
}

impl<T: Copy> Image<T> {
    /// An empty image with room for `capacity` values, in a file of
    /// `directory` when that is large enough to be worth one.
    pub fn with_capacity(capacity: usize, directory: Option<&Path>) -> Self {
        let bytes = capacity.saturating_mul(size_of::<T>());
        let mapped = directory
            .filter(|_| bytes >= MAPPED_IMAGE_MIN_BYTES && size_of::<T>() > 0)
            .and_then(|directory| map_new_sparse_file(directory, bytes).ok());
        let storage = match mapped {
            Some((file, map)) => {
                // Written once in order and read back about in order: the
                // kernel may read ahead.
                let _ = map.advise(Advice::Sequential);
                Storage::Mapped {
                    map,
                    file,
                    capacity,
                    reserved: 0,
                    values: PhantomData,
                }
            }
            None => Storage::Heap(Vec::with_capacity(capacity)),
        };
        Image { storage, len: 0 }
    }

    /// Appends `values`. Past the capacity (which a capture, knowing its
    /// length from the start, never reaches), or where the disk has no room
    /// for them, the image moves to the heap and goes on there.
    pub fn extend_from_slice(&mut self, values: &[T]) {
        if let Storage::Mapped {
            map,
            file,
            capacity,
            reserved,
            ..
        } = &mut self.storage
        {
            let needed = (self.len + values.len()).saturating_mul(size_of::<T>());
            let fits = self.len + values.len() <= *capacity
                && (needed <= *reserved || {
                    let total = capacity.saturating_mul(size_of::<T>());
                    let upto = needed.saturating_add(RESERVE_STEP_BYTES).min(total);
                    let reserving = reserve_range(file, *reserved, upto - *reserved);
                    if reserving.is_ok() {
                        *reserved = upto;
                    }
                    reserving.is_ok()
                });
            if fits {
                // SAFETY: the mapping holds `capacity` values of `T`
                // (page-aligned, so aligned for `T`); `len + values.len()`
                // of them fit, and nothing else refers to the places past
                // `len`, which the values are copied into.
                unsafe {
                    let start = map.as_mut_ptr().cast::<T>().add(self.len);
                    std::ptr::copy_nonoverlapping(values.as_ptr(), start, values.len());
                }
                self.len += values.len();
                return;
            }
            let mut heap = Vec::with_capacity(self.len + values.len());
            heap.extend_from_slice(self);
            self.storage = Storage::Heap(heap);
        }
        if let Storage::Heap(heap) = &mut self.storage {
            heap.extend_from_slice(values);
            self.len = heap.len();
        }
    }

    /// Keeps the first `len` values.
    pub fn truncate(&mut self, len: usize) {
        if let Storage::Heap(heap) = &mut self.storage {
            heap.truncate(len);
        }
        self.len = self.len.min(len);
    }

    /// Keeps the values `keep` says to, in their order.
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        let mut kept = 0;
        for index in 0..self.len {
            let value = self[index];
            if keep(&value) {
                self[kept] = value;
                kept += 1;
            }
        }
        self.truncate(kept);
    }
}

impl<T: Copy> Deref for Image<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        match &self.storage {
            Storage::Heap(heap) => heap,
            // SAFETY: the first `len` values were written by
            // `extend_from_slice`; the mapping lives as long as `self`.
            Storage::Mapped { map, .. } => unsafe {
                std::slice::from_raw_parts(map.as_ptr().cast::<T>(), self.len)
            },
        }
    }
}

impl<T: Copy> DerefMut for Image<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        match &mut self.storage {
            Storage::Heap(heap) => heap,
            // SAFETY: as in `deref`; `&mut self` makes this the only view.
            Storage::Mapped { map, .. } => unsafe {
                std::slice::from_raw_parts_mut(map.as_mut_ptr().cast::<T>(), self.len)
            },
        }
    }
}

impl<T> Default for Image<T> {
    fn default() -> Self {
        Image {
            storage: Storage::Heap(Vec::new()),
            len: 0,
        }
    }
}

impl<T> std::fmt::Debug for Image<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Image")
            .field("len", &self.len)
            .field("mapped", &self.is_mapped())
            .finish()
    }
}

impl<T: Copy + PartialEq> PartialEq<Vec<T>> for Image<T> {
    fn eq(&self, other: &Vec<T>) -> bool {
        **self == **other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_image_with_a_directory_is_a_file_and_reads_back_what_was_written() {
        let directory = std::env::temp_dir();
        let values = MAPPED_IMAGE_MIN_BYTES / size_of::<(u64, u32)>() + 10;
        let mut image: Image<(u64, u32)> = Image::with_capacity(values, Some(&directory));
        assert!(image.is_mapped());
        let written: Vec<(u64, u32)> = (0..values as u64).map(|n| (n * 3, n as u32)).collect();
        for chunk in written.chunks(1000) {
            image.extend_from_slice(chunk);
        }
        assert_eq!(image, written);
        image[5] = (0, 0);
        image.retain(|&(triple, _)| triple % 2 == 0);
        // The even places, and the fifth, now (0, 0).
        assert_eq!(values % 2, 0);
        assert_eq!(image.len(), values / 2 + 1);
        assert_eq!(image[..5], [(0, 0), (6, 2), (12, 4), (0, 0), (18, 6)]);
        // Past its capacity it goes on, on the heap.
        image.extend_from_slice(&vec![(1, 1); values]);
        assert!(!image.is_mapped());
        assert_eq!(image.len(), values / 2 + 1 + values);
        assert_eq!(image[4], (18, 6));
    }

    #[test]
    fn a_small_image_or_one_without_a_directory_stays_on_the_heap() {
        let directory = std::env::temp_dir();
        let small: Image<u64> = Image::with_capacity(1000, Some(&directory));
        assert!(!small.is_mapped());
        let mut anywhere: Image<u64> = Image::with_capacity(MAPPED_IMAGE_MIN_BYTES, None);
        assert!(!anywhere.is_mapped());
        anywhere.extend_from_slice(&[1, 2, 3]);
        anywhere.truncate(2);
        assert_eq!(anywhere, vec![1, 2]);
    }
}
