//! A Super Taki bot for taki-referee: the protocol loop (protocol/PROTOCOL.md, version 1).
//!
//! The referee writes MessagePack maps to stdin, back to back; the bot answers each
//! decide and react with one action on stdout. Everything else it prints goes to stderr
//! (the referee keeps it in a log). The decisions are made in strategy.rs.

mod protocol;
mod strategy;

use std::io::{self, BufReader, Write};
use std::panic;
use std::process;

use serde::{Deserialize, Serialize};

use protocol::{Answer, BotHello, Message};

const PROTOCOL: i64 = 1;

/// Writes one message and flushes it: nothing may wait in a buffer.
fn send<T: Serialize>(out: &mut impl Write, message: &T) {
    let data = rmp_serde::to_vec_named(message).expect("a message encodes");
    if out.write_all(&data).and_then(|_| out.flush()).is_err() {
        process::exit(0); // the referee has gone
    }
}

fn answer(out: &mut impl Write, request: &Message) {
    let legal = &request.legal;
    let choice = match (&request.view, legal.is_empty()) {
        (Some(view), false) => {
            // A bug in the strategy must not cost the game.
            match panic::catch_unwind(|| strategy::choose(view, legal)) {
                Ok(choice) if choice < legal.len() => choice,
                Ok(choice) => {
                    eprintln!("choose returned {} for {} legal actions", choice, legal.len());
                    0
                }
                Err(_) => {
                    eprintln!("strategy failed; playing the first legal action");
                    0
                }
            }
        }
        _ => 0,
    };
    // Declaring "last card" costs nothing when it is not needed: always declare.
    let id = request.id.unwrap_or(0);
    send(out, &Answer { kind: "action", id, choice, last_card: true });
}

fn main() {
    let name = std::env::args().nth(1).unwrap_or_else(|| "rust-kit".to_string());
    let stdout = io::stdout();
    let mut out = stdout.lock();
    // The deserializer reads one whole message at a time, however the bytes arrive.
    let mut input = rmp_serde::Deserializer::new(BufReader::new(io::stdin()));
    loop {
        let message = match Message::deserialize(&mut input) {
            Ok(message) => message,
            Err(rmp_serde::decode::Error::InvalidMarkerRead(e))
                if e.kind() == io::ErrorKind::UnexpectedEof =>
            {
                process::exit(0) // end of input: the referee has gone
            }
            Err(e) => {
                eprintln!("reading a message: {}", e);
                process::exit(1)
            }
        };
        match message.kind.as_str() {
            "hello" => {
                if message.protocol != Some(PROTOCOL) {
                    eprintln!("unsupported protocol version {:?}", message.protocol);
                    process::exit(1);
                }
                send(&mut out, &BotHello { kind: "bot_hello", protocol: PROTOCOL, name: &name });
            }
            "decide" | "react" => answer(&mut out, &message),
            "game_start" | "game_over" => {} // the seat, the rules, the results: keep what you need
            "error" => {
                eprintln!(
                    "forfeited: {}: {}",
                    message.reason.unwrap_or_default(),
                    message.message.unwrap_or_default()
                );
                process::exit(0);
            }
            "shutdown" => process::exit(0),
            other => eprintln!("ignoring a message of unknown type {:?}", other),
        }
    }
}
