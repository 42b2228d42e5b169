import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// Two pages: the chat over session.run (index.html) and the chat behind
// useChat (usechat.html).
export default defineConfig({
  plugins: [react()],
  build: { rollupOptions: { input: ["index.html", "usechat.html"] } },
});
