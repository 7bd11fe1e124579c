/** See build-page.mjs. */
/** Where the generated module lives: inspector/page-bundle.ts. */
export const PAGE_BUNDLE: string;
/** The generated module's text. */
export function pageBundleModule(): Promise<string>;
