//! Expressions the commands take: register regions (`V0048(0,0)<1;1,0>:d`), memory
//! addresses (`0x1000`, `arg1+8`, `out+4`) and breakpoint conditions
//! (`any(V(0,0)<1;1,0> == 7)`), resolved against a program and a thread.

use crate::exec::load_le;
use crate::isa::{DataType, Region, UnitId, VarId};
use crate::launch::raw::parse_number;
use crate::machine::{MemSpace, ThreadState};
use crate::program::Program;

/// A region of a variable, resolved to bytes of the thread's GRF file.
#[derive(Clone, Debug, PartialEq)]
pub struct RegionRef {
    pub var: VarId,
    pub ty: DataType,
    pub base: u32,
    pub region: Region,
    /// Elements the region covers.
    pub n: u32,
    /// True for a bare variable name (the whole variable).
    pub whole: bool,
    /// True when `(r,c)` was given without a region (one element).
    pub single: bool,
}

impl RegionRef {
    /// GRF byte offset of element `i`.
    pub fn offset(&self, i: u32) -> u32 {
        self.base + self.region.element(i) * self.ty.size()
    }

    /// Raw bits of element `i` in `thread`.
    pub fn value(&self, thread: &ThreadState, i: u32) -> Option<u64> {
        let at = self.offset(i) as usize;
        thread.grf.get(at..at + self.ty.size() as usize).map(|b| load_le(b, self.ty.size()))
    }
}

fn split_type(text: &str) -> Result<(&str, Option<DataType>), String> {
    match text.rsplit_once(':') {
        Some((head, ty)) if !ty.contains(['(', '<', ')']) => match DataType::from_name(ty) {
            Some(t) if !t.is_packed_vector() => Ok((head, Some(t))),
            _ => Err(format!("unknown type `:{ty}`")),
        },
        _ => Ok((text, None)),
    }
}

fn nums(text: &str, sep: char) -> Result<Vec<u32>, String> {
    text.split(sep).map(|t| t.trim().parse::<u32>().map_err(|_| format!("`{t}` is not a number"))).collect()
}

/// Parses `NAME[(r,c)][<v;w,h>|<h>][:type]` and resolves it for `simd` lanes.
pub fn resolve_region(program: &Program, unit: UnitId, text: &str, simd: u32) -> Result<RegionRef, String> {
    let (head, ty_override) = split_type(text.trim())?;
    let name_end = head.find(['(', '<']).unwrap_or(head.len());
    let name = &head[..name_end];
    let var = program
        .var_id(unit, name)
        .or_else(|| program.var_id(UnitId(0), name))
        .ok_or_else(|| format!("no variable `{name}`"))?;
    let v = program.var(var);
    let mut rest = &head[name_end..];
    let (mut row, mut col) = (0, 0);
    let mut single = false;
    if let Some(r) = rest.strip_prefix('(') {
        let close = r.find(')').ok_or("missing `)`")?;
        let rc = nums(&r[..close], ',')?;
        let [r0, c0] = rc[..] else { return Err("write (row,col)".into()) };
        (row, col) = (r0, c0);
        rest = &r[close + 1..];
        single = true;
    }
    let ty = ty_override.unwrap_or(v.ty);
    let mut region = Region { vstride: 1, width: 1, hstride: 0 };
    let mut has_region = false;
    if let Some(r) = rest.strip_prefix('<') {
        let inner = r.strip_suffix('>').ok_or("missing `>`")?;
        region = match inner.split_once(';') {
            Some((vs, wh)) => {
                let wh = nums(wh, ',')?;
                let [w, h] = wh[..] else { return Err("write <vstride;width,hstride>".into()) };
                Region { vstride: small(nums(vs, ',')?[0])?, width: small(w.max(1))?, hstride: small(h)? }
            }
            None => Region::dst(small(nums(inner, ',')?[0])?),
        };
        has_region = true;
        single = false;
    } else if !rest.is_empty() {
        return Err(format!("unexpected `{rest}`"));
    }
    // Offsets are the user's numbers: computed wide, so that none wraps back inside.
    let outside = || format!("({row},{col}) is outside `{name}` ({} bytes)", v.size);
    let at = u64::from(row) * u64::from(program.grf_size) + u64::from(col) * u64::from(ty.size());
    if at >= u64::from(v.size) {
        return Err(outside());
    }
    let base = v.offset + at as u32;
    let end = v.offset + v.size;
    let whole = !single && !has_region;
    let n = if single {
        region = Region::scalar();
        1
    } else if whole {
        (end - base) / ty.size()
    } else {
        (0..simd).take_while(|&i| base + region.element(i) * ty.size() + ty.size() <= end).count() as u32
    };
    Ok(RegionRef { var, ty, base, region, n: n.max(1), whole, single })
}

