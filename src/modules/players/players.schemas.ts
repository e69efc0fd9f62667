import { Type } from 'typebox';
import { resultShape } from '../../upstream/upstream-result.js';

export const PlayerResultSchema = resultShape(
  'player',
  Type.Unknown({ description: 'The Hypixel player object as the upstream sent it; null on failure.' }),
  'PlayerResult. Success: 200 `{success: true, throttle: false, player}`. Failures in this shape: 404 unknown username or a ' +
    'player who never joined; 429 throttled (with Retry-After); 502 upstream error or garbage; 503 upstream unreachable; ' +
    '504 upstream timeout. Headers: X-Cache (HIT, MISS, STALE), Age, Cache-Control.',
);
