import { ALL, type SummaryRow } from './eval-summary.ts';

/**
 * The summary as a plain-text table for a terminal (no colors, so it reads the same in a log):
 * counts, `n/m` where a column has its own denominator, percentages for rates.
 */
export function formatTable(rows: readonly SummaryRow[]): string {
  const header = [
    'category',
    'mistake',
    'runs',
    'completed',
    '1st retry',
    'clarified',
    'capped',
    'failed',
    'hint acc',
    'correct',
    'median ms',
  ];
  const body = rows.map((row) => [
    row.category,
    row.kind,
    String(row.runs),
    String(row.completed),
    row.withFailure > 0 ? `${row.firstRetry}/${row.withFailure}` : '-',
    String(row.clarified),
    String(row.capped),
    String(row.failed),
    row.hintExpected > 0 ? percent(row.hintAccurate, row.hintExpected) : '-',
    percent(row.correct, row.runs),
    row.medianMs.toFixed(1),
  ]);
  const widths = header.map((title, i) => Math.max(title.length, ...body.map((cells) => cells[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  const out = [line(header), rule];
  rows.forEach((row, index) => {
    out.push(line(body[index]!));
    // A rule under each category's total.
    if (row.kind === ALL && index < rows.length - 1) out.push(rule);
  });
  return `${out.join('\n')}\n`;
}

export function percent(part: number, whole: number): string {
  return whole === 0 ? '-' : `${((100 * part) / whole).toFixed(1)}%`;
}
