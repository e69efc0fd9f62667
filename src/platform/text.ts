import { type TString, Type } from 'typebox';

/**
 * Text a client gives the service to keep (names, descriptions, reasons), as a schema. Lengths count
 * characters (code points). Control characters are refused, since PostgreSQL cannot store U+0000 and the
 * others only garble logs and terminals; so are lone surrogates (half of a UTF-16 pair), which no UTF-8
 * store keeps as sent. Multi-line text may hold tabs and line breaks.
 */
export interface TextOptions {
  readonly minLength?: number;
  readonly maxLength: number;
  readonly multiline?: boolean;
  /** Must hold something other than white space. */
  readonly nonBlank?: boolean;
  readonly description: string;
  readonly example?: string;
}

const CONTROLS = '\\u0000-\\u001f\\u007f\\ud800-\\udfff';
const CONTROLS_BUT_LINE_BREAKS = '\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f\\ud800-\\udfff';

export function Text({
  minLength = 0,
  maxLength,
  multiline = false,
  nonBlank = false,
  description,
  example,
}: TextOptions): TString {
  const allowed = `[^${multiline ? CONTROLS_BUT_LINE_BREAKS : CONTROLS}]`;
  const length = minLength === 0 ? `at most ${maxLength}` : `${minLength} to ${maxLength}`;
  return Type.String({
    minLength,
    maxLength,
    pattern: `^${nonBlank ? '(?!\\s*$)' : ''}${allowed}*$`,
    'x-reason':
      `must be text of ${length} characters${nonBlank ? ', not only spaces,' : ''} without control characters` +
      (multiline ? ' (tabs and line breaks are allowed)' : ''),
    description,
    ...(example === undefined ? {} : { example }),
  });
}
