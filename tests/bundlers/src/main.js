// The browser entry (Vite, esbuild --platform=browser, webpack).
import { runAgent } from "./agent.mjs";

window.floeResult = runAgent().catch((e) => ({ error: String(e?.stack ?? e) }));
