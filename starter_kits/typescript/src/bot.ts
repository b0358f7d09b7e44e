// A Super Taki bot for taki-referee: the protocol loop (protocol/PROTOCOL.md, version 1).
//
// The referee writes MessagePack maps to stdin, back to back; the bot answers each
// `decide` and `react` with one `action` on stdout. Everything else it prints goes to
// stderr (the referee keeps it in a log). The decisions are made in strategy.ts.
import * as fs from "fs";
import { decodeMultiStream, encode } from "@msgpack/msgpack";
import { Message, Request } from "./protocol";
import { choose } from "./strategy";

const PROTOCOL = 1;
const NAME = process.argv[2] || "typescript-kit";

function log(...parts: unknown[]): void {
  process.stderr.write(parts.join(" ") + "\n");
}

function send(message: Record<string, unknown>): void {
  // A synchronous write of the whole message: nothing waits in a buffer.
  const data = encode(message);
  let done = 0;
  while (done < data.length) {
    try {
      done += fs.writeSync(1, data, done);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EAGAIN") throw err;
    }
  }
}

function answer(request: Request): void {
  const legal = request.legal;
  let choice = 0;
  try {
    choice = choose(request.view, legal);
    if (!Number.isInteger(choice) || choice < 0 || choice >= legal.length) {
      throw new Error(`choose returned ${choice} for ${legal.length} legal actions`);
    }
  } catch (err) {
    // A bug in the strategy must not cost the game.
    log(`strategy failed (${(err as Error).stack}); playing the first legal action`);
    choice = 0;
  }
  // Declaring "last card" costs nothing when it is not needed: always declare.
  send({ type: "action", id: request.id, choice, last_card: true });
}

function handle(message: Message): void {
  switch (message.type) {
    case "hello":
      if (message.protocol !== PROTOCOL) {
        log(`unsupported protocol version ${String(message.protocol)}`);
        process.exit(1);
      }
      send({ type: "bot_hello", protocol: PROTOCOL, name: NAME });
      return;
    case "decide":
    case "react":
      answer(message as unknown as Request);
      return;
    case "game_start":
    case "game_over":
      return; // the seat, the rules and the results: keep what your strategy needs
    case "error":
      log("forfeited:", message.reason, message.message);
      process.exit(0);
    // falls through: exit does not return
    case "shutdown":
      process.exit(0);
    // falls through: exit does not return
    default:
      log(`ignoring a message of unknown type ${JSON.stringify(message.type)}`);
  }
}

async function main(): Promise<void> {
  // A streaming decoder: messages may arrive in pieces, or several in one read.
  for await (const message of decodeMultiStream(process.stdin)) {
    if (message === null || typeof message !== "object" || Array.isArray(message)) {
      log("ignoring a message that is not a map");
      continue;
    }
    handle(message as Message);
  }
  process.exit(0); // end of input: the referee has gone
}

main().catch((err: unknown) => {
  log(`fatal: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
