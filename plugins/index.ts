/** The plugin API and built-in plugins (docs/policies.md, §9). */
export * from './define-plugin.ts';
export * from './inject-fields.ts';
