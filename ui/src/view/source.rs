//! The source pane: the kernel text around the cursor with the focused thread's current
//! instruction highlighted, instruction ids, breakpoint markers; under it the current
//! instruction's operands annotated with what they read and write. Where the vISA carries
//! line information and the OpenCL source was found, the pane shows that source with the
//! current line (`layout src`), with the vISA of the current line under it (`layout split`,
//! the default), or the vISA alone (`layout asm`).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::{block, Theme};
use crate::app::{operand_var, App, Pane};
use vdb::exec::{channel_enables, load_le};
use vdb::isa::{InstIdx, Opcode, Operand};
use vdb::session::format::value as fmt_value;
use vdb::session::CodeLayout;

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    match app.session.current_source_file() {
        Some(file) => render_source(app, file, area, buf),
        None => render_visa(app, area, buf),
    }
}

/// The vISA text: today's pane, and `layout asm`'s.
fn render_visa(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = Theme { no_color: app.no_color };
    let program = &app.session.program;
    let file = program.file(app.file());
    let b = block(app, Pane::Source, &format!(" {}", file.path.rsplit('/').next().unwrap_or("")));
    let inner = b.inner(area);
    b.render(area, buf);
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    let notes = annotations(app, &theme);
    let text_rows = (inner.height as usize).saturating_sub(notes.len().min(inner.height as usize / 2));
    let current = program.insts.get(app.current_inst().0 as usize).map(|i| i.span.line as usize);
    let lines: Vec<&str> = file.text.lines().collect();
    let start = app.source_cursor.saturating_sub(text_rows / 3).min(lines.len().saturating_sub(text_rows));
    let mut out = Vec::new();
    for (i, text) in lines.iter().enumerate().skip(start).take(text_rows) {
        let line_no = i + 1;
        let inst =
            program.insts.iter().position(|x| x.span.file == app.file() && x.span.line as usize == line_no);
        let bp =
            inst.is_some_and(|x| app.session.breakpoints.iter().any(|b| b.pcs.contains(&InstIdx(x as u32))));
        let id = inst.map_or(String::new(), |x| format!("${}", program.insts[x].id));
        let mark = if current == Some(line_no) { "▶" } else { " " };
        let gutter = format!("{}{}{:>5} {:>4} ", if bp { "●" } else { " " }, mark, id, line_no);
        let mut style = Style::default();
        if current == Some(line_no) {
            style = theme.current();
        }
        if i == app.source_cursor && app.pane == Pane::Source {
            style = style.patch(theme.cursor());
        }
        out.push(Line::from(vec![Span::styled(gutter, theme.dim()), Span::styled(text.to_string(), style)]));
    }
    out.extend(notes);
    Paragraph::new(out).render(inner, buf);
}

/// The OpenCL source around the cursor, the focused thread's line marked (`▶`, or the
/// nearest line when its instruction has none), breakpoints (`●`) on lines with one at an
/// entry; in `layout split`, the vISA of the current line under it.
fn render_source(app: &App, file: u32, area: Rect, buf: &mut Buffer) {
    let theme = Theme { no_color: app.no_color };
    let s = &app.session;
    let Some(f) = s.program.lines.file(file) else { return render_visa(app, area, buf) };
    let b = block(app, Pane::Source, &format!(" {} [{}]", f.short(), s.layout.name()));
    let inner = b.inner(area);
    b.render(area, buf);
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    let notes = annotations(app, &theme);
    let text_rows = (inner.height as usize).saturating_sub(notes.len().min(inner.height as usize / 2));
    let current = s.source_near().filter(|p| p.file == file).map(|p| p.line as usize);
    let mut visa = match s.layout {
        CodeLayout::Split => line_visa(app, &theme, text_rows / 2),
        _ => Vec::new(),
    };
    let rows = text_rows.saturating_sub(visa.len());
    let marked: Vec<usize> = s
        .breakpoints
        .iter()
        .flat_map(|b| b.pcs.iter())
        .filter_map(|&pc| s.program.lines.at(pc))
        .filter(|p| p.file == file)
        .map(|p| p.line as usize)
        .collect();
    let lines: Vec<&str> = f.text().unwrap_or("").lines().collect();
    let start = app.source_cursor.saturating_sub(rows / 3).min(lines.len().saturating_sub(rows));
    let mut out = Vec::new();
    for (i, text) in lines.iter().enumerate().skip(start).take(rows) {
        let line_no = i + 1;
        let is_current = current == Some(line_no);
        let bp = if marked.contains(&line_no) { "●" } else { " " };
        let gutter = format!("{bp}{}{line_no:>5} ", if is_current { "▶" } else { " " });
        let mut style = if is_current { theme.current() } else { Style::default() };
        if i == app.source_cursor && app.pane == Pane::Source {
            style = style.patch(theme.cursor());
        }
        out.push(Line::from(vec![Span::styled(gutter, theme.dim()), Span::styled(text.to_string(), style)]));
        if is_current {
            out.append(&mut visa);
        }
    }
    out.extend(notes);
    Paragraph::new(out).render(inner, buf);
}

