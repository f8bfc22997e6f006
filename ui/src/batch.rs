//! `vdb batch` (commands from a script, text or one JSON object per command) and
//! `vdb trace` (the whole recorded run as JSON lines).

use std::io::{BufWriter, Write};
use std::path::Path;

use serde_json::{json, Value};
use vdb::isa::InstIdx;
use vdb::machine::ThreadId;
use vdb::session::{self, hex, space_name, Session, StopReason};
use vdb::trace::EntryKind;

use crate::commands::{open_input, EXIT_BAD_LAUNCH, EXIT_DIAGNOSTICS, EXIT_OK};
use crate::launchfile::LaunchInput;

/// One reply as the JSON object `vdb batch --json` prints.
pub fn reply_json(session: &Session, cmd: &str, reply: &session::Reply) -> Value {
    let mut obj = serde_json::Map::new();
    obj.insert("cmd".into(), json!(cmd));
    obj.insert("step".into(), json!(session.now));
    obj.insert("thread".into(), json!(session.focus.0));
    obj.insert("lane".into(), json!(session.lane));
    obj.insert("line".into(), json!(session.line()));
    // The OpenCL source position beside the vISA line, where the kernel has line information.
    if let Some(source) = session.source_here() {
        obj.insert("source".into(), json!(source));
    }
    obj.insert("stop".into(), serde_json::to_value(&reply.stop).unwrap_or(Value::Null));
    for (k, v) in &reply.fields {
        obj.entry(k.clone()).or_insert(v.clone());
    }
    Value::Object(obj)
}

pub fn batch(launch: &LaunchInput, script: &Path, as_json: bool, budget: Option<u64>) -> u8 {
    let text = match vdb::launch::raw::read_text(script) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {}: cannot read: {e}", script.display());
            return EXIT_BAD_LAUNCH;
        }
    };
    let mut session = match open_input(launch, budget) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut failed = false;
    for (n, line) in text.lines().enumerate() {
        let cmd = line.trim();
        let result = match session::parse(cmd) {
            Ok(None) => continue,
            Ok(Some(c)) => session.execute(&c),
            Err(e) => Err(e.0),
        };
        let written = match result {
            Ok(reply) if as_json => writeln!(out, "{}", reply_json(&session, cmd, &reply)),
            Ok(reply) => writeln!(out, "(vdb) {cmd}\n{}", reply.text),
            Err(e) => {
                failed = true;
                if as_json {
                    let mut obj = json!({"cmd": cmd, "error": e, "script_line": n + 1, "step": session.now,
                                     "thread": session.focus.0, "line": session.line(), "stop": null});
                    if let (Some(source), Value::Object(fields)) = (session.source_here(), &mut obj) {
                        fields.insert("source".into(), json!(source));
                    }
                    writeln!(out, "{obj}")
                } else {
                    writeln!(out, "(vdb) {cmd}\nerror: {e}")
                }
            }
        };
        if written.is_err() {
            return EXIT_DIAGNOSTICS;
        }
    }
    let _ = out.flush();
    if failed {
        EXIT_DIAGNOSTICS
    } else {
        EXIT_OK
    }
}

pub fn trace(launch: &LaunchInput, output: &Path, budget: Option<u64>) -> u8 {
    let mut session = match open_input(launch, budget) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let stop = session.run_to_end();
    let file = match std::fs::File::create(output) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {}: {e}", output.display());
            return EXIT_BAD_LAUNCH;
        }
    };
    let mut out = BufWriter::new(file);
    session.goto(0);
    let total = session.total_steps();
    for step in 0..total {
        let line = step_json(&session, step);
        if writeln!(out, "{line}").is_err() {
            return EXIT_BAD_LAUNCH;
        }
        session.forward();
    }
    let _ = out.flush();
    let how = match &stop {
        StopReason::End => "the whole run".to_string(),
        StopReason::Fault { message } => format!("to the fault: {message}"),
        StopReason::RecordLimit { bytes } => {
            format!("up to the recording budget ({bytes} bytes recorded; --record-limit sets it)")
        }
        StopReason::Interrupted => "up to where Ctrl-C stopped the run".to_string(),
        other => format!("stopped: {other:?}"),
    };
    say!("wrote {total} steps to {}, {how}", output.display());
    match stop {
        StopReason::End | StopReason::Fault { .. } => EXIT_OK,
        _ => EXIT_DIAGNOSTICS,
    }
}

/// One step with each write's old and new bytes (the session stands at time `step`).
fn step_json(session: &Session, step: u64) -> Value {
    let rec = session.recorder.trace.at(step);
    let thread = session.machine.thread(ThreadId(rec.thread));
    let inst = session.program.inst(InstIdx(rec.pc));
    let mut writes = Vec::new();
    for e in session.recorder.trace.entries(step) {
        let t = session.machine.thread(ThreadId(e.thread));
        let w = match e.kind {
            EntryKind::Grf { offset, xor } => {
                let old = &t.grf[offset as usize..offset as usize + xor.len()];
                let new: Vec<u8> = old.iter().zip(xor.iter()).map(|(a, b)| a ^ b).collect();
                json!({"kind": "grf", "thread": e.thread, "offset": offset, "old": hex(old), "new": hex(&new)})
            }
            EntryKind::Pred { pred, xor } => {
                let old = t.preds[pred as usize];
                json!({"kind": "pred", "thread": e.thread, "pred": session.program.preds[pred as usize].name, "old": old, "new": old ^ xor})
            }
            EntryKind::Addr { slot, xor } => {
                let old = t.addrs[slot as usize];
                json!({"kind": "addr", "thread": e.thread, "slot": slot, "old": old, "new": old ^ xor})
            }
            EntryKind::Mem { space, addr, xor } => {
                let mut old = vec![0u8; xor.len()];
                let _ = session.machine.read_memory(space, addr, &mut old);
                let new: Vec<u8> = old.iter().zip(xor.iter()).map(|(a, b)| a ^ b).collect();
                json!({"kind": space_name(space), "addr": format!("{addr:#x}"), "old": hex(&old), "new": hex(&new)})
            }
            EntryKind::Pc { old, new } => json!({"kind": "pc", "thread": e.thread, "old": old, "new": new}),
            EntryKind::Control { index } => match session.recorder.trace.control_change(step, index) {
                Some((old, new)) => json!({"kind": "control", "thread": e.thread,
                    "old": {"pc": old.pc.0, "em": old.em, "call_mask": old.call_mask, "status": format!("{:?}", old.status)},
                    "new": {"pc": new.pc.0, "em": new.em, "call_mask": new.call_mask, "status": format!("{:?}", new.status)}}),
                None => continue,
            },
        };
        writes.push(w);
    }
    let mut obj = json!({"step": step, "thread": rec.thread, "pc": rec.pc, "id": inst.id, "line": inst.span.line,
           "em": thread.control.em, "chen": rec.chen, "writes": writes});
    if let (Some(source), Value::Object(fields)) = (session.source_of(InstIdx(rec.pc)), &mut obj) {
        fields.insert("source".into(), json!(source));
    }
    obj
}
