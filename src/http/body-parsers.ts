// Registers the only body formats Canon reads (DESIGN §4); Fastify's text/plain parser is removed, anything else is 415.
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/config.js';
import { AppError } from '../errors/app-error.js';
import { parseFormBody, parseJsonBody } from './json-body.js';

export function registerBodyParsers(app: FastifyInstance, config: Config): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, parseJsonBody(body as string, config.jsonMaxDepth));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  // RFC 7396 merge patches are PATCH bodies; on any other method the type is unsupported.
  app.addContentTypeParser('application/merge-patch+json', { parseAs: 'string' }, (req, body, done) => {
    if (req.method !== 'PATCH') {
      done(new AppError('UNSUPPORTED_MEDIA_TYPE', 'application/merge-patch+json is accepted on PATCH only.'), undefined);
      return;
    }
    try {
      done(null, parseJsonBody(body as string, config.jsonMaxDepth));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (req, body, done) => {
    try {
      req.bodyFormat = 'form';
      done(null, parseFormBody(body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
}
