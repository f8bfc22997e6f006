//! vISA data types: names as the 12504 parser spells them, sizes, and classification.

use std::fmt;

/// An element type of a vISA variable, immediate or operand.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum DataType {
    Ud,
    D,
    Uw,
    W,
    Ub,
    B,
    Df,
    F,
    /// Packed vector of eight signed 4-bit integers (immediates only).
    V,
    /// Packed vector of four restricted 8-bit floats (immediates only).
    Vf,
    Bool,
    Uq,
    /// Packed vector of eight unsigned 4-bit integers (immediates only).
    Uv,
    Q,
    Hf,
    Bf,
    /// FP8 E5M2 (vISA 4.2, IGC 2.x `type=bf8`): the high byte of an f16.
    Bf8,
    /// FP8 E4M3 (`type=hf8`): no infinities, S.1111.111 is NaN, largest finite 448.
    Hf8,
    /// TensorFloat-32 (`type=tf32`): f32 layout whose low 13 mantissa bits are zero.
    Tf32,
    /// FP4 E2M1 (`type=e2m1`), one element per byte here: no infinities or NaNs.
    E2m1,
}

impl DataType {
    /// Every type: the 12504 ones in binary-encoding order (UD=0 … BF=15), then the vISA 4.2
    /// (IGC 2.x) additions, whose encodings vdb never reads.
    pub const ALL: [DataType; 20] = [
        DataType::Ud,
        DataType::D,
        DataType::Uw,
        DataType::W,
        DataType::Ub,
        DataType::B,
        DataType::Df,
        DataType::F,
        DataType::V,
        DataType::Vf,
        DataType::Bool,
        DataType::Uq,
        DataType::Uv,
        DataType::Q,
        DataType::Hf,
        DataType::Bf,
        DataType::Bf8,
        DataType::Hf8,
        DataType::Tf32,
        DataType::E2m1,
    ];

    /// Size of one element in bytes (packed vector immediates count as one 4-byte element).
    pub const fn size(self) -> u32 {
        match self {
            // e2m1 is a 4-bit format; one element a byte is an assumption (IGC's type table
            // entry was not found), which only matters for variables declared with it.
            DataType::Ub | DataType::B | DataType::Bool | DataType::Bf8 | DataType::Hf8 | DataType::E2m1 => 1,
            DataType::Uw | DataType::W | DataType::Hf | DataType::Bf => 2,
            DataType::Ud
            | DataType::D
            | DataType::F
            | DataType::V
            | DataType::Vf
            | DataType::Uv
            | DataType::Tf32 => 4,
            DataType::Uq | DataType::Q | DataType::Df => 8,
        }
    }

    /// log2 of [`DataType::size`].
    pub const fn size_log2(self) -> u32 {
        self.size().trailing_zeros()
    }

    pub const fn is_float(self) -> bool {
        matches!(
            self,
            DataType::F
                | DataType::Df
                | DataType::Hf
                | DataType::Bf
                | DataType::Vf
                | DataType::Bf8
                | DataType::Hf8
                | DataType::Tf32
                | DataType::E2m1
        )
    }

    /// The vISA 4.2 narrow float types that only `fcvt`, `srnd` and same-type moves handle.
    pub const fn is_convert_only(self) -> bool {
        matches!(self, DataType::Bf8 | DataType::Hf8 | DataType::Tf32 | DataType::E2m1)
    }

    pub const fn is_int(self) -> bool {
        !self.is_float()
    }

    /// Signed integer types (and the signed packed vector `v`).
    pub const fn is_signed_int(self) -> bool {
        matches!(self, DataType::D | DataType::W | DataType::B | DataType::Q | DataType::V)
    }

    pub const fn is_packed_vector(self) -> bool {
        matches!(self, DataType::V | DataType::Uv | DataType::Vf)
    }

    /// Bit width of one element.
    pub const fn bits(self) -> u32 {
        self.size() * 8
    }

    /// The lower-case name the text syntax uses.
    pub const fn name(self) -> &'static str {
        match self {
            DataType::Ud => "ud",
            DataType::D => "d",
            DataType::Uw => "uw",
            DataType::W => "w",
            DataType::Ub => "ub",
            DataType::B => "b",
            DataType::Df => "df",
            DataType::F => "f",
            DataType::V => "v",
            DataType::Vf => "vf",
            DataType::Bool => "bool",
            DataType::Uq => "uq",
            DataType::Uv => "uv",
            DataType::Q => "q",
            DataType::Hf => "hf",
            DataType::Bf => "bf",
            DataType::Bf8 => "bf8",
            DataType::Hf8 => "hf8",
            DataType::Tf32 => "tf32",
            DataType::E2m1 => "e2m1",
        }
    }

    /// Parses a type name case-insensitively (`ud`, `UD`, `Bool`, …).
    pub fn from_name(text: &str) -> Option<DataType> {
        let lower = text.to_ascii_lowercase();
        DataType::ALL.iter().copied().find(|t| t.name() == lower)
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_in_any_case() {
        for ty in DataType::ALL {
            assert_eq!(DataType::from_name(ty.name()), Some(ty));
            assert_eq!(DataType::from_name(&ty.name().to_ascii_uppercase()), Some(ty));
        }
        assert_eq!(DataType::from_name("x"), None);
    }

    #[test]
    fn sizes_match_the_spec_table() {
        assert_eq!(DataType::Ud.size(), 4);
        assert_eq!(DataType::Hf.size(), 2);
        assert_eq!(DataType::Q.size(), 8);
        assert_eq!(DataType::B.size_log2(), 0);
        assert_eq!(DataType::Df.size_log2(), 3);
        assert_eq!(DataType::Bf8.size(), 1);
        assert_eq!(DataType::Tf32.size(), 4);
        assert!(DataType::E2m1.is_float() && DataType::Hf8.is_convert_only());
    }
}
