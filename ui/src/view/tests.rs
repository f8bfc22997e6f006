//! Widget and whole-screen tests: every pane renders into buffers of any size (zero
//! included) without panicking, and whole screens of a divergent kernel at several steps,
//! forward and back, match committed snapshots.

use std::path::Path;

use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::Terminal;

use crate::action::Action;
use crate::app::App;
use crate::keymap::Keymap;

/// An app on a launch under `sample-kernels/` (`rel`), monochrome, default keys.
fn app_at(rel: &str) -> App {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("root").to_path_buf();
    let launch = vdb::launch::raw::load(&root.join("sample-kernels").join(rel)).expect("launch");
    App::new(vdb::session::Session::new(launch), Keymap::default(), true)
}

/// An app on one of the hand kernels' launches.
fn app(name: &str) -> App {
    app_at(&format!("hand/{name}"))
}

fn screen(app: &App, w: u16, h: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    term.draw(|f| super::render(app, f.area(), f.buffer_mut())).expect("draw");
    format!("{}", term.backend())
}

fn buffer_text(buf: &Buffer) -> String {
    let a = buf.area;
    (a.y..a.y + a.height)
        .map(|y| (a.x..a.x + a.width).map(|x| buf[(x, y)].symbol().to_string()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_pane_renders_into_any_area_including_empty_ones() {
    let mut app = app("nested_divergence.launch.json");
    app.update(Action::Step);
    for (w, h) in [(0, 0), (1, 1), (5, 3), (40, 10), (200, 60)] {
        let area = Rect::new(0, 0, w, h);
        let mut buf = Buffer::empty(area);
        super::source::render(&app, area, &mut buf);
        super::registers::render(&app, area, &mut buf);
        super::lanes::render(&app, area, &mut buf);
        super::timeline::render(&app, area, &mut buf);
        super::memory::render(&app, area, &mut buf);
        super::threads::render_threads(&app, area, &mut buf);
        super::threads::render_breakpoints(&app, area, &mut buf);
        super::status::render(&app, area, &mut buf);
        super::log::render(&app, area, &mut buf);
        super::render(&app, area, &mut buf);
    }
}

#[test]
fn lane_strips_follow_the_execution_mask() {
    let mut app = app("divergent_if.launch.json");
    for _ in 0..10 {
        app.update(Action::Step);
    }
    let area = Rect::new(0, 0, 40, 12);
    let mut buf = Buffer::empty(area);
    super::lanes::render(&app, area, &mut buf);
    let text = buffer_text(&buf);
    let em = app.session.machine.thread(app.session.focus).control.em;
    assert!(text.contains(&format!("exec mask {}", super::strip(em, 16))), "{text}");
    assert!(em != 0xffff, "the kernel diverged by step 10 (em {em:#x})");
}

#[test]
fn a_small_terminal_gets_a_message() {
    let app = app("divergent_if.launch.json");
    let text = screen(&app, 60, 20);
    assert!(text.contains("vdb needs a terminal of at least 80x24"), "{text}");
}

#[test]
fn whole_screens_forward_and_back() {
    let mut app = app("nested_divergence.launch.json");
    insta::assert_snapshot!("start", screen(&app, 140, 44));
    for _ in 0..10 {
        app.update(Action::Step);
    }
    insta::assert_snapshot!("after_10_steps", screen(&app, 140, 44));
    app.update(Action::Step);
    app.update(Action::Step);
    app.update(Action::ReverseStep);
    app.update(Action::ReverseStep);
    insta::assert_snapshot!("back_to_10_steps", screen(&app, 140, 44));
    app.update(Action::Continue);
    insta::assert_snapshot!("at_end", screen(&app, 140, 44));
    app.update(Action::ReverseContinue);
    insta::assert_snapshot!("start_again", screen(&app, 140, 44));
}

/// Types `line` at the `:` prompt.
fn command(app: &mut App, line: &str) {
    app.update(Action::CommandLine);
    type_text(app, line);
}

fn type_text(app: &mut App, text: &str) {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    for c in text.chars() {
        app.prompt_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    app.prompt_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
}

#[test]
fn memory_pane_shows_a_work_groups_slm_and_watches_it() {
    let mut app = app_at("opencl/slm_reduce/skl.launch.json");
    app.update(Action::MemoryAddress);
    type_text(&mut app, "slm1+0x40");
    assert_eq!((app.mem_space, app.mem_cursor), (vdb::machine::MemSpace::Slm(1), 0x40));
    app.update(Action::Watch);
    let w = &app.session.watchpoints[0].target;
    assert!(matches!(
        w,
        vdb::session::WatchTarget::Memory { space: vdb::machine::MemSpace::Slm(1), addr: 0x40, .. }
    ));
    app.update(Action::Continue);
    assert!(app.status.starts_with("watchpoint"), "{}", app.status);
    let text = screen(&app, 140, 44);
    assert!(text.contains("SLM of work-group 1"), "{text}");
    assert!(text.contains("Write slm1+0x40 1B"), "the breakpoint pane names the SLM: {text}");
    assert!(text.contains("last write: step"), "{text}");
    // The byte under the cursor is the SLM's, as `x` reads it.
    let x = app.session.execute(&vdb::session::parse("x/1xb slm1+0x40").expect("p").expect("c")).expect("x");
    let byte = x.fields["value"][0].as_str().expect("a byte").trim_start_matches("0x").to_string();
    assert!(text.contains(&format!(" {byte} ")), "{byte}: {text}");
    app.update(Action::MemoryAddress);
    type_text(&mut app, "slm9+0");
    assert!(app.log.last().is_some_and(|l| l.contains("no SLM")), "{:?}", app.log.last());
}

#[test]
fn memory_pane_goes_to_a_buffer_address_and_watches_the_cursor_byte() {
    let mut app = app("loop_exit.launch.json");
    app.update(Action::MemoryAddress);
    type_text(&mut app, "out+36");
    assert_eq!(app.mem_cursor, 0x1_0001_0024);
    assert_eq!(app.pane, crate::app::Pane::Memory);
    let text = screen(&app, 140, 44);
    assert!(text.contains("Memory out+0x24 = 0x100010024"), "the title names the buffer: {text}");
    app.update(Action::Watch);
    assert_eq!(app.session.watchpoints.len(), 1);
    app.update(Action::Continue);
    assert!(app.status.starts_with("watchpoint"), "{}", app.status);
    let text = screen(&app, 140, 44);
    assert!(text.contains("last write: step"), "{text}");
}

/// A typed buffer (float_math's `float* exact`) shows floats, computed here from the input
/// file; the title names the cursor's element with its value and hex; the cursor moves, `w`
/// watches and Enter finds the writer by element; `f` to hex shows the raw bytes, by byte.
#[test]
fn memory_pane_shows_a_typed_buffers_elements_and_moves_by_element() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("root").to_path_buf();
    let input = std::fs::read(root.join("sample-kernels/opencl/float_math/in/in.bin")).expect("input");
    let input: Vec<f32> =
        input.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes"))).collect();
    let n = input.len();
    let i = (3..n).find(|&i| (input[i] * input[(i + 7) % n]).fract() != 0.0).expect("a fraction");
    let (x, y) = (input[i], input[(i + 7) % n]);
    let mut app = app_at("opencl/float_math/skl.launch.json");
    app.update(Action::Continue);
    let end = app.session.now;
    app.update(Action::MemoryAddress);
    let at = 4 * (6 * i + 1) as u64;
    type_text(&mut app, &format!("exact+{}", at + 2)); // inside the element
    let base = app.session.buffers.iter().find(|(name, _, _)| name == "exact").expect("exact").1;
    let text = screen(&app, 160, 48);
    let bits = format!("{:#010x}", (x * y).to_bits());
    let title = format!("exact+{at:#x} = {:#x}  float {} ({bits})", base + at, x * y);
    assert!(text.contains(&title), "{title}: {text}");
    for value in [x + y, x * y, x.mul_add(y, 1.5)] {
        assert!(text.contains(&format!(" {value}")), "{value}: {text}");
    }
    assert!(text.contains("last write: step"), "{text}");
    // Right moves one float; Left comes back to the element's start.
    app.update(Action::Right);
    assert_eq!(app.mem_cursor, base + at + 4);
    app.update(Action::Left);
    assert_eq!(app.mem_cursor, base + at);
    app.update(Action::Watch);
    let w = &app.session.watchpoints.last().expect("a watchpoint").target;
    assert_eq!(
        *w,
        vdb::session::WatchTarget::Memory { space: vdb::machine::MemSpace::Svm, addr: base + at, len: 4 }
    );
    // Enter goes to the step that stored the product.
    let writer =
        app.session.execute(&vdb::session::parse(&format!("last-write exact+{at}")).expect("p").expect("c"));
    let step = writer.expect("last-write").fields["writer"]["step"].as_u64();
    app.update(Action::Select);
    assert!(app.session.now < end);
    assert_eq!(Some(app.session.now), step);
    // On from the store, the watchpoint stops at once; the status bar has the new float.
    app.update(Action::Continue);
    assert!(app.status.starts_with("watchpoint"), "{}", app.status);
    assert!(app.status.ends_with(&format!(": {} ({bits})", x * y)), "{}", app.status);
    // Hex: the element's bytes in memory order, the cursor on one byte.
    app.pane = crate::app::Pane::Memory;
    app.update(Action::CycleFormat);
    let text = screen(&app, 160, 48);
    let raw: Vec<String> = (x * y).to_le_bytes().iter().map(|b| format!("{b:02x}")).collect();
    assert!(text.contains(&raw.join(" ")), "{raw:?}: {text}");
    app.update(Action::Right);
    assert_eq!(app.mem_cursor, base + at + 1);
}

#[test]
fn variable_prompt_completes_names_and_shows_the_grid() {
    let mut app = app("loop_exit.launch.json");
    app.update(Action::ChooseVariable);
    {
        use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
        for c in "LAN".chars() {
            app.prompt_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        app.prompt_key(KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE));
        assert_eq!(app.prompt.as_ref().map(|p| p.text.clone()), Some("LANE".into()));
        app.prompt_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    }
    let v = app.reg_var.expect("chosen");
    assert_eq!(app.session.program.var(v).name, "LANE");
    let text = screen(&app, 140, 44);
    assert!(text.contains("Registers LANE:uw"), "{text}");
}

#[test]
fn out_keys_leave_and_reenter_a_call_and_the_status_bar_shows_the_frames() {
    let mut app = app("subroutine.launch.json");
    let depth = |app: &App| app.session.machine.thread(app.session.focus).control.stack.len();
    while depth(&app) == 0 {
        app.update(Action::Step);
    }
    let inside = app.session.now;
    let mut buf = Buffer::empty(Rect::new(0, 0, 160, 1));
    super::status::render(&app, buf.area, &mut buf);
    let call_line = app.session.backtrace(app.session.focus)[1].line;
    assert!(
        buffer_text(&buf).contains(&format!("in helper_1 ← _main_0:{call_line}")),
        "{}",
        buffer_text(&buf)
    );
    app.update(Action::Finish);
    assert_eq!(depth(&app), 0);
    assert!(app.session.now > inside);
    let mut buf = Buffer::empty(Rect::new(0, 0, 160, 1));
    super::status::render(&app, buf.area, &mut buf);
    assert!(!buffer_text(&buf).contains(" in "), "{}", buffer_text(&buf));
    // Back out of the return and the call: onto the call instruction, before it ran.
    app.update(Action::Step);
    app.update(Action::ReverseStep);
    app.update(Action::ReverseStep);
    assert_eq!(depth(&app), 1);
    app.update(Action::ReverseFinish);
    assert_eq!(depth(&app), 0);
    assert_eq!(app.session.now, inside - 1);
    assert_eq!(app.session.line(), call_line);
}

/// Hundreds of actions in a fixed pseudo-random order (every action, prompts answered with
/// good and bad text, every pane), each followed by a render at one of three sizes: nothing
/// panics, and the session still travels afterwards.
#[test]
fn random_action_sequences_never_panic() {
    let answers =
        ["3", "99999999", "V0053", "nope(", "slm+0x10", "slm7", "arg1+4", "", "display x/2xw slm", "until"];
    for rel in ["opencl/slm_reduce/skl.launch.json", "hand/subroutine.launch.json"] {
        let mut app = app_at(rel);
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for i in 0..400 {
            let (action, _) = Action::ALL[next() as usize % Action::ALL.len()];
            if action == Action::Quit {
                continue;
            }
            app.update(action);
            if app.prompt.is_some() {
                type_text(&mut app, answers[next() as usize % answers.len()]);
            }
            let (w, h) = [(160, 48), (80, 24), (40, 10)][i % 3];
            screen(&app, w, h);
        }
        app.session.breakpoints.clear();
        app.session.watchpoints.clear();
        app.run_command("goto 0");
        assert_eq!(app.session.now, 0, "{rel}");
        app.update(Action::Continue);
        assert_eq!(app.session.now, app.session.total_steps(), "{rel}");
    }
}

#[test]
fn help_is_as_wide_as_its_longest_line_where_the_terminal_allows() {
    let mut app = app("subroutine.launch.json");
    app.update(Action::Help);
    let wide = screen(&app, 160, 48);
    for (_, description) in Action::ALL {
        assert!(wide.contains(description), "{description}: {wide}");
    }
    // A narrow terminal still gets the overlay, cut at its edge.
    assert!(screen(&app, 100, 30).contains("Keys (? or Esc closes)"));
}

#[test]
fn the_focused_lanes_work_item_is_shown_and_can_be_typed() {
    let mut app = app_at("opencl/ids3d/skl.launch.json");
    command(&mut app, "workitem 4,3,1");
    let geometry = app.session.geometry.clone().expect("an OpenCL launch");
    let (thread, lane) = geometry.locate([4, 3, 1]).expect("in the NDRange");
    assert_eq!((app.session.focus.0, app.session.lane), (thread, lane));
    let text = screen(&app, 160, 48);
    assert!(text.contains(&format!("lane {lane} = work-item 4,3,1")), "status bar: {text}");
    assert!(text.contains(&format!("lane {lane}, work-item 4,3,1")), "lane pane: {text}");
    // Moving along the lane strip names the next lane's work-item (x is fastest).
    app.pane = crate::app::Pane::Lanes;
    app.update(Action::Right);
    assert_eq!(app.session.lane, lane + 1);
    let text = screen(&app, 160, 48);
    assert!(text.contains(&format!("lane {}, work-item 5,3,1", lane + 1)), "{text}");
    // A hand kernel's lanes hold no work-items: nothing is named.
    let text = screen(&app_at("hand/divergent_if.launch.json"), 160, 48);
    assert!(!text.contains("work-item"), "{text}");
}

#[test]
fn enter_goes_to_the_last_write_of_the_selection() {
    let mut app = app_at("opencl/ids3d/skl.launch.json");
    app.update(Action::Continue);
    let end = app.session.now;
    // A memory byte: the writing step, thread and lane, as `last-write` names them.
    app.update(Action::MemoryAddress);
    type_text(&mut app, "out+177");
    let last = |app: &mut App, loc: &str| {
        let cmd = vdb::session::parse(&format!("last-write {loc}")).expect("p").expect("c");
        app.session.execute(&cmd).expect("last-write").fields["writer"].clone()
    };
    let writer = last(&mut app, "out+177 1");
    app.update(Action::Select);
    assert_eq!(Some(app.session.now), writer["step"].as_u64());
    assert_eq!(Some(u64::from(app.session.focus.0)), writer["thread"].as_u64());
    assert_eq!(Some(u64::from(app.session.lane)), writer["lane"].as_u64());
    assert!(app.session.now < end);
    // The writing instruction is the focused thread's current one.
    let pc = app.session.machine.thread(app.session.focus).control.pc;
    assert_eq!(Some(u64::from(app.session.program.inst(pc).span.line)), writer["line"].as_u64());
    // A register cell: its last write before now, in the focused thread.
    app.update(Action::Continue);
    app.update(Action::ChooseVariable);
    type_text(&mut app, "V0132");
    app.pane = crate::app::Pane::Registers;
    app.update(Action::Down);
    app.update(Action::Down);
    let (thread, writer) = (app.session.focus.0, last(&mut app, "V0132(2,0)<0;1,0>"));
    assert!(writer["step"].is_u64(), "{writer}");
    app.update(Action::Select);
    assert_eq!(Some(app.session.now), writer["step"].as_u64());
    assert_eq!(app.session.focus.0, thread);
    // A cursor past the variable's last row and column selects its last cell (the one the
    // pane highlights), for watch as for Enter.
    app.reg_row = 1000;
    app.reg_col = 1000;
    let var = app.reg_var.expect("a variable");
    let v = app.session.program.var(var);
    let last_offset = v.offset + v.size - v.ty.size();
    app.update(Action::Watch);
    let Some(w) = app.session.watchpoints.last() else { panic!("no watchpoint: {:?}", app.log) };
    let vdb::session::WatchTarget::Register { ranges, .. } = &w.target else { panic!("{:?}", w.target) };
    assert_eq!(ranges[0].0, last_offset, "{:?}", app.log);
    // Nothing wrote it yet: the log says so and time stays.
    app.update(Action::GotoStep);
    type_text(&mut app, "0");
    app.update(Action::ChooseVariable);
    type_text(&mut app, "V0132");
    app.pane = crate::app::Pane::Registers;
    app.update(Action::Select);
    assert_eq!(app.session.now, 0);
    assert!(app.log.iter().any(|l| l.contains("no write before step 0")), "{:?}", app.log);
}

#[test]
fn enter_on_the_lane_strip_tells_the_lanes_divergence() {
    let mut app = app_at("opencl/collatz/skl.launch.json");
    app.update(Action::Continue);
    app.pane = crate::app::Pane::Lanes;
    app.update(Action::Right);
    app.update(Action::Select);
    let cmd = vdb::session::parse("lane-history 1").expect("p").expect("c");
    let expected = app.session.execute(&cmd).expect("lane-history").text;
    assert!(expected.contains("left"), "{expected}");
    assert_eq!(app.log.last().map(String::as_str), expected.lines().last(), "{:?}", app.log);
    assert!(app.log.iter().any(|l| l == "(vdb) lane-history"), "{:?}", app.log);
}

#[test]
fn why_overlay_lists_the_values_and_enter_goes_to_a_write() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let key =
        |app: &mut App, code: KeyCode| crate::tui::handle_key(app, KeyEvent::new(code, KeyModifiers::NONE));
    let mut app = app_at("opencl/ids3d/skl.launch.json");
    app.update(Action::Continue);
    app.update(Action::MemoryAddress);
    type_text(&mut app, "out+176");
    key(&mut app, KeyCode::Char('y'));
    let expected = {
        // `out` is an `int*`: the cursor selects the whole int.
        let cmd = vdb::session::parse("why out+0xb0 4").expect("p").expect("c");
        app.session.execute(&cmd).expect("why")
    };
    let view = app.jumps.as_ref().expect("the overlay is open");
    let texts: Vec<&str> = view.rows.iter().map(|r| r.text.as_str()).collect();
    assert_eq!(texts, expected.text.lines().collect::<Vec<_>>());
    assert!(view.rows.len() > 2, "{texts:?}");
    let text = screen(&app, 160, 48);
    assert!(text.contains("why out+0xb0 4 — Enter: go to the write"), "{text}");
    // Keys go to the overlay: down to the stored register, Enter goes to its write.
    key(&mut app, KeyCode::Down);
    let (step, thread, lane) = app.jumps.as_ref().expect("open").rows[1].writer.expect("a write");
    key(&mut app, KeyCode::Enter);
    assert!(app.jumps.is_none());
    assert_eq!((app.session.now, app.session.focus.0, app.session.lane), (step, thread, lane));
    // Esc closes without moving.
    key(&mut app, KeyCode::Char('y'));
    assert!(app.jumps.is_some(), "{:?}", app.log);
    key(&mut app, KeyCode::Esc);
    assert!(app.jumps.is_none());
    assert_eq!(app.session.now, step);
}

#[test]
fn the_log_scrolls_back_through_long_output() {
    let mut app = app_at("opencl/ids3d/skl.launch.json");
    command(&mut app, "info lanes");
    let header = "lane  work-item";
    assert!(!screen(&app, 160, 48).contains(header), "32 lanes do not fit the log pane");
    app.pane = crate::app::Pane::Log;
    app.update(Action::PageUp);
    app.update(Action::PageUp);
    let text = screen(&app, 160, 48);
    assert!(text.contains(header), "{text}");
    assert!(text.contains("lines back (Down returns)"), "{text}");
    // Not past the first line, and new output comes back to the newest.
    for _ in 0..100 {
        app.update(Action::PageUp);
    }
    assert_eq!(app.log_scroll, app.log.len() - 1);
    assert!(screen(&app, 160, 48).contains("press ? for help"));
    command(&mut app, "when");
    assert_eq!(app.log_scroll, 0);
    assert!(screen(&app, 160, 48).contains("step 0 of 0"));
}

#[test]
fn y_in_the_source_pane_explains_the_selected_operand_for_the_focused_lane() {
    let mut app = app_at("opencl/ids3d/skl.launch.json");
    command(&mut app, "advance $72");
    command(&mut app, "lane 3");
    app.pane = crate::app::Pane::Source;
    app.follow = true;
    app.operand = 1; // `mov (M1, 16) V0132(0,0)<1> V0119(0,0)<1;1,0>`: src0
    app.update(Action::Why);
    let view = app.jumps.as_ref().unwrap_or_else(|| panic!("no overlay: {:?}", app.log));
    assert_eq!(view.title, "why V0119(0,3) 4 — Enter: go to the write");
    assert!(view.rows[0].text.starts_with("V0119(0,3) = "), "{}", view.rows[0].text);
    let (step, thread, lane) = view.rows[0].writer.expect("written before");
    assert!(step < app.session.now);
    assert_eq!((thread, lane), (app.session.focus.0, 3));
    // A selection that is no register operand (here, past the operands): the log says what to
    // select.
    app.jumps = None;
    app.operand = 5;
    app.update(Action::Why);
    assert!(app.jumps.is_none());
    assert!(app.log.last().is_some_and(|l| l.starts_with("y: select a register operand")), "{:?}", app.log);
}

/// A run that ends at a limit says in the status bar which limit and what sets it.
#[test]
fn the_status_bar_names_the_limit_that_ended_a_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("root").join("sample-kernels/hand");
    let dir = std::env::temp_dir().join(format!("vdb-status-limit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    for f in ["loop_exit.visaasm", "in.bin"] {
        std::fs::copy(root.join(f), dir.join(f)).expect("copy");
    }
    let text = std::fs::read_to_string(root.join("loop_exit.launch.json")).expect("launch");
    let mut launch: serde_json::Value = serde_json::from_str(&text).expect("json");
    launch["step_limit"] = serde_json::json!(20);
    std::fs::write(dir.join("l.json"), launch.to_string()).expect("write");
    let loaded = vdb::launch::raw::load(&dir.join("l.json")).expect("launch");
    let _ = std::fs::remove_dir_all(&dir);
    let mut app = App::new(vdb::session::Session::new(loaded), Keymap::default(), true);
    app.update(Action::Continue);
    let bar = |app: &App| {
        let area = Rect::new(0, 0, 400, 1);
        let mut buf = Buffer::empty(area);
        super::status::render(app, area, &mut buf);
        buffer_text(&buf)
    };
    assert!(bar(&app).contains("(step limit: 20 steps; the launch's step_limit sets it)"), "{}", bar(&app));
    let mut app = self::app("loop_exit.launch.json");
    app.session.record_limit = app.session.recorder.recorded_bytes() + 2000;
    app.update(Action::Continue);
    assert!(bar(&app).contains("(recording budget: 0 MiB; --record-limit sets it)"), "{}", bar(&app));
}

/// At 80x24 the help does not fit: it says so and scrolls to its last line; `:help` opens the
/// command list in the same overlay, not in the log pane.
#[test]
fn help_scrolls_at_80x24_and_help_command_opens_the_overlay() {
    let mut app = app("loop_exit.launch.json");
    app.update(Action::Help);
    let top = screen(&app, 80, 24);
    assert!(top.contains("PgUp PgDn scroll"), "{top}");
    let last = "Commands: press : and type `help`";
    assert!(!top.contains(last), "{top}");
    for _ in 0..4 {
        app.update(Action::PageDown);
    }
    assert!(screen(&app, 80, 24).contains(last), "{}", screen(&app, 80, 24));
    app.update(Action::Help);
    app.run_command("help");
    let commands = screen(&app, 80, 24);
    assert!(app.help && commands.contains("Commands (? or Esc closes)"), "{commands}");
    assert!(commands.contains("step"), "{commands}");
}

/// A variable chosen with `v` stays in the register pane across steps (pinned), and the pane
/// labels its rows as vISA does, `(row,0)`; `v` with nothing typed follows again.
#[test]
fn a_chosen_variable_stays_pinned_across_steps() {
    let mut app = app("loop_exit.launch.json");
    app.update(Action::ChooseVariable);
    for c in "OUT".chars() {
        app.prompt_key(crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Char(c)));
    }
    app.prompt_key(crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Enter));
    let out = app.reg_var;
    for _ in 0..6 {
        app.update(Action::Step);
        assert_eq!(app.reg_var, out, "the pinned variable changed");
    }
    let text = screen(&app, 140, 44);
    assert!(text.contains("OUT:uq ×1 (pinned)") && text.contains("(0,0)"), "{text}");
    app.update(Action::ChooseVariable);
    app.prompt_key(crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Enter));
    assert!(!app.reg_pinned);
}

