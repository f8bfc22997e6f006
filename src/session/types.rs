//! Typed memory: the element type that lives at an SVM address (the pointee type of the
//! buffer argument whose range holds it, from the zebin's `type_name`), and one formatter for
//! such elements: scalars by type and width, vectors as `(a, b, c, d)`, each with its
//! little-endian value in hex. Raw launches and SLM have no types: their values stay bytes.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{json, Value};

use super::command::Format;
use super::format::value as fmt_value;
use super::{Reply, Session, WatchTarget};
use crate::isa::DataType;
use crate::launch::raw::KernelArgValue;
use crate::machine::MemSpace;

/// OpenCL scalar type names and the vISA types their bits read as.
const SCALARS: [(&str, DataType); 15] = [
    ("char", DataType::B),
    ("uchar", DataType::Ub),
    ("short", DataType::W),
    ("ushort", DataType::Uw),
    ("int", DataType::D),
    ("uint", DataType::Ud),
    ("long", DataType::Q),
    ("ulong", DataType::Uq),
    ("half", DataType::Hf),
    ("float", DataType::F),
    ("double", DataType::Df),
    ("size_t", DataType::Uq),
    ("uintptr_t", DataType::Uq),
    ("ptrdiff_t", DataType::Q),
    ("intptr_t", DataType::Q),
];

/// Words of a pointer type that say where or how it points, not what to.
const QUALIFIERS: [&str; 9] =
    ["__global", "global", "__constant", "constant", "const", "volatile", "restrict", "__restrict", "struct"];

/// The type of a buffer's elements: a scalar, or a vector of 2, 3, 4, 8 or 16 of them.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ElemType {
    pub scalar: DataType,
    pub lanes: u32,
}

impl ElemType {
    /// The element type a pointer type points to (`float*`, `__global const int4*`), for
    /// the scalar and vector types OpenCL has; None for structs, pointers to pointers and
    /// anything else whose layout the zebin does not give.
    pub fn of_pointer(type_name: &str) -> Option<ElemType> {
        let pointee = type_name.trim().strip_suffix('*')?;
        let words: Vec<&str> = pointee.split_whitespace().filter(|w| !QUALIFIERS.contains(w)).collect();
        let word = match words.as_slice() {
            [word] => (*word).to_string(),
            ["unsigned", word] => format!("u{word}"),
            _ => return None,
        };
        let digits = word.len() - word.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (base, count) = word.split_at(word.len() - digits);
        let lanes = if count.is_empty() { 1 } else { count.parse().ok()? };
        let scalar = SCALARS.iter().find(|(name, _)| *name == base)?.1;
        matches!(lanes, 1 | 2 | 3 | 4 | 8 | 16).then_some(ElemType { scalar, lanes })
    }

    /// Bytes an element takes in memory (a 3-vector takes the room of four, as OpenCL lays
    /// it out).
    pub fn size(self) -> u64 {
        u64::from(self.scalar.size()) * u64::from(if self.lanes == 3 { 4 } else { self.lanes })
    }

    /// The OpenCL name: `float`, `int4`.
    pub fn name(self) -> String {
        let base = SCALARS.iter().find(|(_, t)| *t == self.scalar).map_or("?", |(name, _)| name);
        if self.lanes == 1 {
            base.to_string()
        } else {
            format!("{base}{}", self.lanes)
        }
    }

    /// The raw bits of each scalar of the element at the start of `bytes` (None when `bytes`
    /// is shorter than the element).
    fn scalars(self, bytes: &[u8]) -> Option<Vec<u64>> {
        let size = self.scalar.size() as usize;
        (0..self.lanes as usize)
            .map(|k| bytes.get(k * size..(k + 1) * size).map(|b| crate::exec::load_le(b, size as u32)))
            .collect()
    }

    /// The element as it reads in `format` (`Natural`: as its type reads): `406.25`,
    /// `(1, -2, 3, 4)`; `?` when `bytes` is too short.
    pub fn text(self, bytes: &[u8], format: Format) -> String {
        self.join(bytes, |bits| fmt_value(self.scalar, bits, format))
    }

    /// [`ElemType::text`] for narrow cells: a float longer than `width` characters in
    /// exponent form (`1.1754944e-38`, not forty digits).
    pub fn short_text(self, bytes: &[u8], format: Format, width: usize) -> String {
        let float = format == Format::Float || (format == Format::Natural && self.scalar.is_float());
        self.join(bytes, |bits| {
            let text = fmt_value(self.scalar, bits, format);
            match (float && text.len() > width, self.scalar.size()) {
                (true, 8) => format!("{:e}", f64::from_bits(bits)),
                (true, 4) => format!("{:e}", f32::from_bits(bits as u32)),
                (true, 2) => format!("{:e}", crate::exec::convert::f16_bits_to_f32(bits as u16)),
                _ => text,
            }
        })
    }

