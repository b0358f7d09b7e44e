//! The messages of protocol version 1 (protocol/PROTOCOL.md, section 4). Only the fields
//! a bot reads are declared; serde skips every key it does not know.

use serde::{Deserialize, Serialize};

/// Any message from the referee: `kind` (the `type` key) says which, and only that
/// type's fields are set.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Message {
    #[serde(rename = "type")]
    pub kind: String,
    /// hello
    pub protocol: Option<i64>,
    /// game_start
    pub seat: Option<u32>,
    /// game_start
    pub players: Option<u32>,
    /// decide, react
    pub id: Option<i64>,
    /// decide, react
    pub view: Option<View>,
    /// decide, react
    pub legal: Vec<Action>,
    /// decide, react: None without a bank
    pub time_left_ms: Option<i64>,
    /// decide, react
    pub deadline_ms: Option<i64>,
    /// error
    pub reason: Option<String>,
    /// error
    pub message: Option<String>,
}

/// A legal action (section 6): `kind` is play, play_combo, draw, end_turn, close_run,
/// leave_run_open, break or pass.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct Action {
    pub kind: String,
    pub card: Option<String>,
    pub color: Option<String>,
    pub count: Option<u32>,
}

/// What the bot's seat sees (section 7).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct View {
    pub seat: u32,
    pub players: u32,
    pub hand: Vec<String>,
    pub hand_sizes: Vec<u32>,
    pub active: Vec<bool>,
    /// None outside the Pyramid Tournament
    pub stages: Option<Vec<u32>>,
    pub leading_card: String,
    pub top_card: String,
    pub color: String,
    pub direction: i32,
    pub turn: u32,
    /// play, run, again, king or react
    pub phase: String,
    pub pending_draw: u32,
    pub open_run: Option<String>,
    pub draw_pile: u32,
    pub discard_pile: u32,
    pub declared_last_card: bool,
    pub action_count: u32,
    pub events: Vec<Event>,
}

/// Something that happened at the table (section 8); the fields its `kind` has are set.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Event {
    #[serde(rename = "type")]
    pub kind: String,
    pub seat: Option<u32>,
    pub card: Option<String>,
    pub color: Option<String>,
    pub count: Option<u32>,
    pub reason: Option<String>,
    pub cards: Option<Vec<String>>,
    pub closed: Option<bool>,
    pub draw_pile: Option<u32>,
    pub direction: Option<i32>,
    pub stage: Option<u32>,
}

/// The bot's first message (section 4.2).
#[derive(Debug, Serialize)]
pub struct BotHello<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub protocol: i64,
    pub name: &'a str,
}

/// The answer to a decide or react (section 4.2).
#[derive(Debug, Serialize)]
pub struct Answer {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub id: i64,
    pub choice: usize,
    pub last_card: bool,
}
