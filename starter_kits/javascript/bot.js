#!/usr/bin/env node
// A Super Taki bot for taki-referee: the protocol loop (protocol/PROTOCOL.md, version 1).
//
// The referee writes MessagePack maps to stdin, back to back; the bot answers each
// `decide` and `react` with one `action` on stdout. Everything else it prints goes to
// stderr (the referee keeps it in a log). The decisions are made in strategy.js.
"use strict";

const fs = require("fs");
const { encode, decodeMultiStream } = require("@msgpack/msgpack");
const { choose } = require("./strategy");

const PROTOCOL = 1;
const NAME = process.argv[2] || "javascript-kit";

function log(...parts) {
  process.stderr.write(parts.join(" ") + "\n");
}

function send(message) {
  // A synchronous write of the whole message: nothing waits in a buffer.
  const data = encode(message);
  let done = 0;
  while (done < data.length) {
    try {
      done += fs.writeSync(1, data, done);
    } catch (err) {
      if (err.code !== "EAGAIN") throw err;
    }
  }
}

function answer(request) {
  const legal = request.legal;
  let choice = 0;
  try {
    choice = choose(request.view, legal);
    if (!Number.isInteger(choice) || choice < 0 || choice >= legal.length) {
      throw new Error(`choose returned ${choice} for ${legal.length} legal actions`);
    }
  } catch (err) {
    // A bug in the strategy must not cost the game.
    log(`strategy failed (${err && err.stack}); playing the first legal action`);
    choice = 0;
  }
  // Declaring "last card" costs nothing when it is not needed: always declare.
  send({ type: "action", id: request.id, choice, last_card: true });
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
    case "decide":
    case "react":
      answer(message);
      return;
    case "game_start":
    case "game_over":
      return; // the seat, the rules and the results: keep what your strategy needs
    case "error":
      log("forfeited:", message.reason, message.message);
      process.exit(0);
      return;
    case "shutdown":
      process.exit(0);
      return;
    default:
      log(`ignoring a message of unknown type ${JSON.stringify(message.type)}`);
  }
}

async function main() {
  // A streaming decoder: messages may arrive in pieces, or several in one read.
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