/// A memory address expression: `N`, `argN[+OFF]`, or an SVM region name `[+OFF]`.
pub fn resolve_address(text: &str, args: &[(String, u64, u64)]) -> Result<u64, String> {
    let text = text.trim();
    if let Some(v) = parse_number(text) {
        return Ok(v);
    }
    let (name, offset) = match text.find(['+', '-']) {
        Some(pos) => {
            let off = parse_number(text[pos + 1..].trim()).ok_or(format!("bad offset in `{text}`"))?;
            (text[..pos].trim(), (text.as_bytes()[pos] == b'-', off))
        }
        None => (text, (false, 0)),
    };
    let base = args
        .iter()
        .find(|(n, _, _)| n == name)
        .map(|(_, addr, _)| *addr)
        .ok_or_else(|| format!("`{name}` is neither a number nor a buffer (argN or a region name)"))?;
    let address = match offset {
        (true, off) => base.checked_sub(off),
        (false, off) => base.checked_add(off),
    };
    address.ok_or_else(|| format!("`{text}` is outside the 64-bit address space"))
}

/// A region parameter (stride or width), which fits a byte.
fn small(n: u32) -> Result<u8, String> {
    u8::try_from(n).map_err(|_| format!("{n} is too large for a region stride or width"))
}

/// A memory location: `slm[G][+OFF]`, offset OFF of the shared local memory of work-group
/// G (of `group`, the focused thread's, without G), or else an SVM address expression
/// ([`resolve_address`]). A buffer that happens to be called `slm…` is still found.
pub fn resolve_memory(
    text: &str,
    args: &[(String, u64, u64)],
    group: u32,
) -> Result<(MemSpace, u64), String> {
    let text = text.trim();
    let svm = resolve_address(text, args);
    let Some(rest) = text.strip_prefix("slm").filter(|_| svm.is_err()) else {
        return Ok((MemSpace::Svm, svm?));
    };
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let group = match digits {
        0 => group,
        _ => {
            rest[..digits].parse().map_err(|_| format!("`{}` is not a work-group number", &rest[..digits]))?
        }
    };
    let offset = match rest[digits..].trim() {
        "" => 0,
        tail => tail
            .strip_prefix('+')
            .and_then(|off| parse_number(off.trim()))
            .ok_or_else(|| format!("`{text}`: write slm+OFF, or slmG+OFF for work-group G"))?,
    };
    Ok((MemSpace::Slm(group), offset))
}

/// A memory location as [`resolve_memory`] reads it back: `0x…`, or `slmG+0x…`.
pub fn location_text(space: MemSpace, addr: u64) -> String {
    match space {
        MemSpace::Svm => format!("{addr:#x}"),
        MemSpace::Slm(g) => format!("slm{g}+{addr:#x}"),
    }
}

/// Comparison in a condition.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// Each comparison as written, two-character ones first (the order the parser tries them).
const CMP_SYMBOLS: [(Cmp, &str); 6] =
    [(Cmp::Eq, "=="), (Cmp::Ne, "!="), (Cmp::Le, "<="), (Cmp::Ge, ">="), (Cmp::Lt, "<"), (Cmp::Gt, ">")];

impl Cmp {
    pub fn symbol(self) -> &'static str {
        CMP_SYMBOLS.iter().find(|(c, _)| *c == self).map_or("==", |(_, s)| s)
    }

    /// `lhs OP rhs`.
    pub fn holds(self, lhs: f64, rhs: f64) -> bool {
        match self {
            Cmp::Eq => lhs == rhs,
            Cmp::Ne => lhs != rhs,
            Cmp::Lt => lhs < rhs,
            Cmp::Le => lhs <= rhs,
            Cmp::Gt => lhs > rhs,
            Cmp::Ge => lhs >= rhs,
        }
    }
}

/// A condition's right-hand number: an integer (decimal, hex, negative) or a float.
fn number_value(text: &str) -> Result<f64, String> {
    Ok(match parse_number(text) {
        Some(v) if !text.contains('.') => {
            if text.trim_start().starts_with('-') {
                v as i64 as f64
            } else {
                v as f64
            }
        }
        _ => text.trim().parse::<f64>().map_err(|_| format!("`{text}` is not a number"))?,
    })
}

/// A watchpoint's condition on the watched value after the access: `OP VALUE` (`value OP
/// VALUE` too), the value read as `ty`.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueCondition {
    pub cmp: Cmp,
    pub value: String,
    pub rhs: f64,
    pub ty: DataType,
}

