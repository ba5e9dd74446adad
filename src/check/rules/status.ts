// Status-code rules (spec §7 Status codes, §5 Status codes for authentication): 404, 400, 406 and 401 where they belong.
import { missingId, samples } from '../samples.js';
import { fail, notApplicable, pass, seen } from '../verdict.js';
import { perCollection, type Rule } from './rule.js';

export const notFound: Rule = {
  id: 'status.not-found',
  title: 'An unknown id and an unknown path answer 404',
  section: 'spec §7 Status codes (404 Not Found)',
  run: perCollection(async (ctx, c) => {
    const missing = await samples.missingItem(ctx, c);
    const route = await samples.missingRoute(ctx, c);
    // With no item anywhere the id's form is a guess (a UUID): a 400 for a malformed id is then a fair answer.
    const guessed = missingId(ctx, c).guessed;
    const evidence = [seen(missing, guessed ? 'an id of a guessed form (no item shows the real one)' : 'an id no object has'), seen(route, 'a path no route serves')];
    const wrong = [missing, route].filter((x) => x.status !== 404 && !(x === missing && guessed && x.status === 400));
    return wrong.length ? fail(wrong.map((x) => `${x.url.pathname} answered ${x.status}, not 404`).join('; '), evidence) : pass('both answered 404', evidence);
  }),
};

export const badRequest: Rule = {
  id: 'status.bad-request',
  title: 'A malformed query value (a page size that is not a number) answers 400',
  section: 'spec §7 Status codes (400 Bad Request: invalid syntax or data)',
  run: perCollection(async (ctx, c) => {
    const x = await samples.badQuery(ctx, c);
    const evidence = [seen(x, x.status === 200 ? 'the value was ignored' : `answered ${x.status}`)];
    return x.status === 400 ? pass('400 for a malformed query value', evidence) : fail(`answered ${x.status}, not 400`, evidence);
  }),
};

export const notAcceptable: Rule = {
  id: 'status.not-acceptable',
  title: 'An Accept header that allows no format the API produces answers 406 (or is disregarded), never another error',
  section: 'spec §1 (requests declare the desired format with Accept); RFC 9110 §12.5.1 and §15.5.7; DESIGN §4 (406)',
  run: perCollection(async (ctx, c) => {
    const x = await samples.notAcceptable(ctx, c);
    const evidence = [seen(x, `Accept: image/png → Content-Type: ${x.headers['content-type'] ?? 'none'}`)];
    if (x.status === 406) return pass('406 for Accept: image/png', evidence);
    // RFC 9110 §12.5.1 lets a server disregard Accept and send its default format: no negotiation to judge.
    if (x.status >= 200 && x.status < 300) return notApplicable(`Accept is disregarded (${x.status} with the default format, which RFC 9110 §12.5.1 allows)`, evidence);
    return fail(`answered ${x.status}, neither 406 nor the default format`, evidence);
  }),
};

export const unauthorized: Rule = {
  id: 'status.unauthorized',
  title: 'A request without the credentials given with --header answers 401 (unless the collection is public)',
  section: 'spec §5 Status codes for authentication (credentials missing or invalid: 401)',
  run: perCollection(async (ctx, c) => {
    if (ctx.options.headers.length === 0) return notApplicable('no --header given: the checker has no credentials to leave out');
    const x = await samples.anonymous(ctx, c);
    const evidence = [seen(x, 'sent without the --header values')];
    if (x.status === 401) return pass('401 without credentials', evidence);
    if (x.status === 200) return notApplicable('the collection answers anonymous reads (public)', evidence);
    return fail(`answered ${x.status} without credentials, not 401${x.status === 403 ? ' (403 means authenticated but not allowed)' : ''}`, evidence);
  }),
};
