//! The declared types of OpenCL kernel arguments, as the zebin's `args_info` writes them
//! (`int4;16`, `float*;8`, `S;24`), and typed launch values turned into the bytes the kernel
//! reads: JSON numbers or strings per component, vectors as arrays (a 3-component vector takes
//! 4 slots, as in OpenCL C).

use serde_json::Value;

use super::raw::parse_number;
use crate::exec::convert::f32_to_f16_bits;

/// A built-in scalar type of OpenCL C.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Scalar {
    Char,
    UChar,
    Short,
    UShort,
    Int,
    UInt,
    Long,
    ULong,
    Half,
    Float,
    Double,
}

impl Scalar {
    fn parse(name: &str) -> Option<Scalar> {
        Some(match name {
            "char" | "signed char" => Scalar::Char,
            "uchar" | "unsigned char" => Scalar::UChar,
            "short" => Scalar::Short,
            "ushort" | "unsigned short" => Scalar::UShort,
            "int" => Scalar::Int,
            "uint" | "unsigned int" | "unsigned" => Scalar::UInt,
            "long" | "ptrdiff_t" | "intptr_t" => Scalar::Long,
            "ulong" | "unsigned long" | "size_t" | "uintptr_t" => Scalar::ULong,
            "half" => Scalar::Half,
            "float" => Scalar::Float,
            "double" => Scalar::Double,
            _ => return None,
        })
    }

    /// Bytes of one component.
    pub fn size(self) -> u32 {
        match self {
            Scalar::Char | Scalar::UChar => 1,
            Scalar::Short | Scalar::UShort | Scalar::Half => 2,
            Scalar::Int | Scalar::UInt | Scalar::Float => 4,
            Scalar::Long | Scalar::ULong | Scalar::Double => 8,
        }
    }

    fn is_float(self) -> bool {
        matches!(self, Scalar::Half | Scalar::Float | Scalar::Double)
    }

    fn is_signed(self) -> bool {
        matches!(self, Scalar::Char | Scalar::Short | Scalar::Int | Scalar::Long)
    }
}

/// A value type: a built-in scalar or vector (`lanes` 1, 2, 3, 4, 8 or 16), or a type vdb
/// cannot look into (a struct, a typedef, `void`), known only by name and maybe size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueType {
    pub name: String,
    /// None for a type vdb cannot type values of.
    pub scalar: Option<Scalar>,
    pub lanes: u32,
    /// Bytes of one value (a 3-vector takes 4 slots); None when unknown (`void`, a struct
    /// behind a pointer).
    pub size: Option<u32>,
}

impl ValueType {
    /// Parses an OpenCL type name; `size` is what the zebin says the type takes, if it says.
    pub fn parse(name: &str, size: Option<u32>) -> ValueType {
        let name = name.trim().to_string();
        let (base, lanes) = split_lanes(&name);
        match Scalar::parse(base) {
            Some(s) => {
                let slots = if lanes == 3 { 4 } else { lanes };
                ValueType { name, scalar: Some(s), lanes, size: Some(s.size() * slots) }
            }
            None => ValueType { name, scalar: None, lanes: 1, size },
        }
    }

    /// Encodes one value: a number or string for a scalar, an array of `lanes` items for a
    /// vector (`broadcast` also takes one item for all lanes, as `(int4)(5)` does).
    pub fn encode(&self, v: &Value, broadcast: bool) -> Result<Vec<u8>, String> {
        let Some(s) = self.scalar else {
            return Err(format!("vdb cannot type values of `{}`: give its bytes instead", self.name));
        };
        let items: Vec<&Value> = match v {
            Value::Array(items) if self.lanes > 1 => items.iter().collect(),
            Value::Array(_) => return Err(format!("`{}` is one value, not a list", self.name)),
            one if self.lanes > 1 && broadcast => vec![one; self.lanes as usize],
            _ if self.lanes > 1 => {
                return Err(format!("`{}` takes a list of {} values", self.name, self.lanes));
            }
            one => vec![one],
        };
        if items.len() != self.lanes as usize {
            return Err(format!("`{}` takes {} values, {} given", self.name, self.lanes, items.len()));
        }
        let mut out = Vec::with_capacity(self.size.unwrap_or(0) as usize);
        for item in items {
            out.extend_from_slice(&component(item, s)?);
        }
        // The fourth slot of a 3-vector.
        out.resize(self.size.unwrap_or(out.len() as u32) as usize, 0);
        Ok(out)
    }

    /// Encodes a list of values, each an item of [`ValueType::encode`], or, for a vector
    /// type, a flat list of components taken `lanes` at a time.
    pub fn encode_list(&self, values: &[Value]) -> Result<Vec<u8>, (usize, String)> {
        let flat = self.lanes > 1 && values.iter().all(|v| !v.is_array());
        if flat {
            if !values.len().is_multiple_of(self.lanes as usize) {
                let msg = format!(
                    "{} components do not make whole {}s ({} each)",
                    values.len(),
                    self.name,
                    self.lanes
                );
                return Err((values.len(), msg));
            }
            let groups = values.chunks(self.lanes as usize).map(|c| Value::Array(c.to_vec()));
            let groups: Vec<Value> = groups.collect();
            return self.encode_all(&groups, self.lanes as usize);
        }
        self.encode_all(values, 1)
    }

    fn encode_all(&self, values: &[Value], stride: usize) -> Result<Vec<u8>, (usize, String)> {
        let mut out = Vec::new();
        for (i, v) in values.iter().enumerate() {
            out.extend_from_slice(&self.encode(v, false).map_err(|e| (i * stride, e))?);
        }
        Ok(out)
    }
}

