// Overload protection with @fastify/under-pressure: when the event loop lags or the heap is nearly full, 503 with Retry-After.
import underPressure from '@fastify/under-pressure';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { getHeapStatistics } from 'node:v8';
import type { Config } from '../../config/config.js';
import { AppError } from '../../errors/app-error.js';

/** Liveness and readiness must answer under pressure too, or a slow process would be restarted rather than relieved. */
const EXEMPT = new Set(['/healthz', '/readyz']);

export async function registerOverload(app: FastifyInstance, config: Config): Promise<void> {
  const o = config.overload;
  const heapLimit = o.maxHeapUsedBytes ?? Math.floor(getHeapStatistics().heap_size_limit * 0.9);
  await app.register(underPressure, {
    // 0 turns the event-loop check off (under-pressure skips a zero limit): CANON_MAX_EVENT_LOOP_DELAY_MS=0, and
    // every test not about overload. A sample in which the loop never ticked (a stall spanning it) has no mean,
    // which under-pressure reads as an infinite delay: with the check on, such a stall trips it whatever the limit.
    maxEventLoopDelay: o.maxEventLoopDelayMs,
    maxHeapUsedBytes: heapLimit,
    sampleInterval: o.sampleIntervalMs,
    pressureHandler: async (request: FastifyRequest, _reply, type: string) => {
      if (EXEMPT.has(request.url.split('?')[0]!)) return;
      // Answering at once with 503 sheds load; a request that waited would time out anyway.
      throw new AppError('SERVICE_UNAVAILABLE', `The server is overloaded (${type}); retry later.`, { headers: { 'retry-after': String(o.retryAfterSeconds) } });
    },
  });
}
