/** The plugin API and built-in plugins (SPEC §5, §9). */
export * from './define-plugin.ts';
export * from './inject-fields.ts';
