import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ErrorKinds } from './errors.js';

/** The encodings the service compresses answers in, the preferred first. */
export const CONTENT_ENCODINGS = ['br', 'gzip'] as const;
export type ContentEncoding = (typeof CONTENT_ENCODINGS)[number];

/**
 * Brotli quality 5: about as small as gzip's best at a fraction of Brotli's top quality's time (a 917 KB
 * player: 13.4% of its bytes in about 20 ms, against 10.5% in 1.2 s at quality 11).
 */
const BROTLI_QUALITY = 5;
const GZIP_LEVEL = 6;

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/** Brotli's copy of JSON text at `quality`, in zlib's thread pool (off the event loop). */
const brotliAt = (bytes: Buffer, quality: number): Promise<Buffer> =>
  brotli(bytes, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: quality,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
    },
  });

/** The bytes compressed in `encoding`, in zlib's thread pool (off the event loop). */
export function compress(bytes: Buffer, encoding: ContentEncoding): Promise<Buffer> {
  return encoding === 'br' ? brotliAt(bytes, BROTLI_QUALITY) : gzipped(bytes, { level: GZIP_LEVEL });
}

/**
 * Brotli quality 10: the smallest copy Brotli makes of the players measured (the typical player 28.9% of its
 * bytes, against 29.4% at 11 and 33.1% at 5; the large one 19.7%, against 19.0% at 11 and 23.7% at 5), at
 * 10 to 25 times quality 5's time. Made in the background for copies that stay (`compressSmallest`).
 */
const BROTLI_BEST_QUALITY = 10;

/**
 * The encodings whose first copy (`compress`) is well above the smallest their coding makes: gzip's level 6
 * is within 1.5% of its level 9, Brotli's quality 5 up to 1.25 times quality 10's size.
 */
export const REFINABLE_ENCODINGS: ReadonlySet<ContentEncoding> = new Set(['br']);

/** The bytes compressed in `encoding` as small as it makes them, in zlib's thread pool (slow: see above). */
export function compressSmallest(bytes: Buffer, encoding: ContentEncoding): Promise<Buffer> {
  return encoding === 'br'
    ? brotliAt(bytes, BROTLI_BEST_QUALITY)
    : gzipped(bytes, { level: constants.Z_BEST_COMPRESSION });
}

/** A qvalue as RFC 9110 (12.4.2) writes it: 0 to 1, at most three decimals. */
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/**
 * The encoding to answer in, by the request's `Accept-Encoding` (RFC 9110, 12.5.3); none: identity.
 * Codings are compared without regard to case, `x-gzip` is gzip; a coding's own entry counts before `*`,
 * which speaks only for the codings not listed; q=0 refuses; the highest q wins, Brotli on a tie. An entry
 * with a malformed q is ignored.
 */
export function preferredEncoding(
  acceptEncoding: string | string[] | undefined,
): ContentEncoding | undefined {
  if (typeof acceptEncoding !== 'string' || acceptEncoding === '') return undefined;
  // Already read once (`readAcceptEncodingOnce` leaves its verdict), or a client naming one coding.
  if (acceptEncoding === 'br' || acceptEncoding === 'gzip') return acceptEncoding;
  if (acceptEncoding === 'identity') return undefined;
  const weights = new Map<string, number>();
  for (const entry of acceptEncoding.split(',')) {
    const [name = '', ...parameters] = entry.split(';');
    let coding = name.trim().toLowerCase();
    if (coding === '') continue;
    if (coding === 'x-gzip') coding = 'gzip';
    let weight = 1;
    for (const parameter of parameters) {
      const [key = '', value = ''] = parameter.split('=').map((part) => part.trim());
      if (key.toLowerCase() === 'q') weight = QVALUE.test(value) ? Number(value) : Number.NaN;
    }
    // A coding listed twice takes its lower weight: a refusal is never cancelled by a repeat.
    if (!Number.isNaN(weight)) weights.set(coding, Math.min(weights.get(coding) ?? 1, weight));
  }
  let chosen: ContentEncoding | undefined;
  let best = 0;
  for (const coding of CONTENT_ENCODINGS) {
    const weight = weights.get(coding) ?? weights.get('*') ?? 0;
    if (weight > best) {
      best = weight;
      chosen = coding;
    }
  }
  return chosen;
}

/**
 * An `onRequest` hook: the request's `Accept-Encoding` replaced by this reading of it (the one encoding to
 * answer in, or `identity`), so that @fastify/compress, which reads `*` as gzip even beside `gzip;q=0`,
 * answers the other routes by the same rule as the cached values.
 */
export function readAcceptEncodingOnce(
  request: FastifyRequest,
  _reply: FastifyReply,
  done: () => void,
): void {
  const given = request.headers['accept-encoding'];
  if (given !== undefined) request.headers['accept-encoding'] = preferredEncoding(given) ?? 'identity';
  done();
}

/** Bodies smaller than this go out as they are: compressing them saves too little to pay for itself. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

/**
 * The options of @fastify/compress for every JSON answer that is not a cached value (those come
 * precompressed): the same encodings, levels and threshold, and no decompression of request bodies (a
 * small compressed body could unpack past the body limit).
 */
export const responseCompressionOptions = {
  global: true,
  globalDecompression: false,
  encodings: [...CONTENT_ENCODINGS],
  threshold: COMPRESSION_THRESHOLD_BYTES,
  brotliOptions: {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
    },
  },
  zlibOptions: { level: GZIP_LEVEL },
};

/** A `charset` parameter's value, quoted or not. */
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i;

/**
 * A JSON body is read as UTF-8 (RFC 8259, 8.1): one whose `Content-Type` names another charset
 * (`charset=utf-16`, `latin1`) would be misread, so it is refused as such (415). No charset, `utf-8` (in any
 * case, quoted or not) and the common misspelling `utf8` are taken.
 */
export function refuseForeignCharset(contentType: string | undefined): void {
  const named = contentType === undefined ? undefined : CHARSET.exec(contentType)?.[1]?.toLowerCase();
  if (named === undefined || named === 'utf-8' || named === 'utf8') return;
  throw AppError.of(ErrorKinds.UNSUPPORTED_MEDIA_TYPE, {
    developerReason:
      'request bodies are read as UTF-8: send Content-Type application/json with charset=utf-8 or no charset',
  });
}

/**
 * Request bodies are taken as sent, never decompressed (a small compressed body could unpack past the body
 * limit): a body in another content coding is refused as such (415), not misread as malformed JSON.
 */
export function refuseEncodedBody(contentEncoding: string | undefined): void {
  if (contentEncoding === undefined || /^\s*(identity\s*)?$/i.test(contentEncoding)) return;
  throw AppError.of(ErrorKinds.UNSUPPORTED_MEDIA_TYPE, {
    developerReason: 'request bodies are taken uncompressed: send no Content-Encoding (or identity)',
    // The codings a request body may come in (RFC 9110, 12.5.3).
    headers: { 'accept-encoding': 'identity' },
  });
}
