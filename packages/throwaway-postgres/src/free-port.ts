import { createServer } from "node:net";

/**
 * A TCP port that is free on 127.0.0.1 right now (the system picks it).
 *
 * @example
 * const port = await freePort(); // 41873
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}
