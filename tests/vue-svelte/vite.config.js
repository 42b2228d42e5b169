import { defineConfig } from "vite";
import vue from "@vitejs/plugin-vue";
import { svelte } from "@sveltejs/vite-plugin-svelte";

export default defineConfig({
  plugins: [vue(), svelte()],
  build: { rollupOptions: { input: { vue: "vue.html", svelte: "svelte.html" } } },
});
