// Idempotency-Key rules (spec §4 Idempotent creation; only with --write): replay, 422 on a different body, one object under concurrency.
import { randomUUID } from 'node:crypto';
import type { Evidence, Exchange } from '../types.js';
import { fail, isObject, notApplicable, pass, seen } from '../verdict.js';
import { create, onWritable, remove, variant } from '../writes.js';
import type { Rule } from './rule.js';

const SECTION = 'spec §4 Idempotent creation';

/** The object an answer is about: its Location, else its id. */
const identity = (x: Exchange): string | undefined => x.headers.location ?? (isObject(x.json) && x.json.id !== undefined ? String(x.json.id) : undefined);

export const replay: Rule = {
  id: 'idempotency.replay',
  title: 'A POST repeated with the same Idempotency-Key returns the stored answer and creates nothing new',
  section: SECTION,
  needs: 'write',
  run: (ctx) =>
    onWritable(ctx, async ({ collection: c, template }) => {
      const key = randomUUID();
      const body = variant(template);
      const first = await create(ctx, c, body, { 'idempotency-key': key }, 'idempotency.replay (first)');
      const second = await create(ctx, c, body, { 'idempotency-key': key }, 'idempotency.replay (repeat)');
      const evidence: Evidence[] = [
        seen(first.x, `Idempotency-Key ${key}: ${identity(first.x) ?? 'no id'}`),
        seen(
          second.x,
          `same key, same body: ${identity(second.x) ?? 'no id'}${second.x.headers['idempotent-replayed'] ? `, Idempotent-Replayed: ${second.x.headers['idempotent-replayed']}` : ''}`,
        ),
      ];
      for (const u of [first.url, second.url]) if (u) await remove(ctx, u);
      if (first.x.status >= 300) return notApplicable(`the first POST answered ${first.x.status}`, evidence);
      if (second.x.status !== first.x.status) return fail(`the repeat answered ${second.x.status}, the first ${first.x.status}`, evidence);
      if (identity(first.x) !== identity(second.x)) return fail('the repeat created a second object', evidence);
      return pass('the repeat returned the stored answer', evidence);
    }),
};

export const mismatch: Rule = {
  id: 'idempotency.mismatch',
  title: 'The same Idempotency-Key with a different body answers 422',
  section: SECTION,
  needs: 'write',
  run: (ctx) =>
    onWritable(ctx, async ({ collection: c, template }) => {
      const key = randomUUID();
      const first = await create(ctx, c, variant(template), { 'idempotency-key': key }, 'idempotency.mismatch (first)');
      const other = await create(ctx, c, variant(template), { 'idempotency-key': key }, 'idempotency.mismatch (different body)');
      const evidence = [seen(first.x, `Idempotency-Key ${key}`), seen(other.x, 'same key, another body')];
      for (const u of [first.url, other.url]) if (u) await remove(ctx, u);
      if (first.x.status >= 300) return notApplicable(`the first POST answered ${first.x.status}`, evidence);
      return other.x.status === 422 ? pass('422 for a reused key', evidence) : fail(`a reused key with another body answered ${other.x.status}, not 422`, evidence);
    }),
};

export const inFlight: Rule = {
  id: 'idempotency.in-flight',
  title: 'Two concurrent POSTs with one Idempotency-Key create one object: the second is 409 (in flight) or a replay',
  section: `${SECTION} (a repeat does not repeat the side effect); DESIGN §11 (409 while the first is in flight)`,
  needs: 'write',
  run: (ctx) =>
    onWritable(ctx, async ({ collection: c, template }) => {
      const key = randomUUID();
      const body = variant(template);
      const [a, b] = await Promise.all([
        create(ctx, c, body, { 'idempotency-key': key }, 'idempotency.in-flight (a)'),
        create(ctx, c, body, { 'idempotency-key': key }, 'idempotency.in-flight (b)', false),
      ]);
      const evidence = [seen(a.x, identity(a.x) ?? 'no id'), seen(b.x, identity(b.x) ?? 'no id')];
      for (const u of [a.url, b.url]) if (u) await remove(ctx, u);
      const ok = [a.x, b.x].filter((x) => x.status < 300);
      if (ok.length === 0) return notApplicable(`both answered ${a.x.status}/${b.x.status}`, evidence);
      if (ok.length === 2 && identity(a.x) !== identity(b.x)) return fail('two objects were created for one key', evidence);
      const conflict = [a.x, b.x].find((x) => x.status === 409);
      if (conflict) return pass('the second was refused with 409 while the first was in flight', evidence);
      if (ok.length === 2) return pass('the second was a replay (the first had finished: in-flight 409 not observed)', evidence);
      return fail(`the second answered ${[a.x, b.x].find((x) => x.status >= 300)!.status}, neither 409 nor a replay`, evidence);
    }),
};
