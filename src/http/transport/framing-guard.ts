// Requests Node would answer itself with an empty body (no Host, an unknown Expect) get the uniform error body instead.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { AppError } from '../../errors/app-error.js';
import { errorResponse } from '../rendering/error-body.js';
import { requestIdFrom } from './request-id.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

function answer(req: IncomingMessage, res: ServerResponse, err: AppError, fixed: Record<string, string>): void {
  const id = requestIdFrom(req);
  const { status, headers, json } = errorResponse(err, id);
  res.writeHead(status, { ...fixed, ...headers, 'x-request-id': id, 'content-length': String(Buffer.byteLength(json)), connection: 'close' });
  res.end(json);
}

/**
 * The server must be created with `requireHostHeader: false`: this listener then refuses an HTTP/1.1
 * request without `Host` itself (RFC 9112 §3.2: 400), and `checkExpectation` (an `Expect` other than
 * 100-continue, RFC 9110 §10.1.1: 417) is answered here too, both in the DESIGN §5 error shape.
 */
export function guardFraming(server: Server, listener: Listener, fixed: Record<string, string>): Server {
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) {
      answer(req, res, new AppError('BAD_REQUEST', 'An HTTP/1.1 request must carry a Host header (RFC 9112 §3.2).'), fixed);
      return;
    }
    listener(req, res);
  });
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    answer(req, res, new AppError('EXPECTATION_FAILED', `The expectation ${JSON.stringify(req.headers.expect)} is not supported; only 100-continue is.`), fixed);
  });
  return server;
}
