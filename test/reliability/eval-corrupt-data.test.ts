/**
 * Issue 12, defect 7: `toolwarden eval bfcl` reported success on corrupt data (every line broken,
 * binary garbage, an empty file, a JSON array, answers for other ids: exit 0 and an empty table;
 * one line in three broken: a third of the entries silently dropped). It now names the load
 * problems and fails when nothing ran or more than 5% of the entries were dropped. The data here
 * is made up in BFCL's shape, in a temp folder.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { EvalOptionError } from '../../bfcl/eval/run-eval.ts';
import { evalBfclCommand } from '../../cli/eval-bfcl.ts';

const ENTRIES = 'BFCL_v4_live_simple.json';
const ANSWERS = 'possible_answer/BFCL_v4_live_simple.json';
const ids = Array.from({ length: 30 }, (_, i) => `live_simple_${i}-0-0`);
const entryLine = (id: string) =>
  JSON.stringify({
    id,
    question: [[{ role: 'user', content: 'What is the weather in Paris?' }]],
    function: [
      {
        name: 'get_weather',
        description: 'Current weather of a city',
        parameters: {
          type: 'dict',
          required: ['city'],
          properties: { city: { type: 'string', description: 'City name' } },
        },
      },
    ],
  });
const answerLine = (id: string) =>
  JSON.stringify({ id, ground_truth: [{ get_weather: { city: ['Paris'] } }] });

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function evalOn(entries: string, answers: string, category = 'live_simple') {
  const dir = await mkdtemp(join(tmpdir(), 'tw-corrupt-'));
  dirs.push(dir);
  await mkdir(join(dir, 'possible_answer'));
  await writeFile(join(dir, ENTRIES), entries);
  await writeFile(join(dir, ANSWERS), answers);
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let errText = '';
  stderr.on('data', (chunk) => {
    errText += String(chunk);
  });
  stdout.resume();
  const { exitCode } = await evalBfclCommand(
    { category, data: dir, limit: 'all', json: join(dir, 'report.json') },
    { stdout, stderr },
  );
  return { exitCode, stderr: errText };
}

const goodEntries = ids.map(entryLine).join('\n');
const goodAnswers = ids.map(answerLine).join('\n');

describe('toolwarden eval bfcl on corrupt data', () => {
  it('passes on healthy data (the fixture is sound)', async () => {
    const { exitCode, stderr } = await evalOn(goodEntries, goodAnswers);
    expect(stderr).not.toContain('failed');
    expect(exitCode).toBe(0);
  });

  it.each([
    ['every line broken', ids.map((id) => entryLine(id).slice(0, 40)).join('\n')],
    ['binary garbage', '\u0000\u0001\u00ff\u00fe garbage \u0002\n\u0003\u0004'],
    ['an empty file', ''],
    [
      'a JSON array instead of JSON Lines',
      JSON.stringify(
        ids.map((id) => JSON.parse(entryLine(id))),
        null,
        2,
      ),
    ],
  ])('fails when the entries are %s, saying nothing ran', async (_, entries) => {
    const { exitCode, stderr } = await evalOn(entries, goodAnswers);
    expect(exitCode).toBe(1);
    expect(stderr).toContain('failed: nothing ran');
  });

  it('fails when the answers are for other ids', async () => {
    const others = ids.map((id) => answerLine(`${id}-other`)).join('\n');
    const { exitCode, stderr } = await evalOn(goodEntries, others);
    expect(exitCode).toBe(1);
    expect(stderr).toContain('data problem');
  });

  it('fails, naming the broken lines, when one line in three is broken', async () => {
    const entries = ids.map((id, i) => (i % 3 === 0 ? entryLine(id).slice(0, 30) : entryLine(id))).join('\n');
    const { exitCode, stderr } = await evalOn(entries, goodAnswers);
    expect(exitCode).toBe(1);
    expect(stderr).toContain(`${ENTRIES}:1: not JSON`);
    expect(stderr).toContain('10 of 30 entries could not be loaded');
  });

  it('refuses a category list that names no category', async () => {
    await expect(evalOn(goodEntries, goodAnswers, ',')).rejects.toBeInstanceOf(EvalOptionError);
  });
});
