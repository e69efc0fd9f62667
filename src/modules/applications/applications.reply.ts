import type { ApplicationDetailWire, ApplicationWire } from './applications.schemas.js';
import type { ApplicationDetail, ApplicationRecord, TransitionResult } from './applications.service.js';

const time = (ms: number): string => new Date(ms).toISOString();

/** An application as SPEC.md's DeveloperApplication. */
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

/** An application with its history. */
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
  };
}

/** A change's answer: the application, and on approval its credential. */
export function transitionWire({ application, credential }: TransitionResult): ApplicationDetailWire {
  const wire = applicationDetailWire(application);
  return credential
    ? { ...wire, credential: { token: credential.token, expires_at: credential.expiresAt.toISOString() } }
    : wire;
}
