// The embedded worker's pacer: rounds wait only while requests' writes saturate the loop, and never stop altogether.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BackgroundPacer } from '../../../src/runtime/background-pacer.js';

/** A pacer whose samples are driven by the test: `load` is the utilisation the next sample sees. */
function pacer(floorMs = 200): { p: BackgroundPacer; load: { value: number } } {
  const load = { value: 0 };
  const p = new BackgroundPacer({ busyAbove: 0.9, sampleMs: 60_000, floorMs }, Date.now, () => load.value);
  return { p, load };
}

describe('BackgroundPacer', () => {
  it('a saturated loop without writes of this process is the worker’s own: never paced', async () => {
    const { p, load } = pacer();
    load.value = 1;
    p.sample();
    assert.equal(p.busy, false);
    const t = Date.now();
    for (let i = 0; i < 5; i++) await p.wait();
    assert.ok(Date.now() - t < 50);
    p.stop();
  });

  it('writes on a loop below the threshold: not paced', () => {
    const { p, load } = pacer();
    load.value = 0.85;
    p.noteWrite();
    p.sample();
    assert.equal(p.busy, false);
    p.stop();
  });

  it('writes on a saturated loop: the first round starts at once, the next waits for the floor interval', async () => {
    const { p, load } = pacer(200);
    load.value = 0.95;
    p.noteWrite();
    p.sample();
    assert.equal(p.busy, true);
    const t = Date.now();
    await p.wait();
    assert.ok(Date.now() - t < 50, 'the first round is not held');
    await p.wait();
    const waited = Date.now() - t;
    assert.ok(waited >= 190 && waited < 1000, `the second round waited ${waited} ms`);
    p.stop();
  });

  it('a wait ends early when the load drops, and the windows count writes afresh', async () => {
    const { p, load } = pacer(10_000);
    load.value = 1;
    p.noteWrite();
    p.sample();
    await p.wait();
    const t = Date.now();
    const held = p.wait();
    setTimeout(() => {
      // The next window: still saturated, but no write of this process in it.
      p.sample();
    }, 150);
    await held;
    const waited = Date.now() - t;
    assert.ok(waited >= 140 && waited < 2000, `released after ${waited} ms`);
    assert.equal(p.busy, false);
    p.stop();
  });
});
