import { type TString, Type } from 'typebox';

/**
 * Text a client gives the service to keep (names, descriptions, reasons), as a schema. Lengths count
 * characters (code points). Control characters are refused, since PostgreSQL cannot store U+0000 and the
 * others only garble logs and terminals; so are lone surrogates (half of a UTF-16 pair), which no UTF-8
 * store keeps as sent. Multi-line text may hold tabs and line breaks. Text that must not be empty
 * (`minLength` 1 or more) must hold something visible: white space and zero-width characters alone are
 * as empty as nothing (a blank username would match any blank name).
 */
export interface TextOptions {
  readonly minLength?: number;
  readonly maxLength: number;
  readonly multiline?: boolean;
  readonly description: string;
  readonly example?: string;
}

/** C1 controls, bidirectional overrides and isolates (text that reorders what follows it), lone surrogates. */
const ALWAYS_REFUSED = '\\u007f-\\u009f\\u202a-\\u202e\\u2066-\\u2069\\ud800-\\udfff';
const CONTROLS = `\\u0000-\\u001f${ALWAYS_REFUSED}`;
const CONTROLS_BUT_LINE_BREAKS = `\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f${ALWAYS_REFUSED}`;
/**
 * White space, and the characters that show nothing: Unicode's default-ignorable ones (zero-width space
 * and joiners, soft hyphen, Hangul fillers, bidi marks, variation selectors, BOM...) and the blank braille
 * pattern.
 */
const BLANK = '[\\s\\p{Default_Ignorable_Code_Point}\\u2800]';

export function Text({
  minLength = 0,
  maxLength,
  multiline = false,
  description,
  example,
}: TextOptions): TString {
  const allowed = `[^${multiline ? CONTROLS_BUT_LINE_BREAKS : CONTROLS}]`;
  const nonBlank = minLength > 0;
  const length = minLength === 0 ? `at most ${maxLength}` : `${minLength} to ${maxLength}`;
  return Type.String({
    minLength,
    maxLength,
    pattern: `^${nonBlank ? `(?!${BLANK}*$)` : ''}${allowed}*$`,
    'x-reason':
      `must be text of ${length} characters${nonBlank ? ', not only spaces,' : ''} without control characters` +
      (multiline ? ' (tabs and line breaks are allowed)' : ''),
    description,
    ...(example === undefined ? {} : { example }),
  });
}

/** Whether `value` is text that `Text(options)` takes: for input that comes by another way (the command line). */
export function fitsText(value: string, options: Omit<TextOptions, 'description' | 'example'>): boolean {
  const { minLength, maxLength, pattern } = Text({ ...options, description: '' }) as unknown as {
    minLength: number;
    maxLength: number;
    pattern: string;
  };
  const length = [...value].length;
  return length >= minLength && length <= maxLength && new RegExp(pattern, 'u').test(value);
}
