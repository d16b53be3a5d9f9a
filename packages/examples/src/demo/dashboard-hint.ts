/**
 * The lines the demo ends with: the `stint dashboard` command that opens
 * the dashboard on the demo's jobs. When the demo ran on the throwaway
 * PostgreSQL that `npm start` starts without `DATABASE_URL` (which is gone
 * once the demo exits), it says how to keep the data instead.
 *
 * @example
 * ```ts
 * dashboardHint({ schema: "stint_demo", throwaway: false });
 * // ["See these jobs in the dashboard (…):", "  npx stint dashboard --schema stint_demo --no-auth --app @stint/examples/app"]
 * ```
 */
export function dashboardHint(options: { readonly schema: string; readonly throwaway: boolean }): readonly string[] {
  const command = `npx stint dashboard --schema ${options.schema} --no-auth --app @stint/examples/app`;
  if (options.throwaway) {
    return [
      "The demo ran on a throwaway PostgreSQL that is gone now. To see its jobs in the dashboard, run it on a database that stays:",
      "  export DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres && npm start",
      `  ${command}`,
    ];
  }
  return ["See these jobs in the dashboard (it reads DATABASE_URL, listens on http://127.0.0.1:3000/ only; Ctrl-C stops it):", `  ${command}`];
}