/// The vISA of the focused thread's source line: the instructions around the current one
/// whose line (or nearest line) is the same, without `LOC`/`FILE` unless the thread stands
/// on one, at most `max` rows around the current one, which is marked.
fn line_visa(app: &App, theme: &Theme, max: usize) -> Vec<Line<'static>> {
    let p = &app.session.program;
    let pc = app.current_inst();
    let (Some(here), Some(inst)) = (p.lines.near(pc), p.insts.get(pc.0 as usize)) else { return Vec::new() };
    let unit = p.unit(inst.unit);
    let same = |i: u32| p.lines.near(InstIdx(i)).is_some_and(|q| q.key() == here.key());
    let (mut first, mut last) = (pc.0, pc.0);
    while first > unit.entry.0 && same(first - 1) {
        first -= 1;
    }
    while last + 1 < unit.end.0 && same(last + 1) {
        last += 1;
    }
    let pseudo = |i: u32| matches!(p.inst(InstIdx(i)).op, Opcode::Loc | Opcode::File | Opcode::EndOfCode);
    let shown: Vec<u32> = (first..=last).filter(|&i| i == pc.0 || !pseudo(i)).collect();
    let at = shown.iter().position(|&i| i == pc.0).unwrap_or(0);
    let begin = at.saturating_sub(max / 2).min(shown.len().saturating_sub(max));
    let bp = |i: u32| app.session.breakpoints.iter().any(|b| b.pcs.contains(&InstIdx(i)));
    shown
        .iter()
        .skip(begin)
        .take(max)
        .map(|&i| {
            let id = format!("${}", p.inst(InstIdx(i)).id);
            let mark = if i == pc.0 { "▶" } else { " " };
            let gutter = format!("{}{mark} {id:>8}   ", if bp(i) { "●" } else { " " });
            let style = if i == pc.0 { theme.current() } else { theme.dim() };
            Line::from(vec![
                Span::styled(gutter, theme.dim()),
                Span::styled(p.inst_text(InstIdx(i)).to_string(), style),
            ])
        })
        .collect()
}

/// One line per operand of the focused thread's current instruction.
fn annotations(app: &App, theme: &Theme) -> Vec<Line<'static>> {
    let s = &app.session;
    let thread = s.machine.thread(s.focus);
    let Some(inst) = s.program.insts.get(thread.control.pc.0 as usize) else { return Vec::new() };
    let (chen, _, _) = channel_enables(inst, thread.control.em, &thread.preds);
    let mut out = vec![Line::styled(
        format!("── ${} {} (exec {}, chen {:#x})", inst.id, inst.op.mnemonic(), inst.exec.size, chen),
        theme.dim(),
    )];
    let mut src = 0;
    for (i, op) in inst.operands.iter().enumerate() {
        let is_dst = matches!(op, Operand::Direct(d) if d.is_dst)
            || matches!(op, Operand::Indirect(x) if x.is_dst)
            || (i == 0 && matches!(op, Operand::Pred(_)));
        let role = if is_dst { "writes".to_string() } else { format!("src{src}") };
        let style = if is_dst { theme.write() } else { theme.read(src) };
        if !is_dst {
            src += 1;
        }
        let name = match op {
            Operand::Imm(_) => "immediate".to_string(),
            Operand::Pred(p) => s.program.pred(*p).name.clone(),
            Operand::Label(t) | Operand::Subroutine(t) => format!("→ line {}", s.program.inst(*t).span.line),
            _ => operand_var(op).map_or_else(|| "operand".to_string(), |v| s.program.var(v).name.clone()),
        };
        let values = match op {
            Operand::Direct(d) if !d.is_null => {
                let n = inst.exec.size.min(8);
                let size = d.ty.size();
                let vals: Vec<String> = (0..n)
                    .filter_map(|l| {
                        let at = (d.base + d.region.element(l) * size) as usize;
                        thread
                            .grf
                            .get(at..at + size as usize)
                            .map(|b| fmt_value(d.ty, load_le(b, size), app.format))
                    })
                    .collect();
                format!("= {}{}", vals.join(" "), if inst.exec.size > 8 { " …" } else { "" })
            }
            Operand::Pred(p) => format!("= {:#x}", thread.preds.get(p.0 as usize).copied().unwrap_or(0)),
            Operand::Imm(imm) => format!("= {}", fmt_value(imm.ty, imm.bits, app.format)),
            _ => String::new(),
        };
        let marker = if app.follow && app.operand == i { "›" } else { " " };
        out.push(Line::from(vec![
            Span::raw(format!("{marker}{role:>6} ")),
            Span::styled(name, style),
            Span::raw(format!(" {values}")),
        ]));
    }
    out
}
