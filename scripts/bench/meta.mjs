// The session_meta of the benchmarks' sessions (ab.mjs, wasm-bench.mjs,
// idb-bench.html): a scripted model with a large context window.
export const benchMeta = (id) => ({
  session_id: id,
  provider: "bench",
  model_id: "scripted",
  model_context_window: 1000000,
  system_prompt: "",
  agent_state: "",
  workspace: "",
});