impl ValueCondition {
    pub fn parse(text: &str, ty: DataType) -> Result<ValueCondition, String> {
        let t = text.trim();
        let t = t.strip_prefix("value").map_or(t, str::trim_start);
        // CMP_SYMBOLS has `<=` before `<`.
        let (cmp, rest) =
            CMP_SYMBOLS.iter().find_map(|(c, s)| t.strip_prefix(s).map(|r| (*c, r.trim()))).ok_or_else(
                || format!("`{t}`: a watch condition is OP VALUE (== != < <= > >=), as in `if == 7`"),
            )?;
        Ok(ValueCondition { cmp, value: rest.to_string(), rhs: number_value(rest)?, ty })
    }

    /// Whether the watched bytes (little-endian, `ty`'s size) satisfy it.
    pub fn holds(&self, bytes: &[u8]) -> bool {
        let size = self.ty.size() as usize;
        bytes.len() >= size
            && self
                .cmp
                .holds(crate::exec::alu::to_f64(self.ty, load_le(&bytes[..size], size as u32)), self.rhs)
    }
}

impl std::fmt::Display for ValueCondition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "value {} {}", self.cmp.symbol(), self.value)
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Quantifier {
    /// The focused lane.
    Lane,
    Any,
    All,
}

/// A comparison `[any|all](REGION OP VALUE)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub quantifier: Quantifier,
    pub region: String,
    pub cmp: Cmp,
    pub value: String,
}

/// A breakpoint condition.
#[derive(Clone, Debug, PartialEq)]
pub enum Condition {
    Compare(Comparison),
    /// `workitem == X[,Y,Z]`: the thread at the breakpoint holds the work-item of that global
    /// id, and its lane is in the execution mask (the work-item itself reaches the line).
    WorkItem([u64; 3]),
}

/// Parses `workitem == ID` or a comparison.
pub fn parse_condition(text: &str) -> Result<Condition, String> {
    let t = text.trim();
    for name in ["workitem", "wi"] {
        let Some(rest) = t.strip_prefix(name).map(str::trim_start) else { continue };
        if let Some(id) = rest.strip_prefix("==") {
            return crate::launch::workitems::parse_global_id(id).map(Condition::WorkItem);
        }
        if rest.is_empty() || rest.starts_with(['!', '<', '>', '=']) {
            return Err(format!("write `{name} == X[,Y,Z]`: a work-item condition names one work-item"));
        }
    }
    parse_comparison(t).map(Condition::Compare)
}

fn parse_comparison(t: &str) -> Result<Comparison, String> {
    let (quantifier, inner) = if let Some(r) = t.strip_prefix("any(") {
        (Quantifier::Any, r.strip_suffix(')').ok_or("missing `)`")?)
    } else if let Some(r) = t.strip_prefix("all(") {
        (Quantifier::All, r.strip_suffix(')').ok_or("missing `)`")?)
    } else {
        (Quantifier::Lane, t)
    };
    for (cmp, symbol) in CMP_SYMBOLS {
        // A lone `<` or `>` needs spaces around it: regions are written `<1;1,0>`.
        let op = if symbol.len() == 1 { format!(" {symbol} ") } else { symbol.to_string() };
        if let Some((a, b)) = inner.split_once(op.as_str()) {
            return Ok(Comparison {
                quantifier,
                region: a.trim().to_string(),
                cmp,
                value: b.trim().to_string(),
            });
        }
    }
    Err(format!("`{inner}` is not a comparison (REGION == VALUE, !=, <, <=, >, >=)"))
}

/// The condition as it is written: `any(V0048(0,0)<1;1,0> == 7)`, `workitem == 5,0,0`.
impl std::fmt::Display for Condition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Condition::Compare(c) => c.fmt(f),
            Condition::WorkItem([x, y, z]) => write!(f, "workitem == {x},{y},{z}"),
        }
    }
}

impl std::fmt::Display for Comparison {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let comparison = format!("{} {} {}", self.region, self.cmp.symbol(), self.value);
        match self.quantifier {
            Quantifier::Lane => f.write_str(&comparison),
            Quantifier::Any => write!(f, "any({comparison})"),
            Quantifier::All => write!(f, "all({comparison})"),
        }
    }
}

impl Comparison {
    /// Evaluates the comparison on `thread` (`lane` for the per-lane form).
    pub fn eval(
        &self,
        program: &Program,
        unit: UnitId,
        thread: &ThreadState,
        lane: u32,
    ) -> Result<bool, String> {
        let r = resolve_region(program, unit, &self.region, thread.simd)?;
        let rhs = number_value(&self.value)?;
        Ok(self.holds(&r, rhs, thread, lane))
    }

