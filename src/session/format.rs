//! Formatting lane values by type for `print`, `x` and the views.

use super::command::Format;
use crate::exec::convert::f16_bits_to_f32;
use crate::isa::DataType;

/// The type a memory element of `unit` bytes reads as in `format` (`x/NFU`, `compare`,
/// memory watch values): a float of 4 or 8 bytes for `/f`, else an unsigned integer.
pub fn unit_type(unit: u64, format: Format) -> DataType {
    match (unit, format) {
        (4, Format::Float) => DataType::F,
        (8, Format::Float) => DataType::Df,
        (1, _) => DataType::Ub,
        (2, _) => DataType::Uw,
        (8, _) => DataType::Uq,
        _ => DataType::Ud,
    }
}

/// One value of type `ty` (raw bits) in `format`.
pub fn value(ty: DataType, bits: u64, format: Format) -> String {
    let size = ty.size();
    let mask = if size >= 8 { u64::MAX } else { (1u64 << (size * 8)) - 1 };
    let bits = bits & mask;
    let signed = || match size {
        1 => bits as u8 as i8 as i64,
        2 => bits as u16 as i16 as i64,
        4 => bits as u32 as i32 as i64,
        _ => bits as i64,
    };
    let float = || -> Option<String> {
        match size {
            2 => Some(format!("{}", f16_bits_to_f32(bits as u16))),
            4 => Some(format!("{}", f32::from_bits(bits as u32))),
            8 => Some(format!("{}", f64::from_bits(bits))),
            _ => None,
        }
    };
    match format {
        Format::Hex => format!("0x{:0width$x}", bits, width = (size * 2) as usize),
        Format::Signed => signed().to_string(),
        Format::Unsigned => bits.to_string(),
        Format::Float => float().unwrap_or_else(|| bits.to_string()),
        Format::Natural if ty.is_float() => float().unwrap_or_else(|| bits.to_string()),
        Format::Natural if ty.is_signed_int() => signed().to_string(),
        Format::Natural => bits.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_format_through_the_alu_conversion() {
        assert_eq!(f16_bits_to_f32(0x3c00), 1.0);
        assert_eq!(f16_bits_to_f32(0xc000), -2.0);
        assert_eq!(f16_bits_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_bits_to_f32(0x7c00), f32::INFINITY);
        assert!(f16_bits_to_f32(0x7e00).is_nan());
        assert_eq!(f16_bits_to_f32(0x8000).to_bits(), 0x8000_0000);
    }

    #[test]
    fn values_format_by_type() {
        assert_eq!(value(DataType::D, 0xffff_ffff, Format::Natural), "-1");
        assert_eq!(value(DataType::Ud, 0xffff_ffff, Format::Natural), "4294967295");
        assert_eq!(value(DataType::W, 0xfff9, Format::Hex), "0xfff9");
        assert_eq!(value(DataType::F, 0x3fc0_0000, Format::Natural), "1.5");
        assert_eq!(value(DataType::Ud, 0x3f80_0000, Format::Float), "1");
    }
}
