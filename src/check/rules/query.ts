// Filter, sort and fields rules (spec §4 Query parameters for collections, §7 400): an unknown field is 400, never 200 or 500.
import { withQuery } from '../samples.js';
import { fail, pass, seen } from '../verdict.js';
import { perCollection, type Rule } from './rule.js';

/** A field name no API has. */
const UNKNOWN = 'canon_check_no_such_field';

function unknownFieldRule(id: string, param: string, title: string, params: Record<string, string>): Rule {
  return {
    id,
    title,
    section: 'spec §4 Query parameters for collections; §7 Status codes (400: invalid syntax or data; an error is never 200)',
    run: perCollection(async (ctx, c) => {
      const x = await ctx.probe.send('GET', withQuery(c, params));
      const evidence = [seen(x, x.status === 200 ? `the unknown ${param} was ignored` : `answered ${x.status}`)];
      if (x.status === 400) return pass(`an unknown ${param} is refused with 400`, evidence);
      return fail(`an unknown ${param} answered ${x.status}, not 400${x.status >= 500 ? ' (a server error: the field reached the data layer)' : ''}`, evidence);
    }),
  };
}

export const unknownFilter = unknownFieldRule('query.unknown-filter', 'filter field', 'A filter on a field the collection does not have answers 400', { [UNKNOWN]: 'x' });
export const unknownSort = unknownFieldRule('query.unknown-sort', 'sort field', 'sort= on a field the collection does not have answers 400', { sort: UNKNOWN });
export const unknownFields = unknownFieldRule('query.unknown-fields', 'fields entry', 'fields= naming a field the collection does not have answers 400', {
  fields: `id,${UNKNOWN}`,
});
