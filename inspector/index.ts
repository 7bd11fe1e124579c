/**
 * `toolwarden/inspector`: the live state-chart page as a plugin (docs/inspection.md). The server
 * starts on `start()` and needs the optional peers `hono`, `@hono/node-server` and `ws`; the
 * plugin itself (recording inspection events) needs none.
 *
 * @packageDocumentation
 */
export { type InspectorPlugin, type InspectorPluginOptions, inspectorPlugin } from './inspector-plugin.ts';
