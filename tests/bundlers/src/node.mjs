// The Node entry (plain Node 20 and esbuild --platform=node): prints the
// result as JSON; argv[2], when given, is a directory for a {dir} store.
import { runAgent } from "./agent.mjs";

const dir = process.argv[2];
const result = await runAgent(dir ? { store: { dir } } : {});
console.log(JSON.stringify(result));
