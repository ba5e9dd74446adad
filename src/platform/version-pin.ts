// The `api_version` pin of a credential (API keys, OAuth clients): the version a date-selecting server serves it when a request names none (DESIGN §10).
import { AppError } from '../errors/app-error.js';
import { f } from '../model/define.js';

/** The field, as API keys and OAuth clients declare it. */
export function versionPinField(): ReturnType<typeof f.string> {
  return f.string({
    pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$',
    description:
      'The release date of the API version this credential is pinned to (the current one at creation); with CANON_VERSIONING=date its requests that name no version are served in it.',
  });
}

/** Refuses a pin that is not the release date of a version served (422 on `api_version`). */
export function checkVersionPin(values: Record<string, unknown>, versionDates: readonly string[], what: string): void {
  const pin = values.api_version;
  if (pin === undefined || pin === null || versionDates.includes(String(pin))) return;
  throw new AppError('VALIDATION_ERROR', `The ${what} is not valid.`, {
    details: [{ field: 'api_version', message: `must be one of ${versionDates.join(', ')}`, value: pin }],
  });
}
