import type { Reporter, TestModule } from 'vitest/node';

/**
 * Prints one plain closing line, `tests: N passed, N failed, N skipped`, and names every test file
 * whose tests were all skipped (a peer such as Jaeger, PostgreSQL, Chromium or the BFCL data was
 * missing), so a run without them says clearly what it did not check.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const skippedFiles: string[] = [];
    for (const module of testModules) {
      let moduleRan = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
        if (state === 'passed' || state === 'failed') moduleRan++;
      }
      if (moduleRan === 0) skippedFiles.push(module.moduleId.replace(`${process.cwd()}/`, ''));
      if (module.state() === 'failed' && moduleRan === 0) failed++;
    }
    if (skippedFiles.length > 0) {
      console.log(
        `\nSkipped suites (a test peer or data set was missing):\n${skippedFiles.map((f) => `  - ${f}`).join('\n')}`,
      );
    }
    console.log(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
  }
}
