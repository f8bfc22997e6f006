//! Source lines: where each vISA instruction comes from in the OpenCL C source. IGC, given
//! `-g`, writes `FILE "path"` and `LOC n` pseudo-instructions into the vISA; a `LOC` holds
//! for the instructions after it until the next one, and `LOC 0` means "no line". The table
//! is built once, when the program is parsed, so that stepping by source line looks nothing
//! up: a step checks one entry of a vector.
//!
//! A line's *entry* (gdb's `is_stmt`) is the first instruction of a run of that line in
//! program order: instructions of no line do not break a run, instructions of another line
//! do. Source-level stepping stops only at entries, so a loop's back edge or the
//! instructions a line's code shares with `LOC 0` regions do not stop it twice.

use std::path::Path;

use crate::isa::{InstIdx, Opcode, Operand, SubOp};
use crate::program::{Inst, Unit};

/// A source file named by a `FILE` directive.
#[derive(Clone, Debug, Default)]
pub struct LineFile {
    /// The path as `FILE` gives it (absolute, on the machine that compiled the kernel).
    pub name: String,
    /// Where the text was found and the text; None when neither the path nor the file's
    /// name next to the launch or kernel file finds it (stepping works without it).
    pub found: Option<(String, String)>,
}

impl LineFile {
    /// The file's name without its folders, as stops and `source` fields name it.
    pub fn short(&self) -> &str {
        self.name.rsplit(['/', '\\']).next().unwrap_or(&self.name)
    }

    pub fn text(&self) -> Option<&str> {
        self.found.as_ref().map(|(_, t)| t.as_str())
    }

    /// The text of 1-based line `line`, when the file was found and has it.
    pub fn line_text(&self, line: u32) -> Option<&str> {
        self.text()?.lines().nth(line.checked_sub(1)? as usize)
    }

    /// Lines in the text (0 when it was not found).
    pub fn line_count(&self) -> u32 {
        self.text().map_or(0, |t| t.lines().count() as u32)
    }
}

/// Where one instruction comes from.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SrcPos {
    /// Index in [`LineTable::files`].
    pub file: u32,
    /// 1-based line; 0 when the instruction's code is of no line and no line is near it.
    pub line: u32,
    /// The instruction is the entry of a run of its line (only for exact positions).
    pub stmt: bool,
    /// The position is the instruction's own; otherwise it is the nearest line before it
    /// in its unit (or after it, before the first `LOC`), for showing where the thread is.
    pub exact: bool,
}

impl SrcPos {
    /// File and line, what "the same line" compares.
    pub fn key(self) -> (u32, u32) {
        (self.file, self.line)
    }
}

/// The source position of every instruction, and the files they name.
#[derive(Clone, Debug, Default)]
pub struct LineTable {
    pub files: Vec<LineFile>,
    /// One per instruction of the program.
    pos: Vec<SrcPos>,
    /// Whether any instruction has a line.
    any: bool,
}

impl LineTable {
    /// Reads `FILE` and `LOC` through each unit in program order.
    pub fn build(insts: &[Inst], units: &[Unit]) -> LineTable {
        let mut table =
            LineTable { files: Vec::new(), pos: vec![SrcPos::default(); insts.len()], any: false };
        for unit in units {
            let range = unit.entry.0 as usize..(unit.end.0 as usize).min(insts.len());
            table.exact_positions(insts, range.clone());
            table.fill_gaps(range);
        }
        table.any = table.pos.iter().any(|p| p.exact);
        table
    }