    /// The element's little-endian value in hex: `0x43cb2000`, `(0x0001, 0x0002)`.
    pub fn hex(self, bytes: &[u8]) -> String {
        self.text(bytes, Format::Hex)
    }

    /// The element as JSON: a number (a string for NaN and infinities, which JSON lacks), an
    /// array for a vector, null when `bytes` is too short.
    pub fn json(self, bytes: &[u8]) -> Value {
        let Some(bits) = self.scalars(bytes) else { return Value::Null };
        let values: Vec<Value> = bits.iter().map(|&b| scalar_json(self.scalar, b)).collect();
        match values.as_slice() {
            [one] => one.clone(),
            _ => Value::Array(values),
        }
    }

    fn join(self, bytes: &[u8], f: impl Fn(u64) -> String) -> String {
        match self.scalars(bytes) {
            None => "?".into(),
            Some(bits) if bits.len() == 1 => f(bits[0]),
            Some(bits) => format!("({})", bits.into_iter().map(f).collect::<Vec<_>>().join(", ")),
        }
    }

    /// The elements of `bytes` (whole elements, one or more) read by `f`: one element's
    /// result alone, several as a list.
    fn each<T>(self, bytes: &[u8], f: impl Fn(&[u8]) -> T) -> Vec<T> {
        bytes.chunks(self.size().max(1) as usize).map(f).collect()
    }

    /// `406.25 (0x43cb2000)`, or `[1.5 (0x3fc00000), 2 (0x40000000)]` for several elements.
    pub fn values_text(self, bytes: &[u8]) -> String {
        // A vector's hex is in parentheses already.
        let each = self.each(bytes, |e| match self.lanes {
            1 => format!("{} ({})", self.text(e, Format::Natural), self.hex(e)),
            _ => format!("{} {}", self.text(e, Format::Natural), self.hex(e)),
        });
        one_or_list(each, |v| format!("[{}]", v.join(", ")))
    }

    /// The elements of `bytes` as JSON: one element's value, or an array of them.
    pub fn values_json(self, bytes: &[u8]) -> Value {
        one_or_list(self.each(bytes, |e| self.json(e)), Value::Array)
    }

    /// The elements of `bytes` in hex: one element's, or an array of them.
    pub fn values_hex(self, bytes: &[u8]) -> Value {
        one_or_list(self.each(bytes, |e| json!(self.hex(e))), Value::Array)
    }
}

fn one_or_list<T>(mut each: Vec<T>, list: impl FnOnce(Vec<T>) -> T) -> T {
    match each.len() {
        1 => each.remove(0),
        _ => list(each),
    }
}

/// One scalar as a JSON number: floats through their shortest text (a float's `0.1`, not the
/// double nearest its bits), integers signed or not by type.
fn scalar_json(ty: DataType, bits: u64) -> Value {
    let text = fmt_value(ty, bits, Format::Natural);
    let number = match ty.is_float() {
        true => text.parse::<f64>().ok().and_then(serde_json::Number::from_f64),
        false if ty.is_signed_int() => text.parse::<i64>().ok().map(Into::into),
        false => text.parse::<u64>().ok().map(Into::into),
    };
    number.map_or(Value::String(text), Value::Number)
}

/// A buffer argument with an element type, and where it lies.
#[derive(Clone, Debug, PartialEq)]
pub struct TypedBuffer {
    pub name: String,
    pub base: u64,
    pub size: u64,
    pub elem: ElemType,
}

impl TypedBuffer {
    /// The start of the element holding `addr` (elements are counted from the buffer's
    /// start), when the whole element is inside the buffer.
    pub fn element_start(&self, addr: u64) -> Option<u64> {
        let size = self.elem.size();
        let start = self.base + (addr.checked_sub(self.base)? / size) * size;
        (start + size <= self.base + self.size).then_some(start)
    }
}

/// A watched range's value before and after an access, as its buffer's elements. In JSON it
/// adds `type`, `old_value`, `new_value` (numbers, or arrays for vectors and for several
/// elements) and `old_hex`, `new_hex` (the little-endian values) beside the raw `old`/`new`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypedChange {
    pub elem: ElemType,
    pub old: Vec<u8>,
    pub new: Vec<u8>,
}

