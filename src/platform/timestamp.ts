import type { Ajv, SchemaValidateFunction } from 'ajv';
import { type TUnsafe, Type } from 'typebox';

const KEYWORD = 'x-timestamp';
const REASON = 'must be an RFC 3339 time such as 2026-11-22T03:05:17.123Z';

/** RFC 3339's date-time: a calendar date, a time (leap second allowed), a fraction and an offset. */
const RFC_3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/**
 * The epoch milliseconds of an RFC 3339 time, or undefined when the text is not one (a 30 February, an
 * hour 24). A leap second (`23:59:60`, with any fraction) is the last millisecond of the minute it
 * lengthens, `23:59:59.999`: JavaScript counts no leap seconds, and this keeps the instant on the day and in
 * the minute its writer meant. Fractions finer than a millisecond are cut off.
 */
export function parseTimestamp(text: unknown): number | undefined {
  if (typeof text !== 'string') return undefined;
  const parts = RFC_3339.exec(text);
  if (!parts) return undefined;
  const [year, month, day, hour, minute, second] = parts.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const offsetHours = Number(parts[10] ?? 0);
  const offsetMinutes = Number(parts[11] ?? 0);
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 60) return undefined;
  if (offsetHours > 23 || offsetMinutes > 59) return undefined;
  // setUTCFullYear, not Date.UTC, which reads the years 0 to 99 as 1900 to 1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  const midnight = date.getTime();
  // Date.UTC rolls 30 February over into March: a date that does not exist does not come back as itself.
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day)
    return undefined;
  const leap = second === 60;
  const millis = leap ? 999 : Number((parts[7] ?? '').padEnd(3, '0').slice(0, 3));
  const offsetMs = (parts[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  return midnight + ((hour * 60 + minute) * 60 + (leap ? 59 : second)) * 1000 + millis - offsetMs;
}

/**
 * A time in a request, written as RFC 3339 text; the handler receives its epoch milliseconds (a number),
 * so no route parses it again, and no text that `Date.parse` cannot read gets past validation.
 */
export function Timestamp(options: { description: string }): TUnsafe<number> {
  return Type.Unsafe<number>({
    [KEYWORD]: true,
    type: 'string',
    format: 'date-time',
    'x-reason': REASON,
    description: options.description,
    example: '2026-11-22T03:05:17.123Z',
  });
}

const DAY_KEYWORD = 'x-time-or-day';
const DAY_REASON = 'must be an RFC 3339 time such as 2026-11-22T03:05:17.123Z, or a day such as 2026-11-22';
const CALENDAR_DAY = /^\d{4}-\d{2}-\d{2}$/;
const LAST_MS_OF_DAY = 86_400_000 - 1;

/**
 * The epoch milliseconds of an RFC 3339 time, or of a calendar day (UTC): its first millisecond for the
 * `start` of a range, its last for the `end`; undefined when the text is neither.
 */
export function parseTimeOrDay(text: unknown, edge: 'start' | 'end'): number | undefined {
  if (typeof text === 'string' && CALENDAR_DAY.test(text)) {
    const midnight = parseTimestamp(`${text}T00:00:00Z`);
    return midnight === undefined || edge === 'start' ? midnight : midnight + LAST_MS_OF_DAY;
  }
  return parseTimestamp(text);
}

/**
 * An edge of a time range in a request: an RFC 3339 time, or a UTC day (the whole of it: from its first
 * millisecond, or to its last). The handler receives epoch milliseconds.
 */
export function TimeOrDay(options: { description: string; edge: 'start' | 'end' }): TUnsafe<number> {
  return Type.Unsafe<number>({
    [DAY_KEYWORD]: options.edge,
    type: 'string',
    'x-reason': DAY_REASON,
    description: `${options.description} An RFC 3339 time, or a UTC day (YYYY-MM-DD).`,
    example: '2026-11-22',
  });
}

/** Teaches an Ajv instance the timestamp keyword: it checks the text and replaces it by epoch milliseconds. */
export function addTimestampKeyword(ajv: Ajv): void {
  const validateEdge: SchemaValidateFunction = (edge: 'start' | 'end', data, _schema, context) => {
    const at = parseTimeOrDay(data, edge);
    if (at === undefined) {
      validateEdge.errors = [{ keyword: DAY_KEYWORD, message: DAY_REASON, params: {} }];
      return false;
    }
    if (context?.parentData !== undefined) {
      (context.parentData as Record<string | number, unknown>)[context.parentDataProperty] = at;
    }
    return true;
  };
  ajv.addKeyword({
    keyword: DAY_KEYWORD,
    type: 'string',
    modifying: true,
    errors: true,
    schemaType: 'string',
    validate: validateEdge,
  });
  const validate: SchemaValidateFunction = (_mode: true, data, _schema, context) => {
    const at = parseTimestamp(data);
    if (at === undefined) {
      validate.errors = [{ keyword: KEYWORD, message: REASON, params: {} }];
      return false;
    }
    if (context?.parentData !== undefined) {
      (context.parentData as Record<string | number, unknown>)[context.parentDataProperty] = at;
    }
    return true;
  };
  // `type: 'string'`: Ajv runs it with the string keywords, after the type and format checks; a keyword
  // without a type would run first, and the type check would then see the number it wrote.
  ajv.addKeyword({
    keyword: KEYWORD,
    type: 'string',
    modifying: true,
    errors: true,
    schemaType: 'boolean',
    validate,
  });
}
