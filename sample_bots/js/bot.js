#!/usr/bin/env node
// A Super Taki sample bot in JavaScript, speaking protocol version 1 (protocol/PROTOCOL.md).
//
//   node sample_bots/js/bot.js [NAME]
//
// Policy: break every +3 it can, answer +2 chains, prefer playing to drawing, shed the
// color it holds most of, keep wild cards for when they are needed, and always declare
// "last card" (an untrue declaration costs nothing).
"use strict";

const { encode, decodeMultiStream } = require("@msgpack/msgpack");

const PROTOCOL = 1;
const NAME = process.argv[2] || "js-bot";

function send(message) {
  // Writes to a pipe are synchronous on POSIX systems, so nothing stays buffered.
  process.stdout.write(encode(message));
}

function log(...parts) {
  process.stderr.write(parts.join(" ") + "\n");
}

// "red:5" -> ["red", "5"]; "king" -> [null, "king"]
function split(card) {
  const i = card.lastIndexOf(":");
  return i < 0 ? [null, card] : [card.slice(0, i), card.slice(i + 1)];
}

function colorCounts(hand) {
  const counts = new Map();
  for (const card of hand) {
    const [color] = split(card);
    if (color !== null) counts.set(color, (counts.get(color) || 0) + 1);
  }
  return counts;
}

const WILD_CARDS = new Set(["change_color", "super_taki", "king", "crazy"]);
const NUMBER = /^[0-9]+$/;

function score(action, view, counts) {
  const handSize = view.hand.length;
  switch (action.kind) {
    case "break":
      return 1000;
    case "play_combo":
      return 60;
    case "pass":
    case "leave_run_open":
      return 0;
    case "close_run":
      return 1;
    case "end_turn":
      return -50;
    case "draw":
      return -100 - (action.count || 1);
    case "play":
      break;
    default:
      return -1000; // unknown action kinds of a later revision: last resort
  }
  const [color, figure] = split(String(action.card));
  if (view.pending_draw > 0) {
    // Answering a +2 chain passes it on; anything else (a King) beats taking the cards.
    if (figure === "+2") return 80;
    if (figure === "+3") return 70;
    return 10;
  }
  if (view.phase === "run") {
    // Inside our own TAKI run: numbers first, the card that should act last.
    if (color === null) return -20;
    return NUMBER.test(figure) ? 40 : 30;
  }
  if (figure === "+3") return 45;
  if (figure === "+3_breaker") return -40; // in one's own turn it costs three cards
  if (color === null) {
    // Wild cards: keep them until the hand is nearly empty.
    if (WILD_CARDS.has(figure)) return handSize <= 2 ? 50 : -10;
    return -5;
  }
  const same = counts.get(color) || 0;
  let base = 3 * same;
  if (figure === "taki") base += 5 * same;
  else if (figure === "+2" || figure === "stop") base += 8;
  else if (figure === "plus") base += same > 1 ? 10 : -2;
  else if (NUMBER.test(figure)) base += 6 + Number(figure) / 10; // shed high numbers first
  else base += 4;
  return base;
}

function choose(view, legal) {
  const counts = colorCounts(view.hand || []);
  let best = 0;
  let bestScore = -Infinity;
  legal.forEach((action, i) => {
    const s = score(action, view, counts);
    if (s > bestScore) {
      best = i;
      bestScore = s;
    }
  });
  // A Change Color names the color we hold most of.
  if (legal[best].card === "change_color" && counts.size > 0) {
    const wanted = [...counts.entries()].sort((a, b) => b[1] - a[1])[0][0];
    const i = legal.findIndex((a) => a.card === "change_color" && a.color === wanted);
    if (i >= 0) best = i;
  }
  return best;
}

function handle(message) {
  switch (message.type) {
    case "hello":
      if (message.protocol !== PROTOCOL) {
        log(`unsupported protocol version ${message.protocol}`);
        process.exit(1);
      }
      send({ type: "bot_hello", protocol: PROTOCOL, name: NAME });
      return;
    case "game_start":
      return;
    case "decide":
    case "react": {
      const legal = message.legal;
      let choice = 0;
      try {
        choice = choose(message.view, legal);
      } catch (err) {
        log(`policy error, playing the first legal action: ${err && err.stack}`);
      }
      send({ type: "action", id: message.id, choice, last_card: true });
      return;
    }
    case "game_over":
      return;
    case "error":
      log(`forfeited: ${message.reason}: ${message.message}`);
      process.exit(0);
      return;
    case "shutdown":
      process.exit(0);
      return;
    default:
      log(`unknown message type ${JSON.stringify(message.type)}`);
  }
}

async function main() {
  // decodeMultiStream yields every complete value, however the bytes are split into
  // chunks: a message may arrive in pieces, or several may arrive at once.
  for await (const message of decodeMultiStream(process.stdin)) {
    if (message === null || typeof message !== "object" || Array.isArray(message)) {
      log("ignoring a message that is not a map");
      continue;
    }
    handle(message);
  }
  process.exit(0); // end of input: the referee has gone
}

main().catch((err) => {
  log(`fatal: ${err && err.stack ? err.stack : err}`);
  process.exit(1);
});
