/**
 * The explorer (/docs/ui) shows an answer's JSON by parsing it and printing it again, which rounds every
 * integer beyond 2^53: an application's `owner` 234567890123456789 showed as 234567890123456780. This
 * script, loaded by the explorer after Swagger UI's bundle and before it starts, adds a plugin to every
 * Swagger UI it makes: while the response body renders, JSON.parse keeps such an integer's digits
 * (JSON.rawJSON, so JSON.stringify prints them as they came). Anywhere else JSON.parse is left alone: the
 * explorer's own state must hold plain numbers. A browser without JSON.rawJSON keeps the rounding.
 *
 * It is browser code: it runs as written, so it stays plain JavaScript of 2022 with no imports.
 */
function explorerExactIds(): void {
  type Browser = typeof globalThis & {
    SwaggerUIBundle?: ((config: Record<string, unknown>) => unknown) & Record<string, unknown>;
  };
  type RawJson = JSON & { rawJSON?: (text: string) => unknown };
  type Reviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown;
  type Component = new (...args: unknown[]) => { render(): unknown };

  const browser = globalThis as Browser;
  const json = JSON as RawJson;
  const original = browser.SwaggerUIBundle;
  const rawJson = json.rawJSON;
  if (!original || !rawJson) return;

  const parse = JSON.parse;
  let rendering = 0;
  const exact: Reviver = (_key, value, context) =>
    typeof value === 'number' &&
    !Number.isSafeInteger(value) &&
    context?.source !== undefined &&
    /^-?\d+$/.test(context.source)
      ? rawJson(context.source)
      : value;
  JSON.parse = function (this: unknown, text: string, reviver?: Reviver) {
    return rendering > 0 && reviver === undefined
      ? parse.call(JSON, text, exact as never)
      : parse.call(JSON, text, reviver as never);
  } as typeof JSON.parse;

  const plugin = () => ({
    wrapComponents: {
      responseBody: (Original: Component) =>
        class extends Original {
          override render() {
            rendering += 1;
            try {
              return super.render();
            } finally {
              rendering -= 1;
            }
          }
        },
    },
  });
  const wrapped = (config: Record<string, unknown>) =>
    original({ ...config, plugins: [...((config.plugins as unknown[]) ?? []), plugin] });
  browser.SwaggerUIBundle = Object.assign(wrapped, original);
}

/** The script's source, served by the explorer as a theme script. */
export const EXPLORER_EXACT_IDS_JS = `(${explorerExactIds.toString()})();\n`;
