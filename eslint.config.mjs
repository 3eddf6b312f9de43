import js from '@eslint/js';
import globals from 'globals';

export default [
  { ignores: ['node_modules/**', 'build/**', 'test-artifacts/**'] },
  js.configs.recommended,
  {
    files: ['web/**/*.js'],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      globals: { ...globals.browser },
    },
    rules: {
      'no-restricted-properties': ['error',
        { property: 'innerHTML', message: 'Use textContent: names come from the network.' },
        { property: 'outerHTML', message: 'Use textContent: names come from the network.' },
        { property: 'insertAdjacentHTML', message: 'Use textContent: names come from the network.' },
      ],
      'no-implied-eval': 'error',
      eqeqeq: ['error', 'always'],
    },
  },
  {
    files: ['tests/browser/**/*.mjs', 'tests/browser/**/*.js', 'eslint.config.mjs'],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      // Callbacks given to page.evaluate() run in the browser.
      globals: { ...globals.node, ...globals.browser },
    },
  },
];