/// The register pane is as tall as its variable: a one-element variable leaves the rows to
/// the divergence timeline, which then shows every lane.
#[test]
fn a_small_variable_leaves_rows_to_the_timeline() {
    let mut app = app("nested_divergence.launch.json");
    app.reg_var = app.session.program.var_id(vdb::isa::UnitId(0), "IN");
    app.reg_pinned = true;
    for _ in 0..5 {
        app.update(Action::Step);
    }
    let text = screen(&app, 300, 80);
    let lines: Vec<&str> = text.lines().collect();
    let row_of = |title: &str| {
        lines.iter().position(|l| l.contains(title)).unwrap_or_else(|| panic!("{title}:\n{text}"))
    };
    let (registers, timeline, memory) = (row_of("Registers IN"), row_of("Divergence"), row_of("┌ Memory"));
    // The one-element variable's pane: its title, its row and its bottom border.
    assert!(lines[registers + 2].ends_with("┘\""), "a one-element variable took more rows:\n{text}");
    // A row per lane (16), its borders and the step header.
    assert!(memory - timeline >= 18, "the timeline got {} rows:\n{text}", memory - timeline);
}

/// The source pane alone, rendered 100x30.
fn source_pane(app: &App) -> String {
    let area = Rect::new(0, 0, 100, 30);
    let mut buf = Buffer::empty(area);
    super::source::render(app, area, &mut buf);
    buffer_text(&buf)
}

