import type { UserConsoleLog } from 'vitest';
import type { Reporter, TestModule, TestSuite } from 'vitest/node';

/**
 * Prints one plain closing line, `tests: N passed, N failed, N skipped`, and names every test file
 * or suite whose tests were all skipped (a peer such as Jaeger, PostgreSQL, Chromium or the BFCL
 * data was missing), so a run without them says clearly what it did not check.
 */
export default class SummaryReporter implements Reporter {
  /** What each file or task printed about skipping (`Skipping <suite>: <reason>`), by task id. */
  private readonly skipNotes = new Map<string, string[]>();

  onUserConsoleLog(log: UserConsoleLog): void {
    if (log.taskId === undefined || !/\bskip/i.test(log.content)) return;
    const notes = this.skipNotes.get(log.taskId) ?? [];
    const note = log.content.trim().replace(/\s+/g, ' ');
    if (!notes.includes(note)) notes.push(note);
    this.skipNotes.set(log.taskId, notes);
  }

  /** Why `module` (or one of its suites) was skipped: what it printed, else a note that it did not say. */
  private reasonOf(module: TestModule, suite?: TestSuite): string {
    const ids = [
      module.id,
      ...(suite ? [suite.id, ...[...suite.children.allTests()].map((test) => test.id)] : []),
    ];
    const notes = ids.flatMap((id) => this.skipNotes.get(id) ?? []);
    if (notes.length > 0) return notes.join('; ');
    const note =
      suite && [...suite.children.allTests()].map((test) => test.result()).find((r) => 'note' in r && r.note);
    if (note && 'note' in note && note.note) return note.note;
    return 'no reason printed (make the suite console.warn why it skips)';
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const skippedSuites: string[] = [];
    /** Single tests skipped with a note (`context.skip(note)`, e.g. a store contract case a store declares it does not run). */
    const skippedTests: string[] = [];
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
      if (allSkipped(module.children.allTests())) skippedSuites.push(`${file}: ${this.reasonOf(module)}`);
      else {
        skippedTests.push(...notedSkips(module, file));
        for (const suite of module.children.allSuites()) {
          if (allSkipped(suite.children.allTests()) && !parentSkipped(suite)) {
            skippedSuites.push(`${file} > ${suite.fullName}: ${this.reasonOf(module, suite)}`);
          }
        }
      }
    }
    if (skippedSuites.length > 0) {
      console.log(
        `\nSkipped suites (a test peer or data set was missing), each with its reason:\n${skippedSuites.map((s) => `  - ${s}`).join('\n')}`,
      );
    }
    if (skippedTests.length > 0) {
      console.log(
        `\nSkipped tests, each with its reason:\n${skippedTests.map((s) => `  - ${s}`).join('\n')}`,
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

/** `file > test: note` for each test skipped with a note whose suite ran other tests. */
function notedSkips(module: TestModule, file: string): string[] {
  const noted: string[] = [];
  for (const test of module.children.allTests()) {
    const result = test.result();
    if (result.state !== 'skipped' || !('note' in result) || !result.note) continue;
    if (test.parent.type === 'suite' && allSkipped(test.parent.children.allTests())) continue;
    noted.push(`${file} > ${test.fullName}: ${result.note}`);
  }
  return noted;
}
