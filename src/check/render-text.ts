// The terminal report: one block per rule (status, id, statement, spec section, evidence), a summary line; colour on a TTY.
import type { Report, Status } from './types.js';

const LABEL: Record<Status, string> = { pass: 'PASS', fail: 'FAIL', 'not-applicable': 'N/A ', error: 'ERR ' };
const COLOUR: Record<Status, string> = { pass: '32', fail: '31', 'not-applicable': '90', error: '33' };
/** Passing rules show this many evidence lines; the others show all of them. */
const PASS_EVIDENCE = 2;

export function renderText(report: Report, colour: boolean): string {
  const paint = (code: string, text: string): string => (colour ? `\u001b[${code}m${text}\u001b[0m` : text);
  const out: string[] = [];
  out.push(`canon check ${report.baseUrl}${report.write ? ' (--write)' : ''}`);
  const d = report.discovery;
  out.push(`  collections: ${d.collections.length ? d.collections.join(', ') : 'none'}${d.openapi ? ` (OpenAPI: ${d.openapi})` : ''}`);
  for (const note of d.notes) out.push(`  note: ${note}`);
  out.push('');
  for (const r of report.rules) {
    out.push(`${paint(COLOUR[r.status], LABEL[r.status])}  ${paint('1', r.id)}  ${r.title}`);
    out.push(`      ${paint('90', r.section)}`);
    out.push(`      ${r.summary}`);
    const shown = r.status === 'pass' ? r.evidence.slice(0, PASS_EVIDENCE) : r.evidence;
    for (const e of shown) out.push(`        ${e.request}${e.status !== undefined ? ` → ${e.status}` : ''}  ${paint('90', e.note)}`);
    if (shown.length < r.evidence.length) out.push(`        ${paint('90', `… ${r.evidence.length - shown.length} more (--json shows all)`)}`);
  }
  if (report.cleanup.length) {
    out.push('', 'cleanup (objects created with --write):');
    for (const e of report.cleanup) out.push(`  ${e.request}${e.status !== undefined ? ` → ${e.status}` : ''}  ${e.note}`);
  }
  const s = report.summary;
  const line = `${s.pass} passed, ${s.fail} failed, ${s['not-applicable']} not applicable, ${s.error} errors — ${report.requests} requests in ${(report.durationMs / 1000).toFixed(1)} s`;
  out.push('', paint(s.fail ? '31;1' : s.error ? '33;1' : '32;1', line));
  return `${out.join('\n')}\n`;
}

/** The JSON report: stable field names for CI (docs/check.md describes them). */
export function renderJson(report: Report): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
