//! The sparse XOR encoder with AVX-512 (BW and VBMI2): 64 bytes per instruction where the
//! portable encoder takes a word at a time and a byte at a time to pack. Recording spends its
//! first core's time encoding (a quarter of it with the portable encoder, on the 65,536-item
//! Collatz launch), so this is one of the two places the engine uses `unsafe` (with
//! `ssse3.rs`, the shuffle for CPUs without AVX-512): the vector loads and
//! stores, and calling a function compiled for features the build does not assume. Output is
//! byte for byte the portable encoder's (a test compares them).
#![allow(unsafe_code)]

use std::arch::x86_64::{
    __m512i, _mm512_mask_storeu_epi8, _mm512_maskz_compress_epi8, _mm512_maskz_expand_epi8,
    _mm512_maskz_loadu_epi8, _mm512_setzero_si512, _mm512_storeu_si512, _mm512_test_epi8_mask,
    _mm512_xor_si512,
};
use std::sync::OnceLock;

use super::{Header, MAX_SPARSE, SPARSE_SHORT};

/// Whether this CPU has the instructions [`put_sparse`] uses (checked once).
pub fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("popcnt")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vbmi2")
    })
}

/// Appends the sparse form of `old XOR new` (length header, byte map, non-zero bytes) when it
/// is shorter than the dense form, and returns whether it did (`out` is unchanged if not).
/// Takes payloads of at most [`MAX_SPARSE`] bytes; the slices have equal length.
pub fn put_sparse(out: &mut Vec<u8>, header: Header, old: &[u8], new: &[u8]) -> bool {
    assert!(available() && old.len() == new.len() && new.len() <= MAX_SPARSE);
    // SAFETY: the CPU has the features `encode` is compiled for (checked just above).
    unsafe { encode(out, header, old, new) }
}

const CHUNKS: usize = MAX_SPARSE / 64;

#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,popcnt")]
unsafe fn encode(out: &mut Vec<u8>, header: Header, old: &[u8], new: &[u8]) -> bool {
    let len = new.len();
    if len <= 64 {
        // One vector: the common case (a SIMD16 dword or SIMD8 qword write), kept apart so
        // that it stays in registers (through the loop below, the encoder took 11.6% of a
        // Collatz recording's samples instead of 8.6%).
        return encode_one(out, header, old, new);
    }
    let map_len = len.div_ceil(8);
    let chunks = len.div_ceil(64);
    let mut xors = [_mm512_setzero_si512(); CHUNKS];
    let mut maps = [0u64; CHUNKS];
    let mut packed = 0;
    for c in 0..chunks {
        let n = (len - 64 * c).min(64);
        let lanes = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        // SAFETY: masked loads touch only the `n` bytes left in each slice from `64 * c`.
        let (a, b) = unsafe {
            (
                _mm512_maskz_loadu_epi8(lanes, old.as_ptr().add(64 * c).cast()),
                _mm512_maskz_loadu_epi8(lanes, new.as_ptr().add(64 * c).cast()),
            )
        };
        let x: __m512i = _mm512_xor_si512(a, b);
        xors[c] = x;
        maps[c] = _mm512_test_epi8_mask(x, x);
        packed += maps[c].count_ones() as usize;
    }
    if map_len + packed >= len {
        return false;
    }
    let start = out.len();
    // Whole 8-byte map words and whole 64-byte vector stores: room for what spills past the
    // end (overwritten by the next part, or beyond the length set at the end).
    let h = header.len();
    out.reserve(h + map_len + packed + 8 + 64);
    let head = out.as_mut_ptr().wrapping_add(start);
    // SAFETY: every store below ends within the reserved capacity: the header at 0..2, map
    // word `c` at h + 8c..h + 8c + 8 ≤ h + map_len + 7, and the vector at `at` ≤
    // h + map_len + packed, 64 bytes long. Only the first h + map_len + packed bytes, all
    // written, become the vector's length.
    unsafe {
        head.cast::<[u8; 2]>().write_unaligned(header.bytes(len, true));
        for (c, map) in maps.iter().enumerate().take(chunks) {
            head.add(h + 8 * c).cast::<[u8; 8]>().write_unaligned(map.to_le_bytes());
        }
        let mut at = h + map_len;
        for c in 0..chunks {
            _mm512_storeu_si512(head.add(at).cast(), _mm512_maskz_compress_epi8(maps[c], xors[c]));
            at += maps[c].count_ones() as usize;
        }
        out.set_len(start + at);
    }
    true
}

