import { readFileSync } from "node:fs";

/**
 * A throwaway PostgreSQL could not be started. The message is one line
 * with the reason (and the server log's FATAL line when there is one);
 * everything the attempt created has been removed by the time it is thrown.
 *
 * @example
 * try { await ThrowawayPostgres.start(); }
 * catch (error) { if (error instanceof StartFailure) console.error(`could not start: ${error.message}`); }
 */
export class StartFailure extends Error {
  override readonly name = "StartFailure";
  readonly code = "STINT_THROWAWAY_POSTGRES_START";

  constructor(reason: string, options?: ErrorOptions) {
    super(oneLine(reason), options);
  }

  /** The failure `thrown` while starting, with the server log's FATAL line added when the log has one. */
  static from(thrown: unknown, logFile: string): StartFailure {
    const reason = thrown instanceof Error ? thrown.message : String(thrown);
    const fatal = fatalLine(logFile);
    return new StartFailure(fatal === undefined || reason.includes(fatal) ? reason : `${reason}; the server log says: ${fatal}`, { cause: thrown });
  }
}

/** The first FATAL (or PANIC) line of a server log, if the log exists and has one. */
function fatalLine(logFile: string): string | undefined {
  let log: string;
  try {
    log = readFileSync(logFile, "utf8");
  } catch {
    return undefined;
  }
  const line = log.split("\n").find((candidate) => /\b(?:FATAL|PANIC):/.test(candidate));
  return line === undefined ? undefined : oneLine(line.slice(line.search(/\b(?:FATAL|PANIC):/)));
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
