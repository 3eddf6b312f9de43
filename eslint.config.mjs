import js from '@eslint/js';
import css from '@eslint/css';
import html from '@html-eslint/eslint-plugin';
import htmlParser from '@html-eslint/parser';
import globals from 'globals';

// Lint for the three kinds of file the page is made of: the JavaScript
// modules, the markup and the style sheet.

// Every request of the page goes through web/js/api.js: no other module
// may call fetch, EventSource, XMLHttpRequest, WebSocket or sendBeacon.
const ONE_CLIENT = 'Requests go through web/js/api.js, the page\'s one HTTP client.';

export default [
  { ignores: ['node_modules/**', 'build/**', 'build-*/**', 'test-artifacts/**'] },
  { ...js.configs.recommended, files: ['**/*.js', '**/*.mjs'] },
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
        ...['window', 'self', 'globalThis'].flatMap((object) => ['fetch', 'EventSource', 'XMLHttpRequest', 'WebSocket']
          .map((property) => ({ object, property, message: ONE_CLIENT }))),
        { object: 'navigator', property: 'sendBeacon', message: ONE_CLIENT },
      ],
      'no-restricted-globals': ['error',
        ...['fetch', 'EventSource', 'XMLHttpRequest', 'WebSocket'].map((name) => ({ name, message: ONE_CLIENT })),
      ],
      'no-implied-eval': 'error',
      eqeqeq: ['error', 'always'],
    },
  },
  // The one HTTP client of the page.
  { files: ['web/js/api.js'], rules: { 'no-restricted-globals': 'off' } },
  {
    files: ['tests/**/*.mjs', 'tests/**/*.js', 'eslint.config.mjs'],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      // Callbacks given to page.evaluate() run in the browser.
      globals: { ...globals.node, ...globals.browser },
    },
  },
  {
    files: ['web/**/*.html'],
    plugins: { '@html-eslint': html },
    languageOptions: { parser: htmlParser },
    rules: {
      ...html.configs['flat/recommended'].rules,
      // Formatting is not what this lint is for.
      '@html-eslint/indent': 'off',
      '@html-eslint/attrs-newline': 'off',
      '@html-eslint/element-newline': 'off',
      '@html-eslint/require-closing-tags': ['error', { selfClosing: 'never' }],
      '@html-eslint/no-inline-styles': 'error', // the CSP forbids them
      '@html-eslint/no-duplicate-id': 'error',
      '@html-eslint/require-button-type': 'error',
    },
  },
  {
    files: ['web/**/*.css'],
    plugins: { css },
    language: 'css/css',
    rules: {
      ...css.configs.recommended.rules,
      // Newer properties degrade gracefully; the baseline rule would flag them.
      'css/use-baseline': 'off',
    },
  },
];