/// A kernel compiled with `-g`: the source pane shows the OpenCL source with the current
/// line marked and, in the default split layout, that line's vISA under it with the current
/// instruction; `a` cycles to the source alone, the vISA alone, and back.
#[test]
fn the_source_pane_shows_opencl_source_with_the_current_lines_visa() {
    let mut app = app_at("source-level/loop_call/skl.launch.json");
    app.update(Action::Step);
    app.update(Action::Step);
    let inst = app.session.current_text();
    let id = app.session.program.inst(app.current_inst()).id;
    let split = source_pane(&app);
    assert!(split.contains("Source loop_call.cl [split]"), "{split}");
    assert!(split.contains(" ▶   20     int v = in[i];"), "{split}");
    assert!(split.contains(&format!("▶      ${id}   {inst}")), "{split}");
    assert!(split.contains("   19     int i = get_global_id(0);"), "{split}");
    let whole = screen(&app, 160, 48);
    assert!(whole.contains("(loop_call.cl:20)"), "the log names the source line:\n{whole}");
    app.update(Action::Layout);
    let source = source_pane(&app);
    assert!(source.contains("Source loop_call.cl [src]") && source.contains(" ▶   20 "), "{source}");
    assert!(!source.contains(&inst), "the source layout shows no vISA:\n{source}");
    app.update(Action::Layout);
    let visa = source_pane(&app);
    assert!(visa.contains("Source loop_call.simd8.visaasm") && visa.contains(&inst), "{visa}");
    assert!(!visa.contains("int v = in[i];"), "{visa}");
    app.update(Action::Layout);
    assert!(source_pane(&app).contains("[split]"));
    for (w, h) in [(0, 0), (3, 2), (40, 10)] {
        let area = Rect::new(0, 0, w, h);
        super::source::render(&app, area, &mut Buffer::empty(area));
    }
}

