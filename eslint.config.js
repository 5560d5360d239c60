import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'bin/**',
      'assets/**',
      'bench/results/**',
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
    // bench may still poke at untyped JSON)
    files: ['src/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unsafe-assignment': 'error',
      '@typescript-eslint/no-unsafe-member-access': 'error',
      '@typescript-eslint/no-unsafe-argument': 'error',
      '@typescript-eslint/no-unsafe-return': 'error',
      '@typescript-eslint/no-unsafe-call': 'error',
      // a caught value is `unknown`: read its message with errorMessage()/errorStack() from
      // src/util/errors.ts, which also handle non-Errors and Errors of other realms. Casting to
      // Error to hand it on (`reject(signal.reason as Error)`) stays allowed.
      'no-restricted-syntax': [
        'error',
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
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    // plain Node scripts (bench/, test fixtures): globals such as process/console are Node's
    rules: { ...tseslint.configs.disableTypeChecked.rules, 'no-undef': 'off' },
  },
);