impl TypedChange {
    /// `float 1.5 (0x3fc00000) -> 406.25 (0x43cb2000)`.
    pub fn text(&self) -> String {
        format!(
            "{} {} -> {}",
            self.elem.name(),
            self.elem.values_text(&self.old),
            self.elem.values_text(&self.new)
        )
    }

    /// The JSON fields it adds to an object that has the raw `old` and `new`.
    pub fn fields(&self) -> serde_json::Map<String, Value> {
        let e = self.elem;
        let mut map = serde_json::Map::new();
        map.insert("type".into(), json!(e.name()));
        map.insert("old_value".into(), e.values_json(&self.old));
        map.insert("new_value".into(), e.values_json(&self.new));
        map.insert("old_hex".into(), e.values_hex(&self.old));
        map.insert("new_hex".into(), e.values_hex(&self.new));
        map
    }
}

impl Serialize for TypedChange {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let fields = self.fields();
        let mut map = serializer.serialize_map(Some(fields.len()))?;
        for (k, v) in &fields {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// One value read as its buffer's elements (a `why` node's). In JSON it adds `type`,
/// `typed_value` and `value_hex` beside the raw `value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypedValue {
    pub elem: ElemType,
    pub bytes: Vec<u8>,
}

impl TypedValue {
    /// `406.25 (0x43cb2000)`.
    pub fn text(&self) -> String {
        self.elem.values_text(&self.bytes)
    }
}

impl Serialize for TypedValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("type", &self.elem.name())?;
        map.serialize_entry("typed_value", &self.elem.values_json(&self.bytes))?;
        map.serialize_entry("value_hex", &self.elem.values_hex(&self.bytes))?;
        map.end()
    }
}

impl Session {
    /// The buffer argument holding SVM address `addr`, when its pointer type names an element
    /// type (OpenCL launches; raw launches' regions and SLM have none).
    pub fn typed_buffer(&self, space: MemSpace, addr: u64) -> Option<TypedBuffer> {
        if space != MemSpace::Svm {
            return None;
        }
        self.args.iter().find_map(|a| match a.value {
            KernelArgValue::Buffer { address, size } if (address..address + size).contains(&addr) => {
                let elem = ElemType::of_pointer(&a.type_name)?;
                let name = if a.name.is_empty() { format!("arg{}", a.index) } else { a.name.clone() };
                Some(TypedBuffer { name, base: address, size, elem })
            }
            _ => None,
        })
    }

    /// The element type of `[addr, addr + len)` when the range is whole elements of one typed
    /// buffer, counted from the buffer's start; None otherwise (a byte of a float stays a byte).
    pub fn typed_range(&self, space: MemSpace, addr: u64, len: u64) -> Option<ElemType> {
        let b = self.typed_buffer(space, addr)?;
        let size = b.elem.size();
        let whole = len > 0 && len.is_multiple_of(size) && (addr - b.base).is_multiple_of(size);
        (whole && addr.checked_add(len)? <= b.base + b.size).then_some(b.elem)
    }

    /// The range a memory location means when no length is given: in a typed buffer the
    /// element holding `addr`, else `untyped` bytes from it.
    pub(super) fn default_range(&self, space: MemSpace, addr: u64, untyped: u64) -> (u64, u64) {
        let typed = self.typed_buffer(space, addr);
        match typed.as_ref().and_then(|b| Some((b.element_start(addr)?, b.elem.size()))) {
            Some(range) => range,
            None => (addr, untyped),
        }
    }

    /// `x/N[F] ADDR` in a typed buffer: N elements from the one holding ADDR, each as its
    /// type reads in F (its own type's format without F), rows labelled with the address and
    /// the buffer offset as gdb labels them with symbols.
    pub(super) fn examine_typed(
        &self,
        count: u32,
        format: Format,
        b: &TypedBuffer,
        addr: u64,
    ) -> Result<Reply, String> {
        let (elem, size) = (b.elem, b.elem.size());
        let start = b.element_start(addr).unwrap_or(addr);
        let mut bytes = vec![0u8; count as usize * size as usize];
        self.read_memory(MemSpace::Svm, start, &mut bytes)?;
        let elements: Vec<&[u8]> = bytes.chunks(size as usize).collect();
        let values: Vec<String> = elements.iter().map(|e| elem.text(e, format)).collect();
        let per_row = (32 / size).clamp(1, 8) as usize;
        let rows: Vec<String> = values
            .chunks(per_row)
            .enumerate()
            .map(|(i, row)| {
                let at = start + (i * per_row) as u64 * size;
                let name = self.buffer_location(at).map(|n| format!(" <{n}>")).unwrap_or_default();
                format!("{at:#x}{name}: {}", row.join(" "))
            })
            .collect();
        Ok(Reply::text(rows.join("\n"))
            .with("space", json!(super::space_name(MemSpace::Svm)))
            .with("address", json!(format!("{start:#x}")))
            .with("value", json!(values))
            .with("type", json!(elem.name()))
            .with("typed_values", json!(elements.iter().map(|e| elem.json(e)).collect::<Vec<_>>()))
            .with("values_hex", json!(elements.iter().map(|e| elem.hex(e)).collect::<Vec<_>>())))
    }

