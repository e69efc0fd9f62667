import type { components } from './schema.js';

/**
 * The Hypixel objects the service passes through as Hypixel sent them, by the names of the document's
 * components (generated into schema.ts): the commonly used fields typed and described, every field optional
 * (Hypixel leaves out what a player never did), and any other field `unknown`, to be narrowed by the
 * caller. The types are Hypixel's usual ones, which Hypixel does not guarantee: the service checks none.
 */
type Schemas = components['schemas'];

/** The Hypixel player object (`player` of `GET /player/{player}`). */
export type HypixelPlayer = Schemas['HypixelPlayer'];
/** `stats` of the player: by game. */
export type PlayerStats = Schemas['PlayerStats'];
export type BedwarsStats = Schemas['BedwarsStats'];
export type SkyWarsStats = Schemas['SkyWarsStats'];
export type DuelsStats = Schemas['DuelsStats'];
export type MurderMysteryStats = Schemas['MurderMysteryStats'];

/** A SkyBlock profile (an item of `profiles` of `GET /gamemode/profiles/{player}`). */
export type SkyBlockProfile = Schemas['SkyBlockProfile'];
/** A member of a SkyBlock profile (`members[uuid]`). */
export type SkyBlockMember = Schemas['SkyBlockMember'];
