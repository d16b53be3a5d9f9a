import { sql, type Kysely } from "kysely";
import pg from "pg";
import { eventually } from "@stint/core/testing";

/**
 * A plain `pg` client that LISTENs on one channel and keeps every payload
 * it hears: what reached the channel, whoever sent it and whether or not a
 * stint listener was live.
 */
export class RawListener {
  readonly #client: pg.Client;
  readonly #channel: string;
  #heard: string[] = [];

  private constructor(client: pg.Client, channel: string) {
    this.#client = client;
    this.#channel = channel;
    client.on("notification", (message) => this.#heard.push(message.payload ?? ""));
  }

  /** Connects and listens on `channel`. */
  static async open(connectionString: string, channel: string): Promise<RawListener> {
    const client = new pg.Client({ connectionString });
    await client.connect();
    const listener = new RawListener(client, channel);
    try {
      await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
    } catch (thrown) {
      await client.end();
      throw thrown;
    }
    return listener;
  }

  /**
   * Runs `work`, then sends a sentinel on the channel; notifications arrive
   * in commit order, so once the sentinel is heard every notification of
   * `work` has been too. Resolves with the payloads heard in between.
   */
  async heardAfter(db: Kysely<any>, work: () => Promise<unknown>): Promise<string[]> {
    this.#heard = [];
    await work();
    await sql`SELECT pg_notify(${this.#channel}, 'sentinel')`.execute(db);
    await eventually(() => this.#heard.includes("sentinel"), { timeoutMs: 10_000, what: "the sentinel notification" });
    const sent = this.#heard.slice(0, this.#heard.indexOf("sentinel"));
    this.#heard = [];
    return sent;
  }

  close(): Promise<void> {
    return this.#client.end();
  }
}