/// `int4` → (`int`, 4); `float` → (`float`, 1); `uchar16` → (`uchar`, 16).
fn split_lanes(name: &str) -> (&str, u32) {
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (base, n) = name.split_at(name.len() - digits);
    match n.parse::<u32>() {
        Ok(l @ (2 | 3 | 4 | 8 | 16)) if Scalar::parse(base).is_some() => (base, l),
        _ => (name, 1),
    }
}

/// One component's bytes, little-endian.
fn component(v: &Value, s: Scalar) -> Result<Vec<u8>, String> {
    let bits = if s.is_float() { float_bits(v, s)? } else { int_bits(v, s)? };
    Ok(bits.to_le_bytes()[..s.size() as usize].to_vec())
}

fn type_name(s: Scalar) -> &'static str {
    match s {
        Scalar::Char => "char",
        Scalar::UChar => "uchar",
        Scalar::Short => "short",
        Scalar::UShort => "ushort",
        Scalar::Int => "int",
        Scalar::UInt => "uint",
        Scalar::Long => "long",
        Scalar::ULong => "ulong",
        Scalar::Half => "half",
        Scalar::Float => "float",
        Scalar::Double => "double",
    }
}

/// An integer component: a JSON integer within the type's range, or a string (decimal, or a
/// `0x` bit pattern of at most the type's width).
fn int_bits(v: &Value, s: Scalar) -> Result<u64, String> {
    let bits = 8 * s.size();
    let not = || format!("`{v}` is not a {} value", type_name(s));
    let wide = || format!("`{v}` does not fit in a {} ({bits} bits)", type_name(s));
    let (min, max): (i128, i128) = if s.is_signed() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    let n: i128 = match v {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().ok_or_else(not)?;
            if f.fract() != 0.0 || !f.is_finite() {
                return Err(not());
            }
            f as i128
        }
        Value::Number(n) => n.as_i64().map(i128::from).or(n.as_u64().map(i128::from)).ok_or_else(not)?,
        Value::String(t) if t.trim().starts_with("0x") || t.trim().starts_with("0X") => {
            let raw = parse_number(t).ok_or_else(not)?;
            if bits < 64 && raw >> bits != 0 {
                return Err(wide());
            }
            return Ok(raw);
        }
        Value::String(t) => t.trim().replace('_', "").parse::<i128>().map_err(|_| not())?,
        _ => return Err(not()),
    };
    if n < min || n > max {
        return Err(wide());
    }
    Ok(n as u64)
}

/// A floating-point component: a JSON number, or a string: a decimal number, `nan`, `inf`,
/// `-inf`, or a `0x` bit pattern.
fn float_bits(v: &Value, s: Scalar) -> Result<u64, String> {
    let not = || format!("`{v}` is not a {} value", type_name(s));
    let f: f64 = match v {
        Value::Number(n) => n.as_f64().ok_or_else(not)?,
        Value::String(t) if t.trim().starts_with("0x") || t.trim().starts_with("0X") => {
            let raw = parse_number(t).ok_or_else(not)?;
            let bits = 8 * s.size();
            if bits < 64 && raw >> bits != 0 {
                return Err(format!("`{v}` is wider than a {} ({bits} bits)", type_name(s)));
            }
            return Ok(raw);
        }
        Value::String(t) => match t.trim().to_ascii_lowercase().as_str() {
            "nan" => f64::NAN,
            "inf" | "+inf" | "infinity" => f64::INFINITY,
            "-inf" | "-infinity" => f64::NEG_INFINITY,
            other => other.parse::<f64>().map_err(|_| not())?,
        },
        _ => return Err(not()),
    };
    Ok(match s {
        Scalar::Half => f32_to_f16_bits(f as f32, 0) as u64,
        Scalar::Float => (f as f32).to_bits() as u64,
        _ => f.to_bits(),
    })
}

/// A kernel argument's declared type, from `args_info`: `float*;8` is a pointer to `float`,
/// `int4;16` a 16-byte `int4` by value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declared {
    /// The type as the source writes it, with its address space for pointers
    /// (`__global float*`).
    pub display: String,
    /// The pointee type of a pointer, None for a value.
    pub pointee: Option<ValueType>,
    /// The value type of a by-value argument (for a pointer: its 8 bytes, unused).
    pub value: ValueType,
}

impl Declared {
    /// From `args_info`'s `type_name` (`T;SIZE`) and `address_qualifier` (`__global`, ...).
    pub fn parse(type_name: &str, address_qualifier: &str) -> Declared {
        let (ty, size) = match type_name.rsplit_once(';') {
            Some((t, n)) => (t.trim(), n.trim().parse::<u32>().ok()),
            None => (type_name.trim(), None),
        };
        let pointee = ty.strip_suffix('*').map(|p| ValueType::parse(p, None));
        let display = match (&pointee, address_qualifier) {
            (Some(_), q) if !q.is_empty() && q != "__private" => format!("{q} {ty}"),
            _ => ty.to_string(),
        };
        Declared { display, pointee, value: ValueType::parse(ty, size) }
    }

    /// Whether a launch's `type` names this type: as displayed (`__global float*`) or bare
    /// (`float*`), spaces and `const` aside (`args_info` keeps qualifiers apart).
    pub fn matches(&self, written: &str) -> bool {
        let squash = |s: &str| {
            let s = s.replace('*', " * ");
            let words: Vec<&str> = s.split_whitespace().filter(|w| *w != "const").collect();
            words.join(" ").replace(" *", "*")
        };
        let w = squash(written);
        w == squash(&self.display) || w == squash(&self.value.name)
    }
}