    /// [`Comparison::eval`] with the region resolved and the value parsed (a recording tests
    /// a breakpoint's condition at every step of its instruction).
    pub fn holds(&self, r: &RegionRef, rhs: f64, thread: &ThreadState, lane: u32) -> bool {
        let test = |i: u32| -> bool {
            let Some(bits) = r.value(thread, i) else { return false };
            self.cmp.holds(crate::exec::alu::to_f64(r.ty, bits), rhs)
        };
        match self.quantifier {
            Quantifier::Any => (0..r.n).any(test),
            Quantifier::All => (0..r.n).all(test),
            Quantifier::Lane => test(if r.n == 1 { 0 } else { lane.min(r.n - 1) }),
        }
    }

    /// The region and value of [`Comparison::eval`] in `unit` for a thread of `simd` lanes.
    pub fn resolve(&self, program: &Program, unit: UnitId, simd: u32) -> Result<(RegionRef, f64), String> {
        Ok((resolve_region(program, unit, &self.region, simd)?, number_value(&self.value)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_parse() {
        let compare = |text: &str| match parse_condition(text) {
            Ok(Condition::Compare(c)) => c,
            other => panic!("{text}: {other:?}"),
        };
        let c = compare("any(V0048(0,0)<1;1,0> == 7)");
        assert_eq!(c.quantifier, Quantifier::Any);
        assert_eq!(c.region, "V0048(0,0)<1;1,0>");
        assert_eq!(c.cmp, Cmp::Eq);
        assert_eq!(c.value, "7");
        assert_eq!(compare("X(0,1)<0;1,0> <= -3").cmp, Cmp::Le);
        assert!(parse_condition("X").is_err());
        // Written back, every comparison parses to itself.
        for (cmp, _) in CMP_SYMBOLS {
            for quantifier in ["", "any(", "all("] {
                let close = if quantifier.is_empty() { "" } else { ")" };
                let text = format!("{quantifier}X(0,0)<1;1,0> {} 3{close}", cmp.symbol());
                let c = compare(&text);
                assert_eq!((c.cmp, c.to_string()), (cmp, text));
            }
        }
        // A variable whose name starts like the keyword is a comparison.
        assert_eq!(compare("wid(0,0) == 1").region, "wid(0,0)");
        assert_eq!(parse_condition("workitem == 5"), Ok(Condition::WorkItem([5, 0, 0])));
        assert_eq!(parse_condition(" wi==(3, 2)"), Ok(Condition::WorkItem([3, 2, 0])));
        let written = parse_condition("wi == 1,2,3").expect("parse").to_string();
        assert_eq!(parse_condition(&written), Ok(Condition::WorkItem([1, 2, 3])));
        for bad in ["workitem", "workitem != 3", "wi < 4", "workitem == x", "workitem == 1,2,3,4"] {
            assert!(parse_condition(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn addresses_resolve() {
        let args = vec![("arg1".to_string(), 0x1000u64, 64u64), ("out".to_string(), 0x2000, 16)];
        assert_eq!(resolve_address("arg1+8", &args), Ok(0x1008));
        assert_eq!(resolve_address("out", &args), Ok(0x2000));
        assert_eq!(resolve_address("0x40", &args), Ok(0x40));
        assert!(resolve_address("arg9", &args).is_err());
        assert_eq!(resolve_memory("slm+0x10", &args, 3), Ok((MemSpace::Slm(3), 0x10)));
        assert_eq!(resolve_memory("slm", &args, 3), Ok((MemSpace::Slm(3), 0)));
        assert_eq!(resolve_memory("slm12 + 8", &args, 3), Ok((MemSpace::Slm(12), 8)));
        assert_eq!(resolve_memory("arg1+8", &args, 3), Ok((MemSpace::Svm, 0x1008)));
        let named = vec![("slmbuf".to_string(), 0x4000u64, 64u64)];
        assert_eq!(resolve_memory("slmbuf+4", &named, 0), Ok((MemSpace::Svm, 0x4004)));
        assert!(resolve_memory("slm-4", &args, 0).is_err());
        assert!(resolve_memory("slmx", &args, 0).is_err());
        for (space, addr) in [(MemSpace::Svm, 0x1008), (MemSpace::Slm(2), 0x40), (MemSpace::Slm(0), 0)] {
            assert_eq!(resolve_memory(&location_text(space, addr), &args, 7), Ok((space, addr)));
        }
    }
}
