#!/usr/bin/env node
// {{name}}: an Arena bot in Node, standard library only. Replace choose() with your strategy.
"use strict";
const readline = require("readline");

const NAME = "{{name}}";
const VERSION = "1";

// Return one element of legalActions, unchanged.
function choose(observation, legalActions) {
  return legalActions[0];
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
