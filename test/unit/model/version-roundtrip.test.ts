// Issue 16: for every resource of the reference API, v1's change modules are inverse on every field they touch (property tests with generated objects).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { commerce } from '../../../examples/commerce/index.js';
import { compileModel, type CompiledResource } from '../../../src/model/compile.js';
import { translateDown, translatePathDown, translatePathUp, translateUp } from '../../../src/model/versions.js';
import { renderedIn } from '../../../src/query/versioned-query.js';

const model = compileModel(commerce);
const v1 = model.versions.find((v) => v.name === 'v1')!;

const money = fc.record({ amount: fc.integer({ min: 0, max: 1e12 }), currency: fc.constantFrom('EUR', 'USD', 'JPY') }, { noNullPrototype: true });
const scalar = fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.boolean(), fc.constant(null));

/** A newest-shape view of `r`: every rendered field, money as {amount, currency} or null. */
function newestView(r: CompiledResource): fc.Arbitrary<Record<string, unknown>> {
  const fields = Object.fromEntries(r.rendered.map((name) => [name, r.stored.find(([n]) => n === name)?.[1].type === 'money' ? fc.option(money, { nil: null }) : scalar]));
  return fc.record(fields, { noNullPrototype: true }) as fc.Arbitrary<Record<string, unknown>>;
}

/** The fields a read-only nest leads to: clients never write them, so bodies do not carry them up. */
function readOnlyTargets(resource: string): Set<string> {
  const out = new Set<string>();
  for (let v = v1; v.newer; v = v.newer)
    for (const c of v.changesToNext) if (c.resource === resource) for (const m of c.fields) if ('nest' in m && m.nest.readOnly) out.add(m.nest.into);
  return out;
}

describe('v1 ↔ v2 of the reference API, every resource', () => {
  for (const r of model.resources.values()) {
    if (r.def.internal) continue;
    const readOnly = readOnlyTargets(r.name);

    it(`${r.name}: a v2 object shown in v1 and sent back in v1 is the same v2 object`, () => {
      fc.assert(
        fc.property(newestView(r), (view) => {
          const writable = Object.fromEntries(Object.entries(view).filter(([k]) => !readOnly.has(k)));
          assert.deepEqual(translateUp(v1, r.name, translateDown(v1, r.name, writable)), writable);
        }),
        { numRuns: 200 },
      );
    });

    it(`${r.name}: v1 shows exactly the fields v1 renders, and a v1 body goes up and back down unchanged`, () => {
      const names = [...renderedIn(v1, r)].sort();
      fc.assert(
        fc.property(newestView(r), (view) => {
          const old = translateDown(v1, r.name, view);
          assert.deepEqual(Object.keys(old).sort(), names);
          const sent = Object.fromEntries(Object.entries(old).filter(([k]) => !readOnly.has(translatePathUp(v1, r.name, k)?.split('.')[0] ?? k)));
          assert.deepEqual(translateDown(v1, r.name, translateUp(v1, r.name, sent)), sent);
        }),
        { numRuns: 200 },
      );
    });

    it(`${r.name}: every v1 field name goes up to a v2 path and back to itself`, () => {
      for (const name of renderedIn(v1, r)) {
        const up = translatePathUp(v1, r.name, name);
        assert.ok(up !== undefined, name);
        assert.equal(translatePathDown(v1, r.name, up), name, `${name} → ${up}`);
      }
    });
  }

  it('the modules touch what DESIGN §10 says, and nothing else', () => {
    assert.deepEqual([...renderedIn(v1, model.resources.get('products')!)].filter((n) => !model.resources.get('products')!.rendered.includes(n)).sort(), [
      'currency',
      'price_cents',
    ]);
    assert.deepEqual([...renderedIn(v1, model.resources.get('orders')!)].filter((n) => !model.resources.get('orders')!.rendered.includes(n)).sort(), ['currency', 'total_cents']);
    assert.deepEqual(
      [...renderedIn(v1, model.resources.get('users')!)].filter((n) => !model.resources.get('users')!.rendered.includes(n)),
      ['name'],
    );
    for (const name of ['order-items', 'reviews']) assert.deepEqual([...renderedIn(v1, model.resources.get(name)!)], model.resources.get(name)!.rendered, name);
  });
});
