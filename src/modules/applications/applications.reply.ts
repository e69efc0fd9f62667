import type { KeyStatus } from './application-keys.service.js';
import type { ApplicationDetailWire, ApplicationWire, KeyStatusWire } from './applications.schemas.js';
import type { ApplicationDetail, ApplicationRecord } from './applications.service.js';

const time = (ms: number): string => new Date(ms).toISOString();
const timeOrNull = (ms: number | null | undefined): string | null => (ms == null ? null : time(ms));

/** An application as the interface's DeveloperApplication. */
export function applicationWire(application: ApplicationRecord): ApplicationWire {
  return {
    id: application.id,
    name: application.name,
    description: application.description,
    owner: application.owner,
    grants: [...application.grants],
    applied_at: time(application.appliedAt),
    currentState: application.state,
  };
}

/** Where a key stands (never the key). */
export function keyStatusWire(key: KeyStatus): KeyStatusWire {
  return {
    state: key.state,
    made_at: time(key.madeAt),
    collected_at: timeOrNull(key.state === 'uncollected' ? null : key.collectedAt),
    last_used_at: timeOrNull(key.state === 'active' ? key.lastUsedAt : null),
    ended_at: timeOrNull(key.state === 'ended' ? key.endedAt : null),
    ended_reason: key.state === 'ended' ? key.reason : null,
  };
}

/** An application with its history and its key's state. */
export function applicationDetailWire(application: ApplicationDetail): ApplicationDetailWire {
  return {
    ...applicationWire(application),
    history: application.history.map((entry) => ({
      from: entry.from,
      to: entry.to,
      at: time(entry.at),
      actor: entry.actor,
      reason: entry.reason,
    })),
    key: application.key && keyStatusWire(application.key),
  };
}
