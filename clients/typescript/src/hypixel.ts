/**
 * Hand-written types for the commonly used fields of the Hypixel objects the service passes through as
 * Hypixel sent them (the document types them as open objects). Every field is optional, since Hypixel
 * leaves out what a player never did; anything not named here is `unknown`, to be narrowed by the caller.
 */

/** An open object: the named fields typed, every other `unknown`. */
type Open<T> = T & { readonly [field: string]: unknown };

export type BedwarsStats = Open<{
  Experience?: number;
  coins?: number;
  winstreak?: number;
  games_played_bedwars?: number;
  wins_bedwars?: number;
  losses_bedwars?: number;
  kills_bedwars?: number;
  deaths_bedwars?: number;
  final_kills_bedwars?: number;
  final_deaths_bedwars?: number;
  beds_broken_bedwars?: number;
  beds_lost_bedwars?: number;
  resources_collected_bedwars?: number;
  iron_resources_collected_bedwars?: number;
  gold_resources_collected_bedwars?: number;
  diamond_resources_collected_bedwars?: number;
  emerald_resources_collected_bedwars?: number;
}>;

export type SkyWarsStats = Open<{
  skywars_experience?: number;
  coins?: number;
  wins?: number;
  losses?: number;
  kills?: number;
  deaths?: number;
  games_played_skywars?: number;
  win_streak?: number;
}>;

export type DuelsStats = Open<{
  coins?: number;
  wins?: number;
  losses?: number;
  kills?: number;
  deaths?: number;
  games_played_duels?: number;
  current_winstreak?: number;
  best_overall_winstreak?: number;
}>;

export type MurderMysteryStats = Open<{
  coins?: number;
  wins?: number;
  games?: number;
  kills?: number;
  deaths?: number;
}>;

export type PlayerStats = Open<{
  Bedwars?: BedwarsStats;
  SkyWars?: SkyWarsStats;
  Duels?: DuelsStats;
  MurderMystery?: MurderMysteryStats;
  Arcade?: Open<{ coins?: number }>;
  TNTGames?: Open<{ coins?: number; wins?: number }>;
  UHC?: Open<{ coins?: number; wins?: number; kills?: number; deaths?: number; score?: number }>;
  Pit?: Open<{ profile?: Open<{ xp?: number }>; pit_stats_ptl?: Open<{ kills?: number; deaths?: number }> }>;
  SkyBlock?: Open<{ profiles?: Readonly<Record<string, Open<{ profile_id?: string; cute_name?: string }>>> }>;
}>;

/** The Hypixel player object (`player` of `GET /player/{player}`). */
export type HypixelPlayer = Open<{
  _id?: string;
  /** The undashed Minecraft UUID. */
  uuid?: string;
  displayname?: string;
  playername?: string;
  knownAliases?: readonly string[];
  /** Epoch milliseconds. */
  firstLogin?: number;
  lastLogin?: number;
  lastLogout?: number;
  /** Network experience: the network level is derived from it. */
  networkExp?: number;
  karma?: number;
  achievementPoints?: number;
  rank?: string;
  packageRank?: string;
  newPackageRank?: string;
  monthlyPackageRank?: string;
  rankPlusColor?: string;
  monthlyRankColor?: string;
  prefix?: string;
  userLanguage?: string;
  mostRecentGameType?: string;
  channel?: string;
  achievements?: Readonly<Record<string, number>>;
  achievementsOneTime?: readonly unknown[];
  /** `links.DISCORD` is what the service's link verification compares with a Discord username. */
  socialMedia?: Open<{
    links?: Open<{ DISCORD?: string; TWITTER?: string; YOUTUBE?: string; TWITCH?: string; HYPIXEL?: string }>;
    prompt?: boolean;
  }>;
  stats?: PlayerStats;
}>;

/** A member of a SkyBlock profile (`members[uuid]`). */
export type SkyBlockMember = Open<{
  player_id?: string;
  profile?: Open<{ first_join?: number; bank_account?: number; deletion_notice?: unknown }>;
  currencies?: Open<{ coin_purse?: number; motes_purse?: number }>;
  leveling?: Open<{ experience?: number }>;
  fairy_soul?: Open<{ total_collected?: number; unspent_souls?: number }>;
  player_data?: Open<{ experience?: Readonly<Record<string, number>> }>;
  slayer?: unknown;
  dungeons?: unknown;
  pets_data?: unknown;
  player_stats?: unknown;
}>;

/** A SkyBlock profile (an item of `profiles` of `GET /gamemode/profiles/{player}`). */
export type SkyBlockProfile = Open<{
  profile_id?: string;
  cute_name?: string;
  selected?: boolean;
  game_mode?: string;
  members?: Readonly<Record<string, SkyBlockMember>>;
  banking?: Open<{ balance?: number; transactions?: readonly unknown[] }>;
  community_upgrades?: unknown;
}>;
