//! What a key press asks for. Keys map to actions (keymap.rs); `App::update` performs them.

use serde::Deserialize;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    Step,
    ReverseStep,
    Next,
    ReverseNext,
    StepInstruction,
    ReverseStepInstruction,
    Finish,
    ReverseFinish,
    Continue,
    ReverseContinue,
    ToggleBreakpoint,
    Watch,
    GotoStep,
    ChooseVariable,
    MemoryAddress,
    CommandLine,
    NextPane,
    PrevPane,
    Up,
    Down,
    Left,
    Right,
    PageUp,
    PageDown,
    Select,
    CycleFormat,
    Why,
    /// The data races of the run, in an overlay: Enter goes to either access of a report.
    Races,
    /// Cycle what the source pane shows: OpenCL source with the current line's vISA, the
    /// source alone, the vISA alone (gdb's `layout next`).
    Layout,
    Help,
    Quit,
}

impl Action {
    /// Every action with a one-line description (the help overlay lists them with their keys).
    pub const ALL: &'static [(Action, &'static str)] = &[
        (Action::Step, "step the focused thread (a source line where the kernel has line information)"),
        (Action::ReverseStep, "step the focused thread back"),
        (Action::Next, "step over calls"),
        (Action::ReverseNext, "step back over calls"),
        (Action::StepInstruction, "step the focused thread one instruction (stepi)"),
        (Action::ReverseStepInstruction, "step the focused thread back one instruction (rstepi)"),
        (Action::Finish, "run until the current subroutine or function returns (step out)"),
        (Action::ReverseFinish, "back to the call that entered the current subroutine or function"),
        (Action::Continue, "continue to a breakpoint, watchpoint or the end"),
        (Action::ReverseContinue, "continue backwards"),
        (Action::ToggleBreakpoint, "toggle a breakpoint at the source cursor line"),
        (Action::Watch, "watch the selection (register cell or memory byte)"),
        (Action::GotoStep, "go to a step"),
        (Action::ChooseVariable, "show a variable in the register pane (Tab completes)"),
        (Action::MemoryAddress, "show memory from an address, argN+OFF, a buffer name or slm[G]+OFF"),
        (Action::CommandLine, "type a command (every `vdb batch` command)"),
        (Action::NextPane, "next pane"),
        (Action::PrevPane, "previous pane"),
        (Action::Up, "move up"),
        (Action::Down, "move down"),
        (Action::Left, "move left (source: previous operand; lanes: previous lane)"),
        (Action::Right, "move right (source: next operand; lanes: next lane)"),
        (Action::PageUp, "page up"),
        (Action::PageDown, "page down"),
        (
            Action::Select,
            "select (operand → register pane, thread → focus, register cell or memory byte → its last write, lane → its history)",
        ),
        (Action::CycleFormat, "cycle value format: natural, hex, signed, float"),
        (Action::Why, "why: where the selected operand (source pane, focused lane), register cell or memory byte's value came from"),
        (Action::Races, "races: the run's data races, each with both accesses (Enter goes to one)"),
        (Action::Layout, "source pane: OpenCL source and vISA, source only, vISA only (layout next)"),
        (Action::Help, "this help"),
        (Action::Quit, "quit"),
    ];
}
