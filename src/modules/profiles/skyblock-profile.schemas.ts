import { Type } from 'typebox';
import { asSentBy, MapOf, OpenObject, refTo } from '../../platform/open-object.js';

/*
 * A SkyBlock profile, as the OpenAPI document names its commonly used fields (components SkyBlockProfile and
 * SkyBlockMember), from the fields bots read and the captured reply in test/fixtures/hypixel. Every field
 * is optional and every object open: the service sends the profiles as Hypixel sent them (profiles.reply.ts:
 * the cached bytes, no serializer), and checks no field. Numbers are `number` (Hypixel's are doubles:
 * purses and skill experience are fractional); the large sections (slayer, dungeons, pets) stay untyped.
 */

/** What every component here says of its types. */
const AS_HYPIXEL_SENT = asSentBy('Hypixel');

const amount = (description?: string) => Type.Number(description ? { description } : {});
const untyped = (description: string) => Type.Unknown({ description: `${description} Not typed here.` });

export const SkyBlockMemberSchema = OpenObject(
  {
    player_id: Type.String({ description: "The member's Minecraft UUID, undashed." }),
    profile: OpenObject({
      first_join: amount('When the member joined the profile (epoch milliseconds).'),
      bank_account: amount("Coins in the member's personal bank."),
      deletion_notice: untyped(
        'Present when the member left the profile or was removed from it (its `timestamp`).',
      ),
    }),
    currencies: OpenObject({
      coin_purse: amount('Coins in the purse (not always whole).'),
      motes_purse: amount("Motes in the purse (the Rift's currency)."),
    }),
    leveling: OpenObject({
      experience: amount('SkyBlock experience: the SkyBlock level is a hundredth of it.'),
    }),
    fairy_soul: OpenObject({
      total_collected: amount('Fairy souls found.'),
      unspent_souls: amount('Fairy souls not yet exchanged.'),
    }),
    player_data: OpenObject({
      experience: MapOf(
        Type.Number(),
        'Skill experience by skill (`SKILL_COMBAT`, `SKILL_MINING`...); absent when the player hides their skills.',
      ),
    }),
    slayer: untyped('Slayer bosses: experience and kills by boss.'),
    dungeons: untyped('The Catacombs: classes, floors completed, experience.'),
    pets_data: untyped('Pets: `pets_data.pets`, each with its type, tier and experience.'),
    player_stats: untyped('Kills, deaths and other counters by name.'),
  },
  {
    $id: 'SkyBlockMember',
    description: `A member of a SkyBlock profile (\`members[uuid]\`). ${AS_HYPIXEL_SENT}`,
  },
);

export const SkyBlockProfileSchema = OpenObject(
  {
    profile_id: Type.String({ description: "The profile's ID (a UUID)." }),
    cute_name: Type.String({ description: "The profile's name in game (a fruit: `Apple`, `Banana`...)." }),
    selected: Type.Boolean({ description: 'True for the profile the player has selected.' }),
    game_mode: Type.String({
      description: "The profile's special mode (`ironman`, `island`, `bingo`...); absent for a classic one.",
    }),
    members: MapOf(refTo(SkyBlockMemberSchema), "The profile's members, by their Minecraft UUID (undashed)."),
    banking: OpenObject(
      {
        balance: amount('Coins in the bank.'),
        transactions: Type.Array(Type.Unknown(), { description: 'The latest deposits and withdrawals.' }),
      },
      { description: "The profile's bank; absent when its members hide their banking." },
    ),
    community_upgrades: untyped("The profile's community shop upgrades."),
  },
  {
    $id: 'SkyBlockProfile',
    description: `A SkyBlock profile (an item of \`profiles\` of Hypixel's \`/v2/skyblock/profiles\`). ${AS_HYPIXEL_SENT}`,
  },
);

/** The shared schemas of the profiles, each a component of the document (the module gives them to the app). */
export const SKYBLOCK_PROFILE_SCHEMAS = [SkyBlockMemberSchema, SkyBlockProfileSchema];
