import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// Two pages, both served by the dev server: the chat over session.run
// (index.html, which react.test.mjs also builds and serves) and the chat
// behind useChat (usechat.html, which usechat.test.mjs opens on the dev
// server only: a build of it was made at each run and never opened).
export default defineConfig({
  plugins: [react()],
});
