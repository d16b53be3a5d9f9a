// ESLint for the whole repository: `npm run lint` (with Prettier and the core-imports check), `npm run lint:fix`.
// TypeScript is linted with type information from each package's own tsconfig.json (src and test), so the
// packages must be built first (`npm run build`): a package sees the others through their declarations in dist/.
// Every rule switched off or relaxed below says why; a disable comment in the code says why too (`-- reason`).
import js from "@eslint/js";
import { defineConfig, globalIgnores } from "eslint/config";
import prettier from "eslint-config-prettier";
import globals from "globals";
import tseslint from "typescript-eslint";

export default defineConfig(
  globalIgnores(["**/dist/", "**/node_modules/", ".stint-tmp/"]),
  { linterOptions: { reportUnusedDisableDirectives: "error" } },
  js.configs.recommended,
  {
    files: ["**/*.ts"],
    extends: [tseslint.configs.strictTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // `any` appears only as a type argument: `Kysely<any>` for a database whose schema is chosen at run time, and
      // `JobDefinition<any, …>` where `unknown` would not match; any value of type any that reaches typed code is
      // still reported by the no-unsafe-* rules.
      "@typescript-eslint/no-explicit-any": "off",
      // tsconfig's noUncheckedIndexedAccess makes every indexed read possibly undefined; `rows[0]!` after a check
      // the compiler cannot follow (a length, a regular expression's groups) is the house idiom.
      "@typescript-eslint/no-non-null-assertion": "off",
      // The public API checks its inputs at run time for JavaScript callers (`typeof options !== "object"`, a mode
      // outside its union), rows are checked against what SQL may return, and a signal may abort during an await:
      // this rule reports all of those as dead code, which they are not.
      "@typescript-eslint/no-unnecessary-condition": "off",
      // `String(row.id)` on what a declared row type calls a string is deliberate: pg's type parsers can be changed
      // by the application, and JavaScript callers can pass anything.
      "@typescript-eslint/no-unnecessary-type-conversion": "off",
      // `return send(response, page)` ends a request handler early; the rule would split each into two lines.
      "@typescript-eslint/no-confusing-void-expression": "off",
      // Reports casts to a class that are deliberate (`request.socket as TLSSocket`, a store read back from the
      // container as its class), tests' partial fakes, and winston's transports, whose typings declare instances as
      // interfaces; errors are recognised by their code here, not by class.
      "@typescript-eslint/no-unsafe-class-instance-assignment": "off",
      // Numbers read naturally in messages (`${count} jobs`); booleans, nullish values and objects are still reported.
      "@typescript-eslint/restrict-template-expressions": ["error", { allowNumber: true }],
      // The `_` prefix marks what is unused on purpose, as tsc's noUnusedParameters accepts; a rest sibling drops keys.
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", ignoreRestSiblings: true }],
      // Passing on an abort signal's reason or a caught value keeps what the caller gave; new errors are still checked.
      "@typescript-eslint/prefer-promise-reject-errors": ["error", { allowThrowingAny: true, allowThrowingUnknown: true }],
      "@typescript-eslint/only-throw-error": ["error", { allowThrowingAny: true, allowThrowingUnknown: true }],
      // Beyond the presets, rules that catch bugs: `||` where `??` was meant (0 and "" are values), a `switch` over a
      // union that misses a member, `==` outside the `x == null` idiom.
      // (`text || fallback` on a string means "empty counts as missing" on purpose, so strings are left to `||`.)
      "@typescript-eslint/prefer-nullish-coalescing": ["error", { ignorePrimitives: { string: true } }],
      "@typescript-eslint/prefer-optional-chain": "error",
      "@typescript-eslint/switch-exhaustiveness-check": ["error", { considerDefaultExhaustiveForUnions: true }],
      eqeqeq: ["error", "smart"],
    },
  },
  {
    files: ["packages/*/test/**/*.ts"],
    rules: {
      // Tests match the terminal's escape sequences (`\x1b[K`) in the CLI's output.
      "no-control-regex": "off",
    },
  },
  {
    files: ["packages/*/test/**/*.ts", "packages/core/src/testing/**/*.ts"],
    rules: {
      // Fakes and the test kit's in-memory store implement async interfaces (JobStore, Clock, an effect) with
      // synchronous bodies; `async` keeps a throw a rejection, as in the real implementation.
      "@typescript-eslint/require-await": "off",
    },
  },
  {
    files: ["packages/cli/templates/ts/**/*.ts"],
    rules: {
      // The application `stint init` writes: its worker does its work without awaiting anything, and
      // `async processItem` is how a user writes that.
      "@typescript-eslint/require-await": "off",
      // Its tests run on node:test, whose describe() and it() return promises that the runner itself awaits.
      "@typescript-eslint/no-floating-promises": [
        "error",
        { allowForKnownSafeCalls: [{ from: "package", package: "node:test", name: ["describe", "it", "test", "suite"] }] },
      ],
    },
  },
  { files: ["**/*.{js,mjs,cjs}"], languageOptions: { globals: { ...globals.node } } },
  // The plain JavaScript application `stint init --js` writes: CommonJS.
  { files: ["packages/cli/templates/js/**/*.js"], languageOptions: { sourceType: "commonjs" } },
  // The CLI's bin shim runs before anything is compiled: plain CommonJS.
  { files: ["packages/*/bin/**/*.js"], languageOptions: { sourceType: "commonjs" } },
  // Mocha fixtures the hygiene test runs: plain CommonJS with mocha's globals.
  { files: ["packages/*/test/**/*.cjs"], languageOptions: { sourceType: "commonjs", globals: { ...globals.mocha } } },
  // The dashboard's page script: a classic browser script, no modules.
  { files: ["packages/dashboard/assets/**/*.js"], languageOptions: { sourceType: "script", globals: { ...globals.browser } } },
  // Last, so that no formatting rule contradicts Prettier.
  prettier,
);
