// Building verdicts: one per collection probed, combined into the rule's result (any fail wins, then error, then pass).
import { describe, ProbeError } from './probe.js';
import type { Evidence, Exchange, Status, Verdict } from './types.js';

export const pass = (summary: string, evidence: Evidence[] = []): Verdict => ({ status: 'pass', summary, evidence });
export const fail = (summary: string, evidence: Evidence[] = []): Verdict => ({ status: 'fail', summary, evidence });
export const notApplicable = (summary: string, evidence: Evidence[] = []): Verdict => ({ status: 'not-applicable', summary, evidence });

/** One evidence line for an exchange. */
export function seen(x: Exchange, note: string): Evidence {
  return { request: describe(x.method, x.url), status: x.status, note };
}

/** A thrown ProbeError is the checker's trouble: `error`, with the request it was making. Anything else is a bug. */
export function errorVerdict(err: unknown): Verdict {
  if (err instanceof ProbeError) return { status: 'error', summary: err.message, evidence: [{ request: err.request, note: err.message }] };
  return { status: 'error', summary: `checker error: ${err instanceof Error ? err.message : String(err)}`, evidence: [] };
}

/** Runs `fn`, turning what it throws into an `error` verdict. */
export async function guarded(fn: () => Promise<Verdict>): Promise<Verdict> {
  try {
    return await fn();
  } catch (err) {
    return errorVerdict(err);
  }
}

const RANK: Record<Status, number> = { fail: 3, error: 2, pass: 1, 'not-applicable': 0 };

/** The rule's verdict from its per-collection verdicts; the summary is that of the deciding ones. */
export function combine(parts: Array<{ label: string; verdict: Verdict }>): Verdict {
  if (parts.length === 0) return notApplicable('no collection was found to probe (give --path or --openapi)');
  const worst = parts.reduce((a, b) => (RANK[b.verdict.status] > RANK[a.verdict.status] ? b : a)).verdict.status;
  const deciding = parts.filter((p) => p.verdict.status === worst);
  const summary = parts.length === 1 ? deciding[0]!.verdict.summary : deciding.map((p) => `${p.label}: ${p.verdict.summary}`).join('; ');
  return { status: worst, summary, evidence: parts.flatMap((p) => p.verdict.evidence) };
}

/** Header value as a number, when it is a non-negative integer. */
export function intHeader(x: Exchange, name: string): number | undefined {
  const v = x.headers[name];
  return v !== undefined && /^\d+$/.test(v.trim()) ? Number(v.trim()) : undefined;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
