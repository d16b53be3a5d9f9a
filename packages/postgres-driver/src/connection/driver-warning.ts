/**
 * Something the driver changed by itself to keep working, said once: it
 * fell back to unnamed statements, to polling, or to a connection without
 * a server-side statement timeout. `code` is stable; `message` says what
 * happened and which setting pins it.
 */
export interface DriverWarning {
  readonly code: string;
  readonly message: string;
}

/** Where driver warnings go. */
export type WarningListener = (warning: DriverWarning) => void;

/** The default listener: a process warning with the warning's code. */
export function emitProcessWarning(warning: DriverWarning): void {
  process.emitWarning(warning.message, { code: warning.code });
}

/**
 * A listener that passes each code on once and drops its repeats, so that
 * the pools and session connections of one process say a thing once.
 *
 * @example
 * ```ts
 * const warn = warnOnce(emitProcessWarning);
 * warn({ code: "STINT_UNNAMED_STATEMENTS", message: "…" }); // emitted
 * warn({ code: "STINT_UNNAMED_STATEMENTS", message: "…" }); // dropped
 * ```
 */
export function warnOnce(listener: WarningListener): WarningListener {
  const said = new Set<string>();
  return (warning) => {
    if (said.has(warning.code)) return;
    said.add(warning.code);
    listener(warning);
  };
}
