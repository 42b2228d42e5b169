// freePort: a loopback port nothing listened on a moment before (the
// kernel's choice for port 0), for a server that takes no port 0 (Vite 7,
// workerd's config) or a URL that must lead nowhere. Shared by the test
// folders; it needs no package.
import { createServer } from "node:net";

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}
