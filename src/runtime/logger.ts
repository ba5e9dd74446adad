// The process logger (pino, JSON lines on stdout). Fastify's own per-request logger is off: it costs a third of a GET.
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string, enabled = true): Logger {
  return pino({ level: enabled ? level : 'silent', base: { service: 'canon' } });
}
