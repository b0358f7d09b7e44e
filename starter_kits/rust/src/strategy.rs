//! Your bot's brain: `choose(view, legal)` returns the index of one of the legal actions.
//!
//! The view is what your seat sees (PROTOCOL.md section 7): your `hand`, every seat's
//! `hand_sizes`, the `leading_card`, the current `color`, the `phase` and the `events`
//! since your last request. `legal` lists every legal action exactly once (section 6).
//!
//! The strategy below is simple and works: break every +3 you can, answer +2 chains, play
//! before drawing, get rid of the color you hold the most of, keep the wild cards for
//! later, and name your longest color with a Change Color. Replace it with yours.

use std::collections::HashMap;

use crate::protocol::{Action, View};

/// `"red:5"` gives `(Some("red"), "5")`; `"king"` gives `(None, "king")`.
fn split(card: &str) -> (Option<&str>, &str) {
    match card.rfind(':') {
        Some(i) => (Some(&card[..i]), &card[i + 1..]),
        None => (None, card),
    }
}

fn score(action: &Action, view: &View, colors: &HashMap<&str, i32>) -> i32 {
    match action.kind.as_str() {
        "break" => return 100,
        "play_combo" => return 50,
        "draw" => return -100,
        "play" => {}
        _ => return 0, // pass, end_turn, close_run, leave_run_open (and later kinds)
    }
    let (color, figure) = split(action.card.as_deref().unwrap_or(""));
    if view.pending_draw > 0 {
        return if figure == "+2" || figure == "+3" { 60 } else { 40 };
    }
    if figure == "+3_breaker" {
        return -20; // in your own turn it makes you draw 3
    }
    match color {
        None if view.hand.len() <= 2 => 30, // keep wild cards for the end
        None => 5,
        Some(color) => {
            let number = figure.chars().next().map_or(false, |c| c.is_ascii_digit());
            10 + colors.get(color).copied().unwrap_or(0) + i32::from(number)
        }
    }
}

pub fn choose(view: &View, legal: &[Action]) -> usize {
    let mut colors: HashMap<&str, i32> = HashMap::new();
    for card in &view.hand {
        if let (Some(color), _) = split(card) {
            *colors.entry(color).or_insert(0) += 1;
        }
    }
    let mut best = 0;
    for i in 1..legal.len() {
        if score(&legal[i], view, &colors) > score(&legal[best], view, &colors) {
            best = i;
        }
    }
    if legal[best].card.as_deref() == Some("change_color") {
        let wanted = colors.iter().max_by_key(|(color, n)| (**n, std::cmp::Reverse(**color)));
        if let Some((wanted, _)) = wanted {
            let named = legal.iter().position(|a| {
                a.card.as_deref() == Some("change_color") && a.color.as_deref() == Some(*wanted)
            });
            if let Some(i) = named {
                return i;
            }
        }
    }
    best
}
