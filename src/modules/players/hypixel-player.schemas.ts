import { Type } from 'typebox';
import { asSentBy, MapOf, OpenObject, refTo } from '../../platform/open-object.js';

/*
 * The Hypixel player object, as the OpenAPI document names its commonly used fields (components
 * HypixelPlayer, PlayerStats and the stats of the most played games), from the fields bots read and the
 * captured replies in test/fixtures/hypixel. Every field is optional and every object open: the service sends
 * the object as Hypixel sent it (players.reply.ts: the cached bytes, no serializer), and checks no field.
 *
 * A field is typed only where Hypixel's type has held; numbers are `number`, never `integer` (Hypixel's are
 * doubles: `1.6045258E8`, fractional experience). `achievementsOneTime` keeps its items untyped: Hypixel has
 * served arrays inside it (HypixelDev/PublicAPI#659, where Hypixel says it cannot guarantee the types of the
 * player data, which is its database's as stored).
 */

/** What every component here says of its types. */
const AS_HYPIXEL_SENT = asSentBy('Hypixel');

const count = (description?: string) => Type.Number(description ? { description } : {});
const text = (description?: string) => Type.String(description ? { description } : {});
const epochMs = (description: string) => Type.Number({ description: `${description} (epoch milliseconds).` });

export const BedwarsStatsSchema = OpenObject(
  {
    Experience: count('Bed Wars experience, from which the Bed Wars level (stars) is derived.'),
    coins: count(),
    winstreak: count('The current win streak.'),
    games_played_bedwars: count(),
    wins_bedwars: count(),
    losses_bedwars: count(),
    kills_bedwars: count(),
    deaths_bedwars: count(),
    final_kills_bedwars: count(),
    final_deaths_bedwars: count(),
    beds_broken_bedwars: count(),
    beds_lost_bedwars: count(),
    resources_collected_bedwars: count(),
    iron_resources_collected_bedwars: count(),
    gold_resources_collected_bedwars: count(),
    diamond_resources_collected_bedwars: count(),
    emerald_resources_collected_bedwars: count(),
  },
  {
    $id: 'BedwarsStats',
    description: `Bed Wars statistics (\`stats.Bedwars\`): all modes together; per mode under prefixed names (\`eight_one_wins_bedwars\`). ${AS_HYPIXEL_SENT}`,
  },
);

export const SkyWarsStatsSchema = OpenObject(
  {
    skywars_experience: count('SkyWars experience, from which the SkyWars level is derived.'),
    coins: count(),
    wins: count(),
    losses: count(),
    kills: count(),
    deaths: count(),
    games_played_skywars: count(),
    win_streak: count('The current win streak.'),
  },
  { $id: 'SkyWarsStats', description: `SkyWars statistics (\`stats.SkyWars\`). ${AS_HYPIXEL_SENT}` },
);

export const DuelsStatsSchema = OpenObject(
  {
    coins: count(),
    wins: count(),
    losses: count(),
    kills: count(),
    deaths: count(),
    games_played_duels: count(),
    current_winstreak: count('The current win streak, all duels together.'),
    best_overall_winstreak: count('The best win streak, all duels together.'),
  },
  { $id: 'DuelsStats', description: `Duels statistics (\`stats.Duels\`). ${AS_HYPIXEL_SENT}` },
);

export const MurderMysteryStatsSchema = OpenObject(
  {
    coins: count(),
    wins: count(),
    games: count('Games played.'),
    kills: count(),
    deaths: count(),
  },
  {
    $id: 'MurderMysteryStats',
    description: `Murder Mystery statistics (\`stats.MurderMystery\`). ${AS_HYPIXEL_SENT}`,
  },
);

