import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { ConfigError } from "@stint/core";
import { DEFAULT_SESSION_LIMITS, SessionStore } from "./sessions";

/**
 * How viewers prove who they are: a bearer token (sent as
 * `Authorization: Bearer …`, or typed once into the sign-in page, which
 * sets a session cookie), HTTP basic auth, or `"none"` (for a dashboard
 * on localhost only; the CLI refuses it on other addresses).
 */
export type DashboardAuth = { readonly token: string } | { readonly basicAuth: { readonly username: string; readonly password: string } } | "none";

/** Shortest token accepted: guessing one must not be practical. */
export const MIN_TOKEN_LENGTH = 16;
/** Shortest basic-auth password accepted. */
export const MIN_PASSWORD_LENGTH = 8;

/** The dashboard's view of the configured credential. */
export interface Authenticator {
  readonly kind: "token" | "basic" | "none";
  /**
   * Who made the request (`token:1a2b3c4d`, `user:alice`, `anonymous`), or
   * `undefined` when it carries no valid credential.
   */
  identify(request: IncomingMessage, sessionCookie: string | undefined): string | undefined;
  /** Opens a session for a token typed into the sign-in page and returns its cookie value, or `undefined` when the token is wrong. */
  signIn(token: string): string | undefined;
  /** Ends the session of this cookie value (sign-out): the cookie is refused from then on. */
  signOut(sessionCookie: string | undefined): void;
  /** The session cookie's `Max-Age`, in seconds. */
  readonly sessionMaxAgeSeconds: number;
  /** The key CSRF tokens are signed with: derived from the credential, so every instance sharing it agrees. */
  readonly csrfKey: Buffer;
}

/**
 * Checks `auth` and returns its authenticator; throws
 * `ConfigError("auth")` for anything else, so a dashboard without a
 * credential is a decision, never an accident.
 *
 * @example
 * ```ts
 * const auth = resolveAuth({ token: process.env.STINT_DASHBOARD_TOKEN! }, new SessionStore(DEFAULT_SESSION_LIMITS, { now: Date.now }));
 * auth.identify(request, undefined); // "token:1a2b3c4d" for "Authorization: Bearer <the token>"
 * ```
 */
export function resolveAuth(auth: unknown, sessions = new SessionStore(DEFAULT_SESSION_LIMITS, { now: () => Date.now() })): Authenticator {
  if (auth === "none") return noAuth();
  if (typeof auth === "object" && auth !== null && "token" in auth) {
    const { token } = auth;
    if (typeof token !== "string" || token.length < MIN_TOKEN_LENGTH || /\s/.test(token)) {
      throw new ConfigError("auth.token", `must be a text of at least ${MIN_TOKEN_LENGTH} characters without spaces`);
    }
    return tokenAuth(token, sessions);
  }
  if (typeof auth === "object" && auth !== null && "basicAuth" in auth) {
    const { username, password } = (auth.basicAuth ?? {}) as { username?: unknown; password?: unknown };
    if (typeof username !== "string" || username.length === 0 || username.includes(":")) {
      throw new ConfigError("auth.basicAuth.username", "must be a non-empty text without a colon");
    }
    if (typeof password !== "string" || password.length < MIN_PASSWORD_LENGTH) {
      throw new ConfigError("auth.basicAuth.password", `must be a text of at least ${MIN_PASSWORD_LENGTH} characters`);
    }
    return basicAuth(username, password);
  }
  throw new ConfigError("auth", 'is required: { token }, { basicAuth: { username, password } }, or "none" (for localhost only)');
}

function tokenAuth(token: string, sessions: SessionStore): Authenticator {
  const who = `token:${createHash("sha256").update(token).digest("hex").slice(0, 8)}`;
  return Object.freeze({
    kind: "token" as const,
    csrfKey: hmac(token, "stint-dashboard-csrf-v1"),
    identify(request: IncomingMessage, sessionCookie: string | undefined) {
      const header = request.headers.authorization;
      if (header !== undefined && /^Bearer /i.test(header)) return sameText(header.slice(7).trim(), token) ? who : undefined;
      return sessions.isOpen(sessionCookie) ? who : undefined;
    },
    signIn: (typed: string) => (sameText(typed, token) ? sessions.open() : undefined),
    signOut: (sessionCookie: string | undefined) => sessions.close(sessionCookie),
    sessionMaxAgeSeconds: sessions.maxAgeSeconds,
  });
}

function basicAuth(username: string, password: string): Authenticator {
  return Object.freeze({
    kind: "basic" as const,
    csrfKey: hmac(`${username}:${password}`, "stint-dashboard-csrf-v1"),
    identify(request: IncomingMessage) {
      const header = request.headers.authorization;
      if (header === undefined || !/^Basic /i.test(header)) return undefined;
      const decoded = Buffer.from(header.slice(6).trim(), "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      if (colon < 0) return undefined;
      const userOk = sameText(decoded.slice(0, colon), username);
      const passwordOk = sameText(decoded.slice(colon + 1), password);
      return userOk && passwordOk ? `user:${username}` : undefined;
    },
    signIn: () => undefined,
    signOut: () => undefined,
    sessionMaxAgeSeconds: 0,
  });
}

function noAuth(): Authenticator {
  return Object.freeze({
    kind: "none" as const,
    csrfKey: randomBytes(32),
    identify: () => "anonymous",
    signIn: () => undefined,
    signOut: () => undefined,
    sessionMaxAgeSeconds: 0,
  });
}

function hmac(key: string, text: string): Buffer {
  return createHmac("sha256", key).update(text).digest();
}

/** Compares two texts in time that does not depend on where they differ. */
export function sameText(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}
