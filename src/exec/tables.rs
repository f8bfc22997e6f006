//! Lookup tables derived once from a `Program` for execution (no name lookups per step).

use crate::program::Program;

/// Per-program execution tables.
#[derive(Clone, Debug)]
pub struct Tables {
    pub grf_size: u32,
    /// For each unit of `1 << unit_shift` bytes of the thread's register file (a GRF
    /// register, or a smaller power of two), the byte range `[start, end)` of the root
    /// variable stored there (roots are GRF-aligned and never share a register), or None.
    pub root_by_grf: Vec<Option<(u32, u32)>>,
    unit_shift: u32,
    pub cr0_offset: u32,
    /// For each instruction, the stack-call function its `fcall`/`faddr` names (resolved
    /// once, so execution does no name lookup).
    pub function_of: Vec<Option<crate::isa::UnitId>>,
}

impl Tables {
    pub fn new(program: &Program) -> Tables {
        let grf_size = program.grf_size.max(1);
        // Units are the register size when it is a power of two (a shift, not a division,
        // finds one), else the largest power of two dividing it.
        let unit_shift = grf_size.trailing_zeros();
        let unit = 1u32 << unit_shift;
        let n_regs = program.grf_bytes.div_ceil(unit) as usize;
        let mut root_by_grf = vec![None; n_regs];
        for var in program.vars.iter().filter(|v| v.alias.is_none()) {
            let end = var.offset + var.size.max(1);
            for reg in var.offset >> unit_shift..end.div_ceil(unit) {
                if let Some(slot) = root_by_grf.get_mut(reg as usize) {
                    *slot = Some((var.offset, var.offset + var.size));
                }
            }
        }
        let offset_of = |name: &str| program.vars.iter().find(|v| v.name == name).map_or(0, |v| v.offset);
        let function_of = program
            .insts
            .iter()
            .map(|inst| match inst.operands.first() {
                Some(crate::isa::Operand::Function(name)) => program.function_unit(name),
                _ => None,
            })
            .collect();
        Tables { function_of, grf_size, root_by_grf, unit_shift, cr0_offset: offset_of("%cr0") }
    }

    /// The root variable range containing GRF byte `address`.
    #[inline]
    pub fn root_at(&self, address: i64) -> Option<(u32, u32)> {
        if address < 0 {
            return None;
        }
        let (start, end) = (*self.root_by_grf.get((address as u64 >> self.unit_shift) as usize)?)?;
        ((start as i64..end as i64).contains(&address)).then_some((start, end))
    }
}
