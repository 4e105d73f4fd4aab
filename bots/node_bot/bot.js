#!/usr/bin/env node
// node_bot: the example Node bot, standard library only: a seeded random legal action.
"use strict";
const readline = require("readline");

const NAME = "node_bot";
const VERSION = "1";

// A small seeded generator (mulberry32): the same seed gives the same moves in the same match.
let state = (Number(process.argv[2]) || 1) >>> 0;
function random() {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

// Return one element of legalActions, unchanged: here a uniformly random one.
function choose(observation, legalActions) {
  return legalActions[Math.floor(random() * legalActions.length)];
}

// stdout belongs to the protocol: one JSON object per line.
function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

// stderr is the bot's log, kept by Arena with the match.
function log(...parts) {
  process.stderr.write(parts.join(" ") + "\n");
}

const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on("line", (line) => {
  if (!line.trim()) return;
  const msg = JSON.parse(line);
  switch (msg.type) {
    case "hello":
      send({ type: "ready", name: NAME, version: VERSION });
      break;
    case "game_start":
      log(`game ${msg.game_id}: ${msg.game}, seat ${msg.seat}`);
      break;
    case "act":
      send({ type: "action", request_id: msg.request_id,
             action: choose(msg.observation, msg.legal_actions) });
      break;
    case "bye":
      rl.close();
      process.exit(0);
    // Unknown message types (and game_end) are ignored, as the protocol requires.
  }
});
rl.on("close", () => process.exit(0));
