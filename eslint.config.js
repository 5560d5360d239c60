import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { PARSE_BOUNDARIES, RECORD_ALLOW_LIST, RECORD_SCOPE } from './scripts/design-boundaries.mjs';

// a caught value is `unknown`: read its message with errorMessage()/errorStack() from
// src/util/errors.ts, which also handle non-Errors and Errors of other realms. Casting to
// Error to hand it on (`reject(signal.reason as Error)`) stays allowed.
const caughtErrorSelectors = [
  {
    selector:
      "MemberExpression > :matches(TSAsExpression, TSTypeAssertion).object[typeAnnotation.typeName.name='Error']",
    message:
      'read a caught value through errorMessage()/errorStack() (src/util/errors.ts), not `(e as Error).message`',
  },
  {
    selector:
      "VariableDeclarator[id.type='ObjectPattern'] > :matches(TSAsExpression, TSTypeAssertion).init[typeAnnotation.typeName.name='Error']",
    message:
      'read a caught value through errorMessage()/errorStack() (src/util/errors.ts), not by destructuring `e as Error`',
  },
];

// issue 26: the plan and the backends are typed from the schema on; untyped records only at the
// named parse boundaries (scripts/design-boundaries.mjs, which also holds the allow-list of files
// that still need the typed plan: the second part of issue 26 empties it)
const untypedSelectors = [
  {
    selector:
      "TSTypeReference[typeName.name='Record'][typeArguments.params.0.type='TSStringKeyword'][typeArguments.params.1.type='TSUnknownKeyword']",
    message:
      'no Record<string, unknown> in src/plan and src/backends outside a named parse boundary (scripts/design-boundaries.mjs): give the data its type',
  },
  {
    selector:
      "TSAsExpression[expression.type='TSAsExpression'][expression.typeAnnotation.type='TSUnknownKeyword']",
    message:
      'no `as unknown as` in src/plan and src/backends outside a named parse boundary (scripts/design-boundaries.mjs)',
  },
];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'bin/**',
      'assets/**',
      'bench/results/**',
      '.stryker-tmp/**',
      '.dependency-cruiser.cjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
      '@typescript-eslint/no-base-to-string': 'off',
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // the sources are typed end to end: no `any`, nothing unsafe flowing out of one (tests and
    // bench may still poke at untyped JSON); the ink view (.tsx) included
    files: ['src/**/*.{ts,tsx}'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unsafe-assignment': 'error',
      '@typescript-eslint/no-unsafe-member-access': 'error',
      '@typescript-eslint/no-unsafe-argument': 'error',
      '@typescript-eslint/no-unsafe-return': 'error',
      '@typescript-eslint/no-unsafe-call': 'error',
      'no-restricted-syntax': ['error', ...caughtErrorSelectors],
    },
  },
  {
    files: RECORD_SCOPE.map((dir) => `${dir}**/*.{ts,tsx}`),
    ignores: [...Object.keys(PARSE_BOUNDARIES), ...RECORD_ALLOW_LIST],
    rules: { 'no-restricted-syntax': ['error', ...caughtErrorSelectors, ...untypedSelectors] },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    // plain Node scripts (bench/, test fixtures): globals such as process/console are Node's
    rules: { ...tseslint.configs.disableTypeChecked.rules, 'no-undef': 'off' },
  },
);