/// `b` on an OpenCL line sets `break FILE.cl:LINE` (a dot on the line) and takes it away
/// again; `s` moves a source line, `i`/`I` one instruction forward and back.
#[test]
fn keys_break_on_source_lines_and_step_by_line_or_instruction() {
    let mut app = app_at("source-level/loop_call/skl.launch.json");
    app.update(Action::Step);
    for _ in 0..4 {
        app.update(Action::Down);
    }
    app.update(Action::ToggleBreakpoint);
    let bp = app.session.breakpoints.first().map(|b| b.text.clone()).unwrap_or_default();
    assert!(bp.starts_with("loop_call.cl:23 ($"), "{bp}");
    let pane = source_pane(&app);
    assert!(pane.contains("●    23         acc += weigh(j);"), "{pane}");
    app.update(Action::ToggleBreakpoint);
    assert!(app.session.breakpoints.is_empty());
    app.update(Action::Step);
    assert_eq!(app.session.source_here().as_deref(), Some("loop_call.cl:20"));
    let now = app.session.now;
    app.update(Action::StepInstruction);
    assert_eq!(app.session.now, now + 1);
    app.update(Action::ReverseStepInstruction);
    assert_eq!(app.session.now, now);
    assert_eq!(app.source_cursor, 19, "the cursor follows the current source line");
}

