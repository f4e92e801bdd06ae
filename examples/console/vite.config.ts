// The console's root is this folder: vite and the codegen packages come from the repository's
// node_modules, so there is no package.json here. VITE_GATEWAY_URL picks the gateway.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  // Relative asset URLs: the build can be served from any folder.
  base: './',
  server: { port: 5173, strictPort: false },
});