/// [`encode`] of at most 64 bytes.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,popcnt")]
fn encode_one(out: &mut Vec<u8>, header: Header, old: &[u8], new: &[u8]) -> bool {
    let len = new.len();
    let map_len = len.div_ceil(8);
    let lanes = if len == 64 { u64::MAX } else { (1u64 << len) - 1 };
    // SAFETY: masked loads touch only the slices' `len` bytes.
    let x = unsafe {
        _mm512_xor_si512(
            _mm512_maskz_loadu_epi8(lanes, old.as_ptr().cast()),
            _mm512_maskz_loadu_epi8(lanes, new.as_ptr().cast()),
        )
    };
    let map = _mm512_test_epi8_mask(x, x);
    let packed = map.count_ones() as usize;
    if map_len + packed >= len {
        return false;
    }
    let start = out.len();
    let h = header.len();
    out.reserve(2 + 8 + 64);
    let head = out.as_mut_ptr().wrapping_add(start);
    // SAFETY: the stores end within the reserved capacity (header 0..2, map word h..h + 8,
    // vector h + map_len..h + map_len + 64); the length set covers only bytes written (the
    // header's first h, the map's first `map_len`, the vector's first `packed`).
    unsafe {
        head.cast::<[u8; 2]>().write_unaligned(header.bytes(len, true));
        head.add(h).cast::<[u8; 8]>().write_unaligned(map.to_le_bytes());
        _mm512_storeu_si512(head.add(h + map_len).cast(), _mm512_maskz_compress_epi8(map, x));
        out.set_len(start + h + map_len + packed);
    }
    true
}

/// Appends the XOR payload of a lanes entry spanning at most 64 bytes, with a one-byte
/// header: `old XOR new` at the bytes set in `written`, packed, in the sparse form when it is
/// shorter, as the portable path's gather and [`super::put_xor`] write it.
pub fn put_packed(out: &mut Vec<u8>, old: &[u8], new: &[u8], written: u64) {
    assert!(available() && old.len() == new.len() && new.len() <= 64);
    // SAFETY: the CPU has the features `encode_packed` is compiled for (checked just above).
    unsafe { encode_packed(out, old, new, written) }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,popcnt")]
fn encode_packed(out: &mut Vec<u8>, old: &[u8], new: &[u8], written: u64) {
    let len = new.len();
    let lanes = if len == 64 { u64::MAX } else { (1u64 << len) - 1 };
    // SAFETY: masked loads touch only the slices' `len` bytes.
    let x = unsafe {
        _mm512_xor_si512(
            _mm512_maskz_loadu_epi8(lanes, old.as_ptr().cast()),
            _mm512_maskz_loadu_epi8(lanes, new.as_ptr().cast()),
        )
    };
    let written = written & lanes;
    let n = written.count_ones() as usize;
    let packed = _mm512_maskz_compress_epi8(written, x);
    let map = _mm512_test_epi8_mask(packed, packed);
    let (map_len, set) = (n.div_ceil(8), map.count_ones() as usize);
    let start = out.len();
    out.reserve(1 + 8 + 64);
    let head = out.as_mut_ptr().wrapping_add(start);
    // SAFETY: the stores end within the reserved capacity (header byte 0, map word 1..9,
    // vector from 1 + map_len or 1, 64 bytes); the length set covers only bytes written (the
    // header, the map's first `map_len` and the vector's first `set` bytes, or the header and
    // the `n` packed bytes).
    unsafe {
        if map_len + set < n {
            head.write(n as u8 | SPARSE_SHORT);
            head.add(1).cast::<[u8; 8]>().write_unaligned(map.to_le_bytes());
            _mm512_storeu_si512(head.add(1 + map_len).cast(), _mm512_maskz_compress_epi8(map, packed));
            out.set_len(start + 1 + map_len + set);
        } else {
            head.write(n as u8);
            _mm512_storeu_si512(head.add(1).cast(), packed);
            out.set_len(start + 1 + n);
        }
    }
}

/// XORs a payload of at most 64 bytes into `bytes` at the positions set in `at` (bit `i`:
/// byte `i`; none at or past `bytes.len()`): the payload's bytes in order, dense (`map` 0:
/// `data` holds them all) or sparse (the bits of `map` mark which of them `data` holds, the
/// others are 0). Undo and redo of compact GRF and lanes entries: one masked expansion per
/// form instead of a loop over bits.
pub fn xor_expand(bytes: &mut [u8], at: u64, map: Option<u64>, data: &[u8]) {
    assert!(available());
    let fits = if bytes.len() >= 64 { u64::MAX } else { (1u64 << bytes.len()) - 1 };
    assert!(at & !fits == 0 && data.len() <= 64);
    // SAFETY: the CPU has the features `expand` is compiled for (checked just above).
    unsafe { expand(bytes, at, map, data) }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,popcnt")]
fn expand(bytes: &mut [u8], at: u64, map: Option<u64>, data: &[u8]) {
    let n = data.len();
    let held = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
    // SAFETY: the masked load touches only `data`'s `n` bytes.
    let data = unsafe { _mm512_maskz_loadu_epi8(held, data.as_ptr().cast()) };
    // The payload in order: its sparse bytes spread to the bits of its map.
    let payload = match map {
        Some(map) => _mm512_maskz_expand_epi8(map, data),
        None => data,
    };
    let spread = _mm512_maskz_expand_epi8(at, payload);
    // SAFETY: the masked load and store touch only the bytes set in `at`, all within
    // `bytes` (checked by the caller).
    unsafe {
        let old = _mm512_maskz_loadu_epi8(at, bytes.as_ptr().cast());
        _mm512_mask_storeu_epi8(bytes.as_mut_ptr().cast(), at, _mm512_xor_si512(old, spread));
    }
}