    /// The instructions' own positions in `range` (one unit) and their entry flags.
    fn exact_positions(&mut self, insts: &[Inst], range: std::ops::Range<usize>) {
        let (mut file, mut line) = (None, 0u32);
        let mut previous: Option<(u32, u32)> = None;
        for i in range {
            let inst = &insts[i];
            match (inst.op, &inst.sub, inst.operands.first()) {
                (Opcode::File, SubOp::Word(name), _) => file = Some(self.file_index(name)),
                // A line past u32 is no line a source file has.
                (Opcode::Loc, _, Some(Operand::Int(n))) => line = u32::try_from(*n).unwrap_or(0),
                (Opcode::Loc | Opcode::File | Opcode::EndOfCode, _, _) => {}
                _ => {
                    let Some(file) = file.filter(|_| line != 0) else { continue };
                    let stmt = previous != Some((file, line));
                    previous = Some((file, line));
                    self.pos[i] = SrcPos { file, line, stmt, exact: true };
                }
            }
        }
    }

    /// Gives instructions of no line the nearest line before them in the unit (the one
    /// their code follows), or, before the first, the first line after.
    fn fill_gaps(&mut self, range: std::ops::Range<usize>) {
        let near = |p: SrcPos| SrcPos { stmt: false, exact: false, ..p };
        let mut last: Option<SrcPos> = None;
        for i in range.clone() {
            match (self.pos[i].exact, last) {
                (true, _) => last = Some(self.pos[i]),
                (false, Some(p)) => self.pos[i] = near(p),
                (false, None) => {}
            }
        }
        let mut next: Option<SrcPos> = None;
        for i in range.rev() {
            match (self.pos[i].line != 0, next) {
                (true, _) => next = Some(self.pos[i]),
                (false, Some(p)) => self.pos[i] = near(p),
                (false, None) => {}
            }
        }
    }

    fn file_index(&mut self, name: &str) -> u32 {
        match self.files.iter().position(|f| f.name == name) {
            Some(i) => i as u32,
            None => {
                self.files.push(LineFile { name: name.to_string(), found: None });
                self.files.len() as u32 - 1
            }
        }
    }

    /// Whether the program has line information at all.
    pub fn has_lines(&self) -> bool {
        self.any
    }

    /// The instruction's own source position, when its code has a line.
    pub fn at(&self, pc: InstIdx) -> Option<SrcPos> {
        self.pos.get(pc.0 as usize).copied().filter(|p| p.exact)
    }

    /// The instruction's position or the nearest line around it in its unit (for showing
    /// where a thread is when its instruction is of no line, such as a `LOC`).
    pub fn near(&self, pc: InstIdx) -> Option<SrcPos> {
        self.pos.get(pc.0 as usize).copied().filter(|p| p.line != 0)
    }

    pub fn file(&self, index: u32) -> Option<&LineFile> {
        self.files.get(index as usize)
    }

    /// `k.cl:13`.
    pub fn name(&self, pos: SrcPos) -> String {
        let file = self.file(pos.file).map_or("?", LineFile::short);
        format!("{file}:{}", pos.line)
    }

    /// The file a location's file part names: its whole name (`k.cl`), its path as `FILE`
    /// gives it, or a tail of that path of whole components.
    pub fn file_named(&self, name: &str) -> Option<u32> {
        let hit = |f: &LineFile| {
            f.short() == name
                || f.name == name
                || f.name.strip_suffix(name).is_some_and(|head| head.ends_with('/') && !name.starts_with('/'))
        };
        self.files.iter().position(hit).map(|i| i as u32)
    }

    /// The entries of `line` of `file`, in program order.
    pub fn entries(&self, file: u32, line: u32) -> Vec<InstIdx> {
        let of_line = |p: &SrcPos| p.exact && p.stmt && p.key() == (file, line);
        self.pos.iter().enumerate().filter(|(_, p)| of_line(p)).map(|(i, _)| InstIdx(i as u32)).collect()
    }

    /// The first line at or after `line` of `file` that has code (where gdb moves a
    /// breakpoint on a comment or a blank line).
    pub fn code_line_from(&self, file: u32, line: u32) -> Option<u32> {
        self.pos.iter().filter(|p| p.exact && p.file == file && p.line >= line).map(|p| p.line).min()
    }

    /// The lines of `file` that have code.
    pub fn code_lines(&self, file: u32) -> Vec<u32> {
        let mut lines: Vec<u32> =
            self.pos.iter().filter(|p| p.exact && p.file == file).map(|p| p.line).collect();
        lines.sort_unstable();
        lines.dedup();
        lines
    }