/// `R` opens the race reports: a heading per report and its two accesses; Enter on an access
/// goes to its step, focused on the thread and lane about to make it.
#[test]
fn races_overlay_goes_to_either_access() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let key =
        |app: &mut App, code: KeyCode| crate::tui::handle_key(app, KeyEvent::new(code, KeyModifiers::NONE));
    let mut app = app_at("races/max_reduce/skl.launch.json");
    key(&mut app, KeyCode::Char('R'));
    let view = app.jumps.as_ref().unwrap_or_else(|| panic!("no overlay: {:?}", app.log));
    assert!(view.rows[0].text.contains("race on SLM of work-group 0"), "{}", view.rows[0].text);
    assert!(view.rows[0].writer.is_none());
    let text = screen(&app, 160, 48);
    assert!(text.contains("— Enter: go to the access"), "{text}");
    // The cursor starts on the first access; down to the second, Enter goes there.
    key(&mut app, KeyCode::Down);
    let (step, thread, lane) = app.jumps.as_ref().expect("open").rows[2].writer.expect("an access");
    let expected = app.session.races()[0].second;
    assert_eq!((step, thread, lane), (expected.step, expected.thread, expected.channel));
    key(&mut app, KeyCode::Enter);
    assert!(app.jumps.is_none());
    assert_eq!((app.session.now, app.session.focus.0, app.session.lane), (step, thread, lane));
    let pc = app.session.machine.thread(app.session.focus).control.pc;
    assert_eq!(pc.0, expected.pc);
}
