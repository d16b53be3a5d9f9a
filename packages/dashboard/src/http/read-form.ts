import type { IncomingMessage } from "node:http";
import { DashboardErrorCode, RequestRefused } from "./request-refused";

/** Largest form body accepted, in bytes: the dashboard's forms hold a few short fields. */
export const MAX_FORM_BYTES = 8 * 1024;

/**
 * The fields of a POSTed form (`application/x-www-form-urlencoded`). A
 * body a framework parsed already (Express's `urlencoded()` sets
 * `request.body`) is taken as it is. Refuses another content type (400)
 * and a body over {@link MAX_FORM_BYTES} (413).
 */
export async function readForm(request: IncomingMessage & { body?: unknown }): Promise<URLSearchParams> {
  if (typeof request.body === "object" && request.body !== null) {
    const fields = new URLSearchParams();
    for (const [name, value] of Object.entries(request.body as Record<string, unknown>)) if (typeof value === "string") fields.append(name, value);
    return fields;
  }
  const type = (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") {
    request.resume();
    throw new RequestRefused(DashboardErrorCode.BadRequest, "Actions take a form (application/x-www-form-urlencoded).");
  }
  const declared = Number(request.headers["content-length"] ?? 0);
  if (declared > MAX_FORM_BYTES) {
    request.resume();
    throw new RequestRefused(DashboardErrorCode.TooLarge, `A form may hold at most ${MAX_FORM_BYTES} bytes.`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_FORM_BYTES) {
      request.resume();
      throw new RequestRefused(DashboardErrorCode.TooLarge, `A form may hold at most ${MAX_FORM_BYTES} bytes.`);
    }
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}