    /// A watch target's old and new bytes as typed elements, when it is whole elements of a
    /// typed buffer.
    pub(super) fn typed_change(&self, target: &WatchTarget, old: &[u8], new: &[u8]) -> Option<TypedChange> {
        let WatchTarget::Memory { space, addr, len } = *target else { return None };
        let elem = self.typed_range(space, addr, len)?;
        let whole = old.len() as u64 == len && new.len() as u64 == len;
        whole.then(|| TypedChange { elem, old: old.to_vec(), new: new.to_vec() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointer_types_name_their_elements() {
        let t = |s: &str| ElemType::of_pointer(s);
        assert_eq!(t("float*"), Some(ElemType { scalar: DataType::F, lanes: 1 }));
        assert_eq!(t("__global const float *"), Some(ElemType { scalar: DataType::F, lanes: 1 }));
        assert_eq!(t("int4*"), Some(ElemType { scalar: DataType::D, lanes: 4 }));
        assert_eq!(t("unsigned int*"), Some(ElemType { scalar: DataType::Ud, lanes: 1 }));
        assert_eq!(t("uchar16*").map(ElemType::size), Some(16));
        assert_eq!(t("float3*").map(ElemType::size), Some(16), "a 3-vector takes four's room");
        for none in ["float", "node*", "struct S*", "int**", "int5*", "float2 x*", ""] {
            assert_eq!(t(none), None, "{none}");
        }
        assert_eq!(t("short2*").map(ElemType::name).as_deref(), Some("short2"));
    }

    #[test]
    fn elements_format_by_type_with_their_hex() {
        let f = ElemType { scalar: DataType::F, lanes: 1 };
        let bytes = 406.25f32.to_le_bytes();
        assert_eq!(f.values_text(&bytes), "406.25 (0x43cb2000)");
        assert_eq!(f.json(&bytes), json!(406.25));
        assert_eq!(f.json(&0.1f32.to_le_bytes()), json!(0.1), "a float's shortest text");
        assert_eq!(f.json(&f32::NAN.to_le_bytes()), json!("NaN"));
        let i4 = ElemType { scalar: DataType::D, lanes: 4 };
        let v: Vec<u8> = [1i32, -2, 3, -4].iter().flat_map(|x| x.to_le_bytes()).collect();
        assert_eq!(i4.text(&v, Format::Natural), "(1, -2, 3, -4)");
        assert_eq!(i4.json(&v), json!([1, -2, 3, -4]));
        assert_eq!(i4.text(&v[..8], Format::Natural), "?", "too short");
        let c = ElemType { scalar: DataType::B, lanes: 1 };
        assert_eq!(c.values_json(&[0xff, 5]), json!([-1, 5]));
        assert_eq!(c.values_hex(&[0xff]), json!("0xff"));
        let h = ElemType { scalar: DataType::Hf, lanes: 1 };
        assert_eq!(h.json(&0xc000u16.to_le_bytes()), json!(-2.0));
        let u = ElemType { scalar: DataType::Uq, lanes: 1 };
        assert_eq!(u.json(&u64::MAX.to_le_bytes()), json!(u64::MAX));
    }

    #[test]
    fn elements_are_counted_from_the_buffer_start() {
        let b = TypedBuffer {
            name: "b".into(),
            base: 0x1000,
            size: 24,
            elem: ElemType { scalar: DataType::D, lanes: 2 },
        };
        assert_eq!(b.element_start(0x1000), Some(0x1000));
        assert_eq!(b.element_start(0x100f), Some(0x1008));
        assert_eq!(b.element_start(0x1017), Some(0x1010));
        assert_eq!(b.element_start(0x0fff), None);
    }
}
