//! The keymap as data: default bindings, overridable from a TOML file such as
//!
//! ```toml
//! [keys]
//! step = ["s", "F7"]
//! reverse-step = ["S", "shift-F7"]
//! quit = ["q", "ctrl-q"]
//! ```

use std::collections::HashMap;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde::Deserialize;

use crate::action::Action;

/// A key with its modifiers (shift is folded into upper-case letters).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub ctrl: bool,
    pub shift: bool,
}

impl Key {
    pub fn from_event(e: KeyEvent) -> Key {
        let shift = e.modifiers.contains(KeyModifiers::SHIFT) && !matches!(e.code, KeyCode::Char(_));
        Key { code: e.code, ctrl: e.modifiers.contains(KeyModifiers::CONTROL), shift }
    }

    /// Parses `s`, `S`, `F7`, `shift-F7`, `ctrl-c`, `tab`, `backtab`, `enter`, `up`, `pageup`, `?`.
    pub fn parse(text: &str) -> Option<Key> {
        let mut ctrl = false;
        let mut shift = false;
        let mut rest = text;
        loop {
            if let Some(r) = rest.strip_prefix("ctrl-") {
                ctrl = true;
                rest = r;
            } else if let Some(r) = rest.strip_prefix("shift-") {
                shift = true;
                rest = r;
            } else {
                break;
            }
        }
        let code = match rest.to_ascii_lowercase().as_str() {
            "tab" => KeyCode::Tab,
            "backtab" => KeyCode::BackTab,
            "enter" => KeyCode::Enter,
            "esc" => KeyCode::Esc,
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "pageup" => KeyCode::PageUp,
            "pagedown" => KeyCode::PageDown,
            "space" => KeyCode::Char(' '),
            f if f.starts_with('f') && f.len() > 1 => KeyCode::F(f[1..].parse().ok()?),
            _ => {
                let mut chars = rest.chars();
                let c = chars.next()?;
                if chars.next().is_some() {
                    return None;
                }
                KeyCode::Char(c)
            }
        };
        Some(Key { code, ctrl, shift })
    }

    pub fn label(&self) -> String {
        let base = match self.code {
            KeyCode::Char(' ') => "space".to_string(),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::F(n) => format!("F{n}"),
            KeyCode::Tab => "Tab".into(),
            KeyCode::BackTab => "Shift-Tab".into(),
            KeyCode::Enter => "Enter".into(),
            KeyCode::Esc => "Esc".into(),
            KeyCode::Up => "Up".into(),
            KeyCode::Down => "Down".into(),
            KeyCode::Left => "Left".into(),
            KeyCode::Right => "Right".into(),
            KeyCode::PageUp => "PgUp".into(),
            KeyCode::PageDown => "PgDn".into(),
            other => format!("{other:?}"),
        };
        match (self.ctrl, self.shift) {
            (true, _) => format!("Ctrl-{base}"),
            (_, true) => format!("Shift-{base}"),
            _ => base,
        }
    }
}

/// Key → action.
#[derive(Clone, Debug)]
pub struct Keymap {
    pub bindings: HashMap<Key, Action>,
}

const DEFAULTS: &[(&str, Action)] = &[
    ("s", Action::Step),
    ("F7", Action::Step),
    ("S", Action::ReverseStep),
    ("shift-F7", Action::ReverseStep),
    ("n", Action::Next),
    ("F8", Action::Next),
    ("N", Action::ReverseNext),
    ("shift-F8", Action::ReverseNext),
    ("i", Action::StepInstruction),
    ("I", Action::ReverseStepInstruction),
    ("o", Action::Finish),
    ("O", Action::ReverseFinish),
    ("c", Action::Continue),
    ("F9", Action::Continue),
    ("C", Action::ReverseContinue),
    ("shift-F9", Action::ReverseContinue),
    ("b", Action::ToggleBreakpoint),
    ("w", Action::Watch),
    ("g", Action::GotoStep),
    ("v", Action::ChooseVariable),
    ("m", Action::MemoryAddress),
    (":", Action::CommandLine),
    ("tab", Action::NextPane),
    ("backtab", Action::PrevPane),
    ("up", Action::Up),
    ("k", Action::Up),
    ("down", Action::Down),
    ("j", Action::Down),
    ("left", Action::Left),
    ("h", Action::Left),
    ("right", Action::Right),
    ("l", Action::Right),
    ("pageup", Action::PageUp),
    ("pagedown", Action::PageDown),
    ("enter", Action::Select),
    ("f", Action::CycleFormat),
    ("y", Action::Why),
    ("R", Action::Races),
    ("a", Action::Layout),
    ("?", Action::Help),
    ("q", Action::Quit),
];

#[derive(Deserialize)]
struct KeyFile {
    keys: HashMap<Action, Vec<String>>,
}

impl Default for Keymap {
    fn default() -> Self {
        let bindings = DEFAULTS.iter().filter_map(|(k, a)| Key::parse(k).map(|k| (k, *a))).collect();
        Keymap { bindings }
    }
}

impl Keymap {
    /// Defaults with the bindings of a TOML file on top (an action listed there gets exactly
    /// the listed keys).
    pub fn with_overrides(text: &str) -> Result<Keymap, String> {
        let file: KeyFile = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut map = Keymap::default();
        for (action, keys) in file.keys {
            map.bindings.retain(|_, a| *a != action);
            for k in keys {
                let key = Key::parse(&k).ok_or_else(|| format!("unknown key `{k}` for {action:?}"))?;
                map.bindings.insert(key, action);
            }
        }
        Ok(map)
    }

    pub fn action(&self, key: Key) -> Option<Action> {
        self.bindings.get(&key).copied()
    }

    /// The keys bound to `action`, sorted for display.
    pub fn keys_for(&self, action: Action) -> Vec<String> {
        let mut v: Vec<String> =
            self.bindings.iter().filter(|(_, a)| **a == action).map(|(k, _)| k.label()).collect();
        v.sort();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_cover_the_documented_keys() {
        let m = Keymap::default();
        let k = |s: &str| m.action(Key::parse(s).expect("key"));
        assert_eq!(k("s"), Some(Action::Step));
        assert_eq!(k("F7"), Some(Action::Step));
        assert_eq!(k("S"), Some(Action::ReverseStep));
        assert_eq!(k("shift-F9"), Some(Action::ReverseContinue));
        assert_eq!(k("tab"), Some(Action::NextPane));
        assert_eq!(k("q"), Some(Action::Quit));
        for (action, _) in Action::ALL {
            assert!(!m.keys_for(*action).is_empty(), "{action:?} has no key");
        }
    }

    #[test]
    fn toml_overrides_replace_an_actions_keys() {
        let m = Keymap::with_overrides("[keys]\nstep = [\"x\", \"ctrl-s\"]\n").expect("parses");
        assert_eq!(m.action(Key::parse("x").expect("k")), Some(Action::Step));
        assert_eq!(m.action(Key::parse("ctrl-s").expect("k")), Some(Action::Step));
        assert_eq!(m.action(Key::parse("s").expect("k")), None);
        assert!(Keymap::with_overrides("[keys]\nstep = [\"nope-key\"]\n").is_err());
        assert!(Keymap::with_overrides("[keys]\nfly = [\"x\"]\n").is_err());
    }
}
