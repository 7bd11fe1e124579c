import type { Reporter, TestModule, TestSuite } from 'vitest/node';

/**
 * Prints one plain closing line, `tests: N passed, N failed, N skipped`, and names every test file
 * or suite whose tests were all skipped (a peer such as Jaeger, PostgreSQL, Chromium or the BFCL
 * data was missing), so a run without them says clearly what it did not check.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const skippedSuites: string[] = [];
    const failedFiles: string[] = [];
    for (const module of testModules) {
      const file = module.moduleId.replace(`${process.cwd()}/`, '');
      let moduleFailed = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') moduleFailed++;
        else skipped++;
      }
      // A file that failed without a failing test (an import error, a throwing beforeAll) counts
      // as one failure: its tests show as skipped, but nothing was skipped on purpose.
      if (module.state() === 'failed' && moduleFailed === 0) {
        moduleFailed = 1;
        failedFiles.push(file);
      }
      failed += moduleFailed;
      if (module.state() === 'failed') continue;
      if (allSkipped(module.children.allTests())) skippedSuites.push(file);
      else {
        for (const suite of module.children.allSuites()) {
          if (allSkipped(suite.children.allTests()) && !parentSkipped(suite)) {
            skippedSuites.push(`${file} > ${suite.fullName}`);
          }
        }
      }
    }
    if (skippedSuites.length > 0) {
      console.log(
        `\nSkipped suites (a test peer or data set was missing):\n${skippedSuites.map((s) => `  - ${s}`).join('\n')}`,
      );
    }
    if (failedFiles.length > 0) {
      console.log(`\nFailed before their tests ran:\n${failedFiles.map((f) => `  - ${f}`).join('\n')}`);
    }
    console.log(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
  }
}

function allSkipped(tests: Iterable<{ result(): { state: string } }>): boolean {
  let any = false;
  for (const test of tests) {
    any = true;
    const state = test.result().state;
    if (state === 'passed' || state === 'failed') return false;
  }
  return any;
}

function parentSkipped(suite: TestSuite): boolean {
  const parent = suite.parent;
  return parent.type === 'suite' && allSkipped(parent.children.allTests());
}
