import type { Ajv } from 'ajv';
import { type TString, Type } from 'typebox';

/**
 * Text a client gives the service to keep (names, descriptions, reasons), as a schema. Lengths count
 * characters (code points). Control characters are refused, since PostgreSQL cannot store U+0000 and the
 * others only garble logs and terminals; so are lone surrogates (half of a UTF-16 pair), which no UTF-8
 * store keeps as sent. Multi-line text may hold tabs and line breaks; a single line none (U+2028 and U+2029,
 * Unicode's line and paragraph separators, included). Text that must not be empty
 * (`minLength` 1 or more) must hold something visible: white space and zero-width characters alone are
 * as empty as nothing (a blank username would match any blank name).
 *
 * The exact rule is checked by the `x-text` keyword (taught to Ajv by `addTextKeyword`), with a Unicode
 * regular expression. The schema's `pattern` is the rule as every regular-expression dialect reads it
 * (client validators in Python, Rust, Java: plain `\uXXXX` ranges, no property classes, no surrogates, no
 * look-around), for the OpenAPI document: the same rule on the Basic Multilingual Plane, looser only in
 * what it cannot say portably (a lone surrogate; text made only of blank characters beyond U+FFFF).
 */
export interface TextOptions {
  readonly minLength?: number;
  readonly maxLength: number;
  readonly multiline?: boolean;
  readonly description: string;
  readonly example?: string;
}

const KEYWORD = 'x-text';
type TextMode = 'line' | 'lines' | 'visible-line' | 'visible-lines';

/** C1 controls, bidirectional overrides and isolates (text that reorders what follows it), lone surrogates. */
const ALWAYS_REFUSED = '\\u007f-\\u009f\\u202a-\\u202e\\u2066-\\u2069\\ud800-\\udfff';
/** A line holds no line break: Unicode's line and paragraph separators (U+2028, U+2029) are ones too. */
const CONTROLS = `\\u0000-\\u001f\\u2028\\u2029${ALWAYS_REFUSED}`;
const CONTROLS_BUT_LINE_BREAKS = `\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f${ALWAYS_REFUSED}`;
/**
 * White space, and the characters that show nothing: Unicode's default-ignorable ones (zero-width space
 * and joiners, soft hyphen, Hangul fillers, bidi marks, variation selectors, BOM...) and the blank braille
 * pattern.
 */
const BLANK = '[\\s\\p{Default_Ignorable_Code_Point}\\u2800]';

/** The exact rule of a mode, as a Unicode regular expression. */
function exactRule(mode: TextMode): RegExp {
  const allowed = `[^${mode.endsWith('lines') ? CONTROLS_BUT_LINE_BREAKS : CONTROLS}]`;
  return new RegExp(`^${mode.startsWith('visible') ? `(?!${BLANK}*$)` : ''}${allowed}*$`, 'u');
}

const EXACT: Record<TextMode, RegExp> = {
  line: exactRule('line'),
  lines: exactRule('lines'),
  'visible-line': exactRule('visible-line'),
  'visible-lines': exactRule('visible-lines'),
};

const hex = (code: number) => `\\u${code.toString(16).padStart(4, '0')}`;

/** The code points of the Basic Multilingual Plane (surrogates left out) where `test` holds, as class ranges. */
function bmpRanges(test: (character: string) => boolean): string {
  let ranges = '';
  let start = -1;
  for (let code = 0; code <= 0x10000; code++) {
    const inside = code < 0x10000 && (code < 0xd800 || code > 0xdfff) && test(String.fromCharCode(code));
    if (inside && start < 0) start = code;
    if (!inside && start >= 0) {
      ranges += code - 1 === start ? hex(start) : `${hex(start)}-${hex(code - 1)}`;
      start = -1;
    }
  }
  return ranges;
}

/**
 * The portable pattern of a mode, computed from the exact rule so that the two cannot drift: each class a
 * list of `\uXXXX` ranges. Visible text is blank characters, then a visible one, then any allowed ones: one
 * way to match any text, so the pattern takes linear time.
 */
function portablePattern(mode: TextMode): string {
  const refused = new RegExp(`[${mode.endsWith('lines') ? CONTROLS_BUT_LINE_BREAKS : CONTROLS}]`, 'u');
  const blank = new RegExp(BLANK, 'u');
  const refusedRanges = bmpRanges((character) => refused.test(character));
  if (!mode.startsWith('visible')) return `^[^${refusedRanges}]*$`;
  const blankAllowed = bmpRanges((character) => blank.test(character) && !refused.test(character));
  const blankOrRefused = bmpRanges((character) => blank.test(character) || refused.test(character));
  return `^[${blankAllowed}]*[^${blankOrRefused}][^${refusedRanges}]*$`;
}

const PORTABLE = new Map<TextMode, string>();
const portable = (mode: TextMode): string => {
  let pattern = PORTABLE.get(mode);
  if (pattern === undefined) {
    pattern = portablePattern(mode);
    PORTABLE.set(mode, pattern);
  }
  return pattern;
};

export function Text({
  minLength = 0,
  maxLength,
  multiline = false,
  description,
  example,
}: TextOptions): TString {
  const nonBlank = minLength > 0;
  const mode: TextMode = `${nonBlank ? 'visible-' : ''}${multiline ? 'lines' : 'line'}`;
  const length = minLength === 0 ? `at most ${maxLength}` : `${minLength} to ${maxLength}`;
  return Type.String({
    minLength,
    maxLength,
    pattern: portable(mode),
    [KEYWORD]: mode,
    'x-reason':
      `must be text of ${length} characters${nonBlank ? ', not only spaces,' : ''} without control characters` +
      (multiline ? ' (tabs and line breaks are allowed)' : ''),
    description,
    ...(example === undefined ? {} : { example }),
  });
}

/** Whether `value` is text that `Text(options)` takes: for input that comes by another way (the command line). */
export function fitsText(value: string, options: Omit<TextOptions, 'description' | 'example'>): boolean {
  const { minLength = 0, maxLength, multiline = false } = options;
  const length = [...value].length;
  const mode: TextMode = `${minLength > 0 ? 'visible-' : ''}${multiline ? 'lines' : 'line'}`;
  return length >= minLength && length <= maxLength && EXACT[mode].test(value);
}

/** Teaches an Ajv instance the text keyword: the exact rule of the schema's mode. */
export function addTextKeyword(ajv: Ajv): void {
  ajv.addKeyword({
    keyword: KEYWORD,
    type: 'string',
    schemaType: 'string',
    errors: false,
    validate: (mode: TextMode, data: string) => EXACT[mode]?.test(data) ?? false,
  });
}
