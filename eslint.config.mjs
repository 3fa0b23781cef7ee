// Lint rules: ESLint's and typescript-eslint's recommended sets for every TypeScript file, plus three
// rules that need type information (a promise nobody awaits or catches, a promise passed where a
// callback's result is ignored, imports that are only types). tsc --noEmit (strict, noUnusedLocals,
// noUnusedParameters) checks the types themselves. JavaScript files (scripts, the benchmark helpers,
// the configs) get ESLint's recommended set without type information.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Every eslint-disable comment says why, after ` -- `, as ESLint's own directive syntax allows.
const local = {
  rules: {
    'disable-needs-reason': {
      meta: { type: 'suggestion', schema: [], messages: { missing: 'Say why after " -- " in an eslint-disable comment.' } },
      create(context) {
        return {
          Program() {
            for (const comment of context.sourceCode.getAllComments()) {
              const text = comment.value.trim();
              if (/^eslint-disable(-next-line|-line)?\b/.test(text) && !/\s--\s+\S/.test(text)) {
                context.report({ loc: comment.loc, messageId: 'missing' });
              }
            }
          },
        };
      },
    },
  },
};

// Node's globals for the CommonJS and ESM scripts (the `globals` package is not a dependency).
const NODE_GLOBALS = Object.fromEntries(
  [
    'process',
    'console',
    'Buffer',
    'URL',
    'setTimeout',
    'clearTimeout',
    'setInterval',
    'clearInterval',
    'setImmediate',
    'AbortController',
    'fetch',
    'structuredClone',
  ].map((name) => [name, 'readonly']),
);

export default tseslint.config(
  {
    ignores: ['node_modules/**', '**/dist/**', 'data/**', '.bench/**', 'libs/client/src/generated/**', '**/*.cjs'],
  },
  { plugins: { local }, rules: { 'local/disable-needs-reason': 'error' } },
  js.configs.recommended,
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { ecmaVersion: 2022, globals: NODE_GLOBALS },
  },
  {
    files: ['**/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: { __dirname: 'readonly', __filename: 'readonly' } },
  },
  {
    files: ['**/*.ts', '**/*.tsx'],
    extends: [...tseslint.configs.recommended],
    languageOptions: {
      // Each file is checked with the tsconfig.json nearest to it (the root one, libs/client's, the
      // console's); scripts/*.ts sit in none and get a default project.
      parserOptions: { projectService: { allowDefaultProject: ['scripts/*.ts'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // `const { secret: _secret, ...rest } = x` is how a field is left out of a copy.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true, argsIgnorePattern: '^_' }],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // SWC compiles one file at a time: an import only of types must say so to be erased. A module
      // loaded lazily with require() is typed with `typeof import('...')`, which loads nothing.
      '@typescript-eslint/consistent-type-imports': ['error', { disallowTypeAnnotations: false }],
    },
  },
  {
    // Off in tests, benchmarks and test servers -- they assert on JSON answers, and typing each would restate the assertions.
    files: ['**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts', '**/*.server-spec.ts', 'test/**', 'bench/**', '**/testing/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
