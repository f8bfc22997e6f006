//! The sparse XOR encoder's byte packing by byte shuffle (SSSE3), for CPUs without the
//! AVX-512 encoder: built where the build enables SSSE3 (x86-64-v2 and later, and `native`
//! on any CPU of the last fifteen years). Under valgrind, which has no AVX-512, the encoder
//! packing a byte at a time took 27% of `vdb bench-record`'s instructions on the Collatz
//! launch (where stretches are recorded again with their logs). Output is byte
//! for byte the word loop's (a test checks the encoder against the sparse form's definition).
#![allow(unsafe_code)]

/// For each byte map, the positions of its set bits in order, then 0x80 (which a byte
/// shuffle reads as zero); the second half the same positions in a vector's high 8 bytes.
const PACK: [[[u8; 8]; 256]; 2] = {
    let mut table = [[[0x80u8; 8]; 256]; 2];
    let mut map = 0;
    while map < 256 {
        let (mut i, mut k) = (0, 0);
        while i < 8 {
            if map >> i & 1 == 1 {
                table[0][map][k] = i as u8;
                table[1][map][k] = i as u8 + 8;
                k += 1;
            }
            i += 1;
        }
        map += 1;
    }
    table
};

/// The sparse form's byte maps and packed bytes for the whole 16-byte chunks of `old XOR
/// new`: each chunk's non-zero bytes moved down by one byte shuffle per half (SSSE3), where
/// the word loop takes a step per byte. Stores 8 bytes per half (`data` has that slack).
/// Returns the bytes read and the bytes packed.
pub(super) fn pack_chunks(maps: &mut [u8], data: &mut [u8], old: &[u8], new: &[u8]) -> (usize, usize) {
    // SAFETY: this module is built only where the build enables SSSE3 (and so SSE2) for
    // every function; the call only names those features for the compiler.
    unsafe { pack(maps, data, old, new) }
}

#[target_feature(enable = "sse2,ssse3")]
fn pack(maps: &mut [u8], data: &mut [u8], old: &[u8], new: &[u8]) -> (usize, usize) {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_cvtsi128_si64, _mm_movemask_epi8, _mm_set_epi64x, _mm_setzero_si128,
        _mm_shuffle_epi8, _mm_unpackhi_epi64, _mm_xor_si128,
    };
    let word = |c: &[u8], i: usize| {
        i64::from_le_bytes([c[i], c[i + 1], c[i + 2], c[i + 3], c[i + 4], c[i + 5], c[i + 6], c[i + 7]])
    };
    let mut packed = 0;
    let chunks = old.chunks_exact(16).zip(new.chunks_exact(16));
    for ((a, b), map) in chunks.zip(maps.chunks_exact_mut(2)) {
        let x = _mm_xor_si128(_mm_set_epi64x(word(a, 8), word(a, 0)), _mm_set_epi64x(word(b, 8), word(b, 0)));
        let zeros = _mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_setzero_si128()));
        let (lo, hi) = (!zeros as u8, !(zeros >> 8) as u8);
        (map[0], map[1]) = (lo, hi);
        let order = _mm_set_epi64x(
            i64::from_le_bytes(PACK[1][hi as usize]),
            i64::from_le_bytes(PACK[0][lo as usize]),
        );
        let moved = _mm_shuffle_epi8(x, order);
        data[packed..packed + 8].copy_from_slice(&_mm_cvtsi128_si64(moved).to_le_bytes());
        packed += lo.count_ones() as usize;
        data[packed..packed + 8]
            .copy_from_slice(&_mm_cvtsi128_si64(_mm_unpackhi_epi64(moved, moved)).to_le_bytes());
        packed += hi.count_ones() as usize;
    }
    (old.len() / 16 * 16, packed)
}
