// Keeps one process.nextTick record alive for the life of the process, so that V8 keeps the shapes Node gives them.
import { executionAsyncResource } from 'node:async_hooks';

let kept: object | undefined;
let scheduled = false;

/**
 * Node builds every nextTick record as an object literal keyed by symbols (`lib/internal/process/task_queues.js`),
 * and V8 links those shapes from the empty object's shape only weakly. When a full garbage collection finds no record
 * alive (an idle process, between its timers) the shapes die and the next record gets new ones; after a few such rounds
 * the literal's inline cache is megamorphic for good, and every record (several per HTTP request) is built through the
 * runtime (`Runtime_DefineKeyedOwnPropertyInLiteral`, map transitions). Measured: Canon processes that sat idle about
 * 20 s after their start served GET by id at 25,000–30,000 instead of 35,000–44,000 req/s, and every other request
 * 20–40 % slower too (docs/BENCHMARKS.md, sixth pass). One record kept alive keeps its shapes, and the cache stays
 * monomorphic. Called by every role at start (openCore); later calls do nothing.
 */
export function keepTickObjectShape(): void {
  if (scheduled) return;
  scheduled = true;
  process.nextTick(() => {
    kept = executionAsyncResource();
  });
}

/** The record kept (undefined until the first tick after keepTickObjectShape ran): for tests. */
export function keptTickObject(): object | undefined {
  return kept;
}
