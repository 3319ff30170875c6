import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

// The console is served by Latchkey under /console: every asset URL starts there. Built
// files are named by content hash (the server marks them immutable); no inline script is
// emitted (the server's CSP forbids it), and no source maps are shipped.
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/console/",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    assetsInlineLimit: 0,
    sourcemap: false,
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 1024,
    rolldownOptions: {
      // Radix marks its modules "use client" for React Server Components; a plain bundle
      // has no use for the directive, and dropping it is what should happen.
      onwarn(warning, warn) {
        if (warning.code !== "MODULE_LEVEL_DIRECTIVE") warn(warning);
      },
    },
  },
  // The server puts a fresh nonce in place of this on every answer of the entry page, and in
  // its CSP: the style elements the dialogs' scroll lock adds at run time carry it.
  html: { cspNonce: "LATCHKEY_CSP_NONCE" },
  oxc: { jsx: { runtime: "automatic" } },
});
