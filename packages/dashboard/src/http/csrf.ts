import { createHmac, randomBytes } from "node:crypto";
import { sameText } from "./auth";

/** The form field every POST carries. */
export const CSRF_FIELD = "_csrf";

/**
 * CSRF tokens bound to a browser and a viewer: the browser holds a random
 * nonce in a `SameSite=Strict`, `HttpOnly` cookie, and each form carries
 * `HMAC(key, nonce + who)`. A POST is accepted only with both, and only
 * for the viewer the token was made for; a page on another site can
 * neither read the cookie nor compute the token.
 *
 * @example
 * ```ts
 * const csrf = new CsrfTokens(auth.csrfKey);
 * const token = csrf.tokenFor(nonce, "user:alice");
 * csrf.check(nonce, "user:alice", token); // true
 * ```
 */
export class CsrfTokens {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    this.#key = key;
  }

  /** A fresh nonce for a browser that has none. */
  newNonce(): string {
    return randomBytes(18).toString("base64url");
  }

  /** The token a form of `who`'s page carries. */
  tokenFor(nonce: string, who: string): string {
    return createHmac("sha256", this.#key).update(`${nonce}\n${who}`).digest("base64url");
  }

  /** True when `submitted` is the token of this nonce and viewer. */
  check(nonce: string | undefined, who: string, submitted: string | undefined): boolean {
    if (nonce === undefined || submitted === undefined || nonce.length === 0 || submitted.length === 0) return false;
    return sameText(submitted, this.tokenFor(nonce, who));
  }
}
