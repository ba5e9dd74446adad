// The process logger (pino, JSON lines on stdout). Fastify's own per-request logger is off: it costs a third of a GET.
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** Request headers that carry credentials: whatever object a log line holds them in, pino writes `[REDACTED]`. */
const CREDENTIAL_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key', 'x-csrf-token'];

/** `headers.x`, `req.headers.x` and `a.b.headers.x`: pino's redaction (fast-redact) needs each depth spelled out. */
const REDACT_PATHS = CREDENTIAL_HEADERS.flatMap((h) => [`headers["${h}"]`, `*.headers["${h}"]`, `*.*.headers["${h}"]`]);

export function createLogger(level: string, enabled = true, destination?: DestinationStream): Logger {
  const options = { level: enabled ? level : 'silent', base: { service: 'canon' }, redact: { paths: REDACT_PATHS, censor: '[REDACTED]' } };
  return destination ? pino(options, destination) : pino(options);
}
