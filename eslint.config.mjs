// Lint rules for every TypeScript file: ESLint's and typescript-eslint's recommended sets. Without
// type information: a type-aware pass over the whole tree takes minutes on our 2-core CI, and
// `tsc --noEmit` (strict, noUnusedLocals, noUnusedParameters) already checks types.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'data/**', '.bench/**', 'libs/client/src/generated/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // `const { secret: _secret, ...rest } = x` is how a field is left out of a copy.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true, argsIgnorePattern: '^_' }],
    },
  },
  {
    // Tests, benchmarks and test servers read JSON answers whose shape is exactly what they go on
    // to assert; typing each answer would restate the assertions. Service code gets no `any`.
    files: ['**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts', '**/*.server-spec.ts', 'test/**', 'bench/**', '**/testing/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
