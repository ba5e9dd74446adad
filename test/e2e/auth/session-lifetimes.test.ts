// Each session lifetime policy expires exactly when configured (idle 60 s, absolute 300 s), on a fake clock.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { SessionPolicy } from '../../../src/auth/session-policy.js';
import { createCustomer, FakeClock, MODES, startServer, type Mode, type TestServer } from '../../support/harness.js';
import { Browser } from './browser.js';

const IDLE = 60;
const ABSOLUTE = 300;

async function setup(mode: Mode, policy: SessionPolicy): Promise<{ server: TestServer; clock: FakeClock; browser: Browser }> {
  const clock = new FakeClock();
  const server = await startServer(mode, { sessionPolicy: policy, sessionIdleSeconds: IDLE, sessionAbsoluteSeconds: ABSOLUTE }, undefined, clock);
  await createCustomer(server, 'life@example.com');
  const browser = new Browser(server);
  const login = await browser.login('life@example.com', 'long enough password');
  assert.equal(login.status, 201);
  return { server, clock, browser };
}

/** Moves the clock and makes one authenticated request; returns its status. */
async function at(env: { clock: FakeClock; browser: Browser }, seconds: number): Promise<number> {
  env.clock.advance(seconds);
  return (await env.browser.request('GET', '/v2/sessions/current')).status;
}

for (const mode of MODES.filter((m) => m.startsWith('inject')))
  describe(`session lifetime policies (${mode})`, () => {
    const servers: TestServer[] = [];
    after(async () => {
      for (const s of servers) await s.close();
    });

    it('absolute: ends 300 s after login, however active, and not before', async () => {
      const env = await setup(mode, 'absolute');
      servers.push(env.server);
      const login = await env.browser.request('GET', '/v2/sessions/current');
      assert.equal(login.setCookies.length, 0, 'an absolute session is not renewed');
      assert.equal(await at(env, 200), 200, 'no idle timeout');
      assert.equal(await at(env, 99), 200);
      assert.equal(await at(env, 1), 401);
    });

    it('idle: ends 60 s after the last use, however old', async () => {
      const env = await setup(mode, 'idle');
      servers.push(env.server);
      for (let i = 0; i < 8; i++) assert.equal(await at(env, 59), 200, `use ${i}`);
      assert.equal(await at(env, 59.999), 200);
      assert.equal(await at(env, 60), 401);
    });

    it('sliding: the whole 300 s lifetime starts again at each use', async () => {
      const env = await setup(mode, 'sliding');
      servers.push(env.server);
      assert.equal(await at(env, 299), 200);
      const renewed = await env.browser.request('GET', '/v2/sessions/current');
      assert.match(renewed.setCookies[0] ?? '', /Max-Age=300;/);
      assert.equal(await at(env, 299), 200);
      assert.equal(await at(env, 300), 401);
    });

    it('absolute+idle: whichever comes first', async () => {
      const idle = await setup(mode, 'absolute+idle');
      servers.push(idle.server);
      assert.equal(await at(idle, 60), 401, 'idle ends it');
      const env = await setup(mode, 'absolute+idle');
      servers.push(env.server);
      for (let i = 0; i < 5; i++) assert.equal(await at(env, 50), 200);
      // t = 250: the cookie's Max-Age is what is left, min(300 - 250, 60).
      const renewed = await env.browser.request('GET', '/v2/sessions/current');
      assert.match(renewed.setCookies[0] ?? '', /Max-Age=50;/);
      assert.equal(await at(env, 49), 200);
      assert.equal(await at(env, 1), 401, 'absolute ends it at 300 s despite activity');
    });
  });
