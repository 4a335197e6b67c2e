// Shared by the Anthropic, Bedrock and Gemini wires: system blocks and merged turns (Python: wires/_chat.py).

import { PromptmillError } from "../errors.js";
import type { RequestView } from "../wire.js";

/** [text, stable] of one block. */
export type Block = [string, boolean];

/** (system blocks, turns): consecutive messages of one role become one turn of several blocks, because these APIs
 *  expect alternating roles. PM842 when there is no user message, or the first turn is the assistant's. */
export function split(req: RequestView, wire: string): [Block[], [string, Block[]][]] {
  const system: Block[] = req.messages.filter((m) => m.role === "system").map((m) => [m.content, m.stable]);
  const turns: [string, Block[]][] = [];
  for (const m of req.messages) {
    if (m.role === "system") continue;
    const last = turns[turns.length - 1];
    if (last !== undefined && last[0] === m.role) last[1].push([m.content, m.stable]);
    else turns.push([m.role, [[m.content, m.stable]]]);
  }
  if (!turns.length) {
    throw new PromptmillError(
      "PM842",
      `role '${req.role}' puts everything in the system prompt, but ${wire} needs at least one user message`,
      "give the section holding the request `message: user`",
    );
  }
  if (turns[0][0] !== "user") {
    throw new PromptmillError(
      "PM842",
      `role '${req.role}': the first ${wire} message would be from the assistant; it must be from the user`,
      "place a user section before the history, or start the history with a user turn",
    );
  }
  return [system, turns];
}
