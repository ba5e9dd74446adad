// Registers the only body formats Canon reads (DESIGN §4): UTF-8 JSON, merge patches on PATCH, and forms; anything else is 415.
import type { FastifyInstance } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import type { Config } from '../../config/config.js';
import { AppError } from '../../errors/app-error.js';
import { parseFormBody, parseJsonBody } from './json-body.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The body as text, or the reason it is not text we read. JSON is UTF-8 (RFC 8259 §8.1) and so are our forms:
 * a `charset` other than UTF-8 is 415, not read as UTF-8 anyway; a content coding (gzip, br, …) is 415 with
 * `Accept-Encoding: identity` (RFC 9110 §15.5.16, §12.5.3) rather than decompressed, which keeps the 1 MiB
 * limit a limit on what is parsed; bytes that are not UTF-8 are 400, not replaced with U+FFFD and stored.
 */
export function bodyText(headers: IncomingHttpHeaders, body: Buffer, invalid: 'INVALID_JSON' | 'BAD_REQUEST'): string {
  const coding = headers['content-encoding'];
  if (coding !== undefined && coding.trim().toLowerCase() !== 'identity') {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', `The content coding ${JSON.stringify(coding)} is not supported: send the body uncompressed.`, {
      headers: { 'accept-encoding': 'identity' },
    });
  }
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)"?/i.exec(headers['content-type'] ?? '')?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', `The charset ${JSON.stringify(charset)} is not supported: bodies are UTF-8.`);
  }
  try {
    return utf8.decode(body);
  } catch {
    throw new AppError(invalid, 'The body is not valid UTF-8.');
  }
}

export function registerBodyParsers(app: FastifyInstance, config: Config): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => {
    try {
      done(null, parseJsonBody(bodyText(req.headers, body as Buffer, 'INVALID_JSON'), config.jsonMaxDepth));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  // RFC 7396 merge patches are PATCH bodies; on any other method the type is unsupported.
  app.addContentTypeParser('application/merge-patch+json', { parseAs: 'buffer' }, (req, body, done) => {
    if (req.method !== 'PATCH') {
      done(new AppError('UNSUPPORTED_MEDIA_TYPE', 'application/merge-patch+json is accepted on PATCH only.'), undefined);
      return;
    }
    try {
      done(null, parseJsonBody(bodyText(req.headers, body as Buffer, 'INVALID_JSON'), config.jsonMaxDepth));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, (req, body, done) => {
    try {
      req.bodyFormat = 'form';
      done(null, parseFormBody(bodyText(req.headers, body as Buffer, 'BAD_REQUEST')));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
}
