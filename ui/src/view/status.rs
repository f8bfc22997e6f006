//! The status bar: step N of total, thread, lane, the call stack inside a call, stop reason.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::widgets::{Paragraph, Widget};

use crate::app::App;

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let s = &app.session;
    let t = s.machine.thread(s.focus);
    let (group, index) = s.thread_labels.get(s.focus.0 as usize).copied().unwrap_or_default();
    // What ended the run, a limit named with what sets it.
    let end = match &s.end {
        Some(vdb::session::EndState::Finished) => " (run complete)".to_string(),
        Some(vdb::session::EndState::Fault(f)) => match f.kind {
            vdb::exec::FaultKind::StepLimit(n) => {
                format!(" (step limit: {n} steps; the launch's step_limit sets it)")
            }
            _ => " (faulted)".to_string(),
        },
        Some(vdb::session::EndState::RecordLimit(b)) => {
            format!(" (recording budget: {} MiB; --record-limit sets it)", b >> 20)
        }
        None => String::new(),
    };
    // Inside a call: the frames, innermost first, each caller with the line of its call.
    let frames = if t.control.stack.is_empty() {
        String::new()
    } else {
        let names: Vec<String> = s
            .backtrace(s.focus)
            .iter()
            .map(|f| if f.level == 0 { f.function.clone() } else { format!("{}:{}", f.function, f.line) })
            .collect();
        format!(" │ in {}", names.join(" ← "))
    };
    // The work-item the focused lane holds, in an OpenCL launch.
    let item = s
        .work_item(s.focus.0, s.lane)
        .map_or(String::new(), |w| format!(" = work-item {}", s.work_item_text(&w)));
    // Until the run has been recorded to its end, the total is what is recorded so far.
    let steps = match &s.end {
        Some(_) => format!("step {} of {}", s.now, s.total_steps()),
        None => format!("step {} ({} recorded so far)", s.now, s.total_steps()),
    };
    let text = format!(
        " {steps}{end} │ thread {} (group {:?} #{index}, SIMD{}, {}) │ lane {}{item}{frames} │ stop: {}",
        s.focus.0,
        group,
        t.simd,
        s.thread_state(s.focus.0 as usize),
        s.lane,
        app.status
    );
    Paragraph::new(text).style(Style::default().add_modifier(Modifier::REVERSED)).render(area, buf);
}
