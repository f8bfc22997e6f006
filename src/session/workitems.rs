//! Lanes and the OpenCL work-items they hold: focusing the lane that holds one (`workitem`),
//! the focused thread's lanes (`info lanes`), a lane's divergence story (`lane-history`),
//! work-item breakpoint conditions, and the work-item named next to every lane a reply reports.

use serde_json::{json, Value};

use super::expr::Condition;
use super::handlers::Reply;
use super::Session;
use crate::launch::workitems::parse_global_id;
use crate::launch::{NdGeometry, WorkItem};
use crate::machine::{Machine, ThreadId, ThreadState};
use crate::program::Program;

impl Session {
    /// The work-item lane `lane` of `thread` holds (OpenCL launches).
    pub fn work_item(&self, thread: u32, lane: u32) -> Option<WorkItem> {
        self.geometry.as_ref()?.work_item(thread, lane)
    }

    /// A work-item's global id as the launch writes it (`5` in 1D, `5,2` in 2D).
    pub fn work_item_text(&self, item: &WorkItem) -> String {
        item.text(self.geometry.as_ref().map_or(3, NdGeometry::shown_dims))
    }

    /// A work-item as JSON: its global, local and group ids; null for a lane that holds none.
    pub(super) fn work_item_json(&self, thread: u32, lane: u32) -> Value {
        match self.work_item(thread, lane) {
            Some(w) => json!({"global": w.global, "local": w.local, "group": w.group}),
            None => Value::Null,
        }
    }

    /// The work-items `lanes` of `thread` hold, as `work_item_text` writes them.
    pub(super) fn work_items_of(&self, thread: u32, lanes: &[u32]) -> Vec<String> {
        lanes.iter().filter_map(|&l| self.work_item(thread, l)).map(|w| self.work_item_text(&w)).collect()
    }

    /// `, work-item 5` for a lane that holds one, else nothing.
    pub(super) fn work_item_suffix(&self, thread: u32, lane: u32) -> String {
        match work_items_phrase(&self.work_items_of(thread, &[lane])) {
            p if p.is_empty() => p,
            p => format!(", {p}"),
        }
    }

    /// `workitem [ID]`.
    pub(super) fn focus_work_item(&mut self, id: Option<&str>) -> Result<Reply, String> {
        let Some(geometry) = &self.geometry else {
            return Err("this is a raw launch: its lanes hold no OpenCL work-items".into());
        };
        if let Some(id) = id {
            let (thread, lane) = geometry.locate(parse_global_id(id)?)?;
            if thread as usize >= self.machine.threads.len() {
                return Err(format!("work-item {id} would be in thread {thread}, past the launch"));
            }
            self.focus = ThreadId(thread);
            self.lane = lane;
        }
        let (thread, lane) = (self.focus.0, self.lane);
        let Some(item) = self.work_item(thread, lane) else {
            return Err(format!("lane {lane} of thread {thread} holds no work-item"));
        };
        let t = self.machine.thread(self.focus);
        let active = t.control.em >> lane & 1 != 0;
        let text = format!(
            "work-item {} (group {:?}, local {:?}): thread {thread} lane {lane}{}: line {}: {}",
            self.work_item_text(&item),
            item.group,
            item.local,
            if active { "" } else { " (not in the execution mask)" },
            self.line(),
            self.current_text()
        );
        Ok(Reply::text(text)
            .with("lane", json!(lane))
            .with("active", json!(active))
            .with("workitem", self.work_item_json(thread, lane)))
    }

    /// `info lanes`: per lane of the focused thread, its work-item, whether it was dispatched
    /// and whether it is in the execution mask now.
    pub(super) fn info_lanes(&self) -> Result<Reply, String> {
        let t = self.machine.thread(self.focus);
        let mut rows = Vec::new();
        let mut text = vec![format!("  lane  {:<16} dispatched  active", "work-item")];
        for lane in 0..t.simd {
            let dispatched = t.dispatch_mask >> lane & 1 != 0;
            let active = t.control.em >> lane & 1 != 0;
            let item = self.work_item(self.focus.0, lane);
            let shown = item.map_or("-".to_string(), |w| self.work_item_text(&w));
            let yes = |b: bool| if b { "yes" } else { "no" };
            let mark = if lane == self.lane { "*" } else { " " };
            text.push(format!("{mark} {lane:>4}  {shown:<16} {:<11} {}", yes(dispatched), yes(active)));
            rows.push(json!({"lane": lane, "workitem": self.work_item_json(self.focus.0, lane),
                             "dispatched": dispatched, "active": active}));
        }
        Ok(Reply::text(text.join("\n")).with("lanes", json!(rows)))
    }

