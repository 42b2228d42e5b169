// The Node entry for a CommonJS bundle (esbuild --platform=node without
// --format=esm, its default): no top-level await, and no import.meta.url
// in the bundle.
import { runAgent } from "./agent.mjs";

runAgent().then(
  (result) => console.log(JSON.stringify(result)),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
