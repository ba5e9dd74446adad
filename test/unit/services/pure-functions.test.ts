// Table tests of the services' pure functions: RFC 7396 merge patches, grants, and scopes (issue 14.8).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Principal } from '../../../src/model/principal.js';
import { applyMergePatch } from '../../../src/services/merge-patch.js';
import { grantFor, none, scopeAllows } from '../../../src/services/permissions.js';

describe('applyMergePatch (RFC 7396 appendix A)', () => {
  const cases: Array<[unknown, unknown, unknown]> = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  for (const [target, patch, expected] of cases) {
    it(`${JSON.stringify(target)} + ${JSON.stringify(patch)} = ${JSON.stringify(expected)}`, () => assert.deepEqual(applyMergePatch(target, patch), expected));
  }
});

describe('grantFor and scopeAllows', () => {
  const as = (role: string, userId: string | null = 'u1'): Principal => ({ kind: 'api_key', credentialId: 'k', userId, role, scopes: [] });
  const grants: Array<[string, Principal, string[], { all: boolean; owner: boolean }]> = [
    ['an admin under an admin grant', as('admin'), ['admin'], { all: true, owner: false }],
    ['a customer under an owner grant', as('customer'), ['admin', 'owner'], { all: false, owner: true }],
    ['a customer under an admin-only grant', as('customer'), ['admin'], { all: false, owner: false }],
    ['anyone under authenticated', as('customer'), ['authenticated'], { all: true, owner: false }],
    ['an admin key bound to no user under owner', as('admin', null), ['owner'], { all: false, owner: false }],
  ];
  for (const [name, principal, list, expected] of grants) {
    it(name, () => {
      const g = grantFor(principal, list);
      assert.deepEqual({ all: g.all, owner: g.owner }, expected);
      assert.equal(none(g), !expected.all && !expected.owner);
    });
  }
  const scopes: Array<[string[], string, 'read' | 'write', boolean]> = [
    [[], 'products', 'write', true],
    [['*'], 'orders', 'write', true],
    [['products:read'], 'products', 'read', true],
    [['products:read'], 'products', 'write', false],
    [['products:write'], 'products', 'read', true],
    [['orders:write'], 'products', 'read', false],
  ];
  for (const [held, resource, access, expected] of scopes) {
    it(`scopes ${JSON.stringify(held)} ${expected ? 'allow' : 'refuse'} ${resource}:${access}`, () => assert.equal(scopeAllows(held, resource, access), expected));
  }
});