    /// Reads each file's text: from the path `FILE` gives, else from a file of the same name
    /// in one of `dirs` (the launch file's folder, the kernel file's), so that a kernel
    /// compiled on another machine finds its source where it was committed with it.
    pub fn find_texts(&mut self, dirs: &[&Path]) {
        for file in &mut self.files {
            let short = file.short().to_string();
            let tries = std::iter::once(Path::new(&file.name).to_path_buf())
                .chain(dirs.iter().map(|d| d.join(&short)))
                .filter(|_| !short.is_empty());
            for path in tries {
                if let Ok(text) = crate::launch::raw::read_text(&path) {
                    file.found = Some((path.display().to_string(), text));
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::asm::parse_str;
    use crate::isa::InstIdx;

    const KERNEL: &str = ".version 4.1\n.kernel \"t\"\n.decl V1 v_type=G type=d num_elts=8\n\
        .function \"_main_0\"\n\n_main_0:\n    mov (M1, 8) V1(0,0)<1> 0x0:d\n    FILE \"/nowhere/k.cl\"\n\
        \x20   LOC 3\n    add (M1, 8) V1(0,0)<1> V1(0,0)<1;1,0> 0x1:d\n    LOC 0\n\
        \x20   add (M1, 8) V1(0,0)<1> V1(0,0)<1;1,0> 0x1:d\n    LOC 3\n\
        \x20   add (M1, 8) V1(0,0)<1> V1(0,0)<1;1,0> 0x1:d\n    LOC 4\n\
        \x20   add (M1, 8) V1(0,0)<1> V1(0,0)<1;1,0> 0x1:d\n    LOC 3\n\
        \x20   ret (M1, 1)\n";

    #[test]
    fn loc_holds_until_the_next_and_entries_start_runs() {
        let p = parse_str("t.visaasm", KERNEL).expect("parses");
        let t = &p.lines;
        assert!(t.has_lines());
        // 0 mov, 1 FILE, 2 LOC 3, 3 add, 4 LOC 0, 5 add, 6 LOC 3, 7 add, 8 LOC 4, 9 add, 10 LOC 3, 11 ret.
        let line = |i: u32| t.at(InstIdx(i)).map(|p| (p.line, p.stmt));
        assert_eq!(line(0), None, "before FILE and LOC");
        assert_eq!(t.near(InstIdx(0)).map(|p| p.line), Some(3), "shown as the first line after");
        assert_eq!(line(1), None, "pseudo-instructions have no line of their own");
        assert_eq!(line(3), Some((3, true)));
        assert_eq!(line(5), None, "LOC 0: no line");
        assert_eq!(t.near(InstIdx(5)).map(|p| p.line), Some(3));
        assert_eq!(line(7), Some((3, false)), "line 3 again after code of no line: the same run");
        assert_eq!(line(9), Some((4, true)));
        assert_eq!(line(11), Some((3, true)), "line 3 again after line 4: a new run");
        assert_eq!(t.entries(0, 3), vec![InstIdx(3), InstIdx(11)]);
        assert_eq!(t.code_line_from(0, 1), Some(3));
        assert_eq!(t.name(t.at(InstIdx(9)).expect("pos")), "k.cl:4");
        assert_eq!(t.file_named("k.cl"), Some(0));
        assert_eq!(t.file_named("/nowhere/k.cl"), Some(0));
        assert_eq!(t.file_named("nowhere/k.cl"), Some(0));
        assert_eq!(t.file_named("here/k.cl"), None);
    }

    #[test]
    fn kernels_without_file_and_loc_have_no_lines() {
        let p = parse_str("t.visaasm", &KERNEL.replace("    FILE \"/nowhere/k.cl\"\n", "")).expect("parses");
        assert!(!p.lines.has_lines(), "LOC without FILE names no file");
        assert_eq!(p.lines.near(InstIdx(3)), None);
    }
}
