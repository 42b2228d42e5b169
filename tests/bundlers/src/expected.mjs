// What src/agent.mjs's runAgent gives everywhere (without a store).
export const EXPECTED = {
  text: "There are 4 words.",
  cards: [
    ["a", "done", "the notes in notes.txt"],
    ["b", "failed", "[invalid arguments] read_file: $.path: want string, got number"],
    ["c", "done", "counted: 4"],
  ],
  problems: [],
  systemPrompt: "Be brief.",
  idFormat: true,
};