    /// `lane-history [L]`.
    pub(super) fn lane_history_reply(&self, lane: u32) -> Result<Reply, String> {
        let simd = self.machine.thread(self.focus).simd;
        if lane >= simd {
            return Err(format!("lane {lane} is outside SIMD{simd}"));
        }
        let events = self.lane_history(self.focus, lane);
        let item = self.work_item_suffix(self.focus.0, lane);
        let mut text = vec![match events.len() {
            0 => format!(
                "lane {lane} of thread {}{item}: in the execution mask as dispatched, never left it",
                self.focus.0
            ),
            n => format!(
                "lane {lane} of thread {}{item}: {n} changes before step {}, newest first",
                self.focus.0, self.now
            ),
        }];
        if events.is_empty() && self.machine.thread(self.focus).dispatch_mask >> lane & 1 == 0 {
            text[0] = format!(
                "lane {lane} of thread {}: not dispatched (no work-item), never active",
                self.focus.0
            );
        }
        for e in &events {
            let pred = e
                .predicate
                .as_ref()
                .map_or(String::new(), |(p, b)| format!("  [{p} lane {lane} = {}]", u8::from(*b)));
            text.push(format!(
                "  step {:<8} {:<8} line {} ${}  {}{pred}  (em {:#x} -> {:#x})",
                e.step, e.event, e.line, e.id, e.instruction, e.em_before, e.em_after
            ));
        }
        Ok(Reply::text(text.join("\n")).with("lane", json!(lane)).with("events", json!(events)))
    }

    /// Whether `cond` holds for `thread` before it executes `pc`: None if not; else the lane
    /// a work-item condition names (the stop focuses it), or None inside for a comparison.
    pub(super) fn condition_lane(&self, cond: &Condition, thread: u32, pc: u32) -> Option<Option<u32>> {
        condition_lane(&self.program, self.geometry.as_ref(), self.lane, &self.machine, cond, thread, pc)
    }
}

/// [`Session::condition_lane`] on any machine: `lane` is the focused lane a comparison reads.
pub(super) fn condition_lane(
    program: &Program,
    geometry: Option<&NdGeometry>,
    lane: u32,
    machine: &Machine,
    cond: &Condition,
    thread: u32,
    pc: u32,
) -> Option<Option<u32>> {
    let state = machine.threads.get(thread as usize)?;
    condition_lane_on(program, geometry, lane, state, cond, thread, pc)
}

/// [`condition_lane`] on thread `thread`'s state.
pub(super) fn condition_lane_on(
    program: &Program,
    geometry: Option<&NdGeometry>,
    lane: u32,
    state: &ThreadState,
    cond: &Condition,
    thread: u32,
    pc: u32,
) -> Option<Option<u32>> {
    match cond {
        Condition::Compare(c) => {
            let unit = program.insts.get(pc as usize)?.unit;
            c.eval(program, unit, state, lane).unwrap_or(false).then_some(None)
        }
        Condition::WorkItem(id) => {
            let (t, lane) = geometry?.locate(*id).ok()?;
            (t == thread && state.control.em >> lane & 1 != 0).then_some(Some(lane))
        }
    }
}

/// `work-item 5`, `work-items 5 6`, or nothing: the work-items a reply names after lanes.
pub(super) fn work_items_phrase<S: AsRef<str>>(items: &[S]) -> String {
    let ids: Vec<&str> = items.iter().map(AsRef::as_ref).collect();
    match ids.as_slice() {
        [] => String::new(),
        [one] => format!("work-item {one}"),
        many => format!("work-items {}", many.join(" ")),
    }
}