export const PlayerStatsSchema = OpenObject(
  {
    Bedwars: refTo(BedwarsStatsSchema),
    SkyWars: refTo(SkyWarsStatsSchema),
    Duels: refTo(DuelsStatsSchema),
    MurderMystery: refTo(MurderMysteryStatsSchema),
    Arcade: OpenObject({ coins: count() }),
    TNTGames: OpenObject({ coins: count(), wins: count() }),
    UHC: OpenObject({
      coins: count(),
      wins: count(),
      kills: count(),
      deaths: count(),
      score: count('UHC score, from which the UHC star is derived.'),
    }),
    Pit: OpenObject({
      profile: OpenObject({
        xp: count('The Pit experience, from which the prestige and level are derived.'),
      }),
      pit_stats_ptl: OpenObject(
        { kills: count(), deaths: count() },
        { description: "The Pit's statistics." },
      ),
    }),
    SkyBlock: OpenObject({
      profiles: MapOf(
        OpenObject({
          profile_id: text("The profile's ID."),
          cute_name: text("The profile's name in game (a fruit: `Apple`, `Banana`...)."),
        }),
        "The player's SkyBlock profiles by ID (undashed): each profile's ID and name. The profiles themselves: " +
          '`GET /gamemode/profiles/{player}`.',
      ),
    }),
  },
  {
    $id: 'PlayerStats',
    description: `The player's statistics, by game as Hypixel names them (\`Bedwars\`, \`SkyWars\`, \`Walls3\`...). ${AS_HYPIXEL_SENT}`,
  },
);

export const HypixelPlayerSchema = OpenObject(
  {
    _id: text("Hypixel's ID of the player's record."),
    uuid: text("The player's Minecraft UUID, undashed."),
    displayname: text("The player's username, as written in Minecraft (as of their last login)."),
    playername: text('The username in lower case.'),
    knownAliases: Type.Array(Type.String(), { description: 'The usernames the player has had on Hypixel.' }),
    firstLogin: epochMs("The player's first login"),
    lastLogin: epochMs(
      'Their last login; absent when the player hides their online status, like `lastLogout`',
    ),
    lastLogout: epochMs('Their last logout'),
    networkExp: count('Network experience, from which the network level is derived; not always whole.'),
    karma: count(),
    achievementPoints: count(),
    rank: text(
      'A staff or special rank (`ADMIN`, `GAME_MASTER`, `YOUTUBER`...); absent (or `NORMAL`) otherwise.',
    ),
    packageRank: text(
      "The rank bought, on older players' records (`VIP`...`MVP_PLUS`); see `newPackageRank`.",
    ),
    newPackageRank: text('The rank bought: `VIP`, `VIP_PLUS`, `MVP`, `MVP_PLUS` (or `NONE`).'),
    monthlyPackageRank: text('`SUPERSTAR` while the player has MVP++; `NONE` otherwise.'),
    rankPlusColor: text('The colour of the `+` of an MVP+ or MVP++ rank (`RED`, `GOLD`...).'),
    monthlyRankColor: text("The colour of an MVP++ rank's name (`GOLD` or `AQUA`)."),
    prefix: text('A prefix that replaces the rank, with Minecraft formatting codes (`§`), on a few records.'),
    userLanguage: text('The language chosen in game (`ENGLISH`...).'),
    mostRecentGameType: text('The type of the last game played (`BEDWARS`, `SKYWARS`...).'),
    channel: text('The chat channel the player last talked in (`ALL`, `PARTY`, `GUILD`...).'),
    achievements: MapOf(
      Type.Number(),
      "Tiered achievements' progress, by achievement name (`bedwars_level`, `general_wins`...).",
    ),
    achievementsOneTime: Type.Array(Type.Unknown(), {
      description:
        'The names of the one-time achievements earned. Not typed: Hypixel has served other values than names in it (arrays).',
    }),
    socialMedia: OpenObject(
      {
        links: OpenObject(
          {
            DISCORD: text(
              'The Discord username the player set in game: what linking an account with `verify: true` ' +
                "(`POST /messenger/user/{snowflake}/accounts`) compares with the user's.",
            ),
            TWITTER: text(),
            YOUTUBE: text(),
            TWITCH: text(),
            HYPIXEL: text("A link to the player's hypixel.net forums profile."),
          },
          { description: 'The accounts the player linked in game, by network.' },
        ),
        prompt: Type.Boolean(),
      },
      { description: "The player's social media, as they set them in game." },
    ),
    stats: refTo(PlayerStatsSchema),
  },
  {
    $id: 'HypixelPlayer',
    description:
      `A Hypixel player (\`player\` of Hypixel's \`/v2/player\`). ${AS_HYPIXEL_SENT} ` +
      'An integer beyond 2^53 keeps its digits (the TypeScript client reads it as a string).',
  },
);

/** The shared schemas of the player, each a component of the document (the module gives them to the app). */
export const HYPIXEL_PLAYER_SCHEMAS = [
  BedwarsStatsSchema,
  SkyWarsStatsSchema,
  DuelsStatsSchema,
  MurderMysteryStatsSchema,
  PlayerStatsSchema,
  HypixelPlayerSchema,
];
