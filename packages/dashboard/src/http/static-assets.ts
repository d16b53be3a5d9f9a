import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ServerResponse } from "node:http";

/** One file the dashboard serves from its package: no CDN, so it works without internet. */
interface Asset {
  readonly body: Buffer;
  readonly type: string;
  readonly etag: string;
}

const TYPES: Readonly<Record<string, string>> = {
  "dashboard.css": "text/css; charset=utf-8",
  "dashboard.js": "text/javascript; charset=utf-8",
  "favicon.svg": "image/svg+xml",
};

/** The package's `assets/` folder (from `dist/src/http`). */
const ASSET_DIR = join(__dirname, "..", "..", "..", "assets");

/**
 * The stylesheet, the script and the icon, read once when the dashboard is created.
 * `version` changes with their content, for cache-busting URLs.
 */
export class StaticAssets {
  readonly #assets: ReadonlyMap<string, Asset>;
  readonly version: string;

  constructor(directory: string = ASSET_DIR) {
    const assets = new Map<string, Asset>();
    const hash = createHash("sha256");
    for (const [name, type] of Object.entries(TYPES)) {
      const body = readFileSync(join(directory, name));
      hash.update(body);
      assets.set(name, { body, type, etag: `"${createHash("sha256").update(body).digest("hex").slice(0, 16)}"` });
    }
    this.#assets = assets;
    this.version = hash.digest("hex").slice(0, 10);
  }

  /** Sends the asset `name`; false when there is none by that name. */
  send(name: string, response: ServerResponse, ifNoneMatch: string | undefined): boolean {
    const asset = this.#assets.get(name);
    if (asset === undefined) return false;
    const headers = { "Content-Type": asset.type, ETag: asset.etag, "Cache-Control": "public, max-age=86400", "X-Content-Type-Options": "nosniff" };
    if (ifNoneMatch === asset.etag) {
      response.writeHead(304, headers);
      response.end();
      return true;
    }
    response.writeHead(200, { ...headers, "Content-Length": asset.body.length });
    response.end(asset.body);
    return true;
  }
}
